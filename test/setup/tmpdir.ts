// vitest global setup: the temporary files of one run (rendered sysroots, unpacked snapshots, Prometheus' data)
// go to a directory of their own, on tmpfs when /dev/shm is one with room, and are removed at the end of the run.
// On a disk file system every create and unlink is a journal write (with `discard`, a trim as well): a rendered
// sysroot is a thousand files, and the suite writes hundreds of them. TMPDIR given by the caller is kept.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const TMPFS_MAGIC = 0x01021994;
/** Room the run needs at most (a few sysroots at once, Prometheus' head block); well above its peak. */
const MIN_FREE_BYTES = 2 * 2 ** 30;

/** /dev/shm when it is a writable tmpfs with room for a run, else the platform's temporary directory. */
function base(): string {
  if (process.env.TMPDIR) return process.env.TMPDIR;
  try {
    const s = statfsSync('/dev/shm');
    if (s.type === TMPFS_MAGIC && s.bavail * s.bsize >= MIN_FREE_BYTES) return '/dev/shm';
  } catch {
    // no /dev/shm (not Linux): the platform's directory
  }
  return tmpdir();
}

export default function setup(): () => void {
  // Each project of the run calls it; the first makes the directory.
  if (process.env.HFI1_SDMA_TEST_TMPDIR) return () => {};
  let dir: string;
  try {
    dir = mkdtempSync(join(base(), 'hfi1-sdma-test-'));
  } catch {
    dir = mkdtempSync(join(tmpdir(), 'hfi1-sdma-test-'));
  }
  // Traversable like /tmp: the tests that run a command as `nobody` reach their trees through it.
  chmodSync(dir, 0o1777);
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  process.env.HFI1_SDMA_TEST_TMPDIR = dir;
  return () => {
    delete process.env.HFI1_SDMA_TEST_TMPDIR;
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
    // One rm -rf (whatever a file left behind); Node's recursive rmSync where rm cannot be run.
    if (spawnSync('rm', ['-rf', '--', dir], { stdio: 'ignore' }).status !== 0) rmSync(dir, { recursive: true, force: true });
  };
}
