// Capturing the emulator: its host is rendered into a private tree (removed afterwards, at exit, and by the next
// run when this one was killed: private-tree.ts), captured
// as a host's would be, and between instants its virtual time runs on and the tree is rendered again.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { EmuUnit } from '../emu/unit.js';
import { Hfi1SdmaError } from '../errors.js';
import { makePrivateTree } from '../private-tree.js';
import { type CaptureOptions, captureSnapshot } from './capture.js';
import type { ManifestV2 } from './format.js';

/** Who captured, and when. */
export type CaptureMeta = { host: string; toolVersion: string; now: Date };

/** Capture the (warmed-up) emulated unit `u` into `out`; `pause` is awaited between instants (a stop signal's check). */
export async function captureEmulatedUnit(
  u: EmuUnit,
  out: string,
  meta: CaptureMeta,
  pace: Pick<CaptureOptions, 'samples' | 'intervalMs' | 'redact'>,
  pause: () => Promise<void> = async () => {},
): Promise<ManifestV2> {
  const { writeSysroot } = await import('../emu/sysroot.js');
  // Created and registered for removal in one turn of the event loop: no signal can fall between them.
  const priv = makePrivateTree('hfi1-sdma-emu-');
  const dir = join(priv.root, 'tree');
  const write = async () => {
    try {
      await writeSysroot(u, dir);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? String(e);
      throw new Hfi1SdmaError(
        'E_IO',
        `cannot write the emulated host under ${tmpdir()} (${code}): free space there, or set TMPDIR to a directory with room`,
        { cause: e },
      );
    }
  };
  try {
    await write();
    return await captureSnapshot(
      dir,
      out,
      { ...meta, emulated: true },
      {
        ...pace,
        clock: { nowMs: () => u.nowMs },
        sleep: async (ms) => {
          await pause();
          u.runUntilMs(u.nowMs + ms);
          await write();
        },
      },
    );
  } finally {
    await priv.remove();
  }
}
