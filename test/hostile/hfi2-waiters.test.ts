// hfi2 waiter sources that are not the kernel's files: the ibdev of sys/class/infiniband_verbs/uverbs<N> missing,
// empty, huge, binary, a directory, a FIFO, a link loop; fd links of odd forms (the bracketed anon_inode name,
// ` (deleted)`, numbers too large); qp_stats under hfi2/ replaced by a FIFO or a device. Nothing hangs or throws;
// a handle whose unit cannot be told counts for every unit (never hidden), and a link that is no handle is ignored.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { WaitersSample } from '../../src/backend.js';
import { openHwBackend } from '../../src/hw/index.js';
import { fixture } from '../hw/fixtures.js';
import { writeHfi2Tree } from '../hw/hfi2-tree.js';
import { cli, type Oddity, replaceWith, tempRoots } from './sources-tree.js';

const fresh = tempRoots();
const HFI2_STACK = fixture('proc/psm/stack-blocked').replaceAll('hfi1_', 'hfi2_').replaceAll('[hfi1]', '[hfi2]');

function put(path: string, data: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, data);
}

/** A writer blocked in writev on fd 11 (the fixture's syscall), holding fd links to `targets` (fd 11, 12, …). */
function writer(root: string, pid: number, targets: string[]): void {
  const dir = join(root, 'proc', String(pid));
  mkdirSync(join(dir, 'fd'), { recursive: true });
  for (const [i, t] of targets.entries()) symlinkSync(t, join(dir, 'fd', String(11 + i)));
  put(join(dir, 'stack'), HFI2_STACK);
  put(join(dir, 'syscall'), fixture('proc/psm/syscall-writev'));
  put(join(dir, 'comm'), 'mpi_app\n');
}

async function psmPids(root: string): Promise<{ pids: number[]; s: WaitersSample }> {
  mkdirSync(join(root, 'proc/1/fd'), { recursive: true });
  const b = await openHwBackend({ sysroot: root, clock: { nowMs: () => 0 } });
  try {
    const u = await b.unit(0);
    const s = (await u.waiters?.()) as WaitersSample;
    const pids = s.waiters.map((w) => (w.kind === 'psm' ? w.pid : -1)).sort((a, b) => a - b);
    return { pids, s };
  } finally {
    await b.close();
  }
}

const IBDEV = 'sys/class/infiniband_verbs/uverbs0/ibdev';

describe('an ibdev that cannot name the unit: the handle counts for this unit, nothing hangs', () => {
  const cases: [string, (path: string) => void][] = [
    ['missing', () => {}],
    ['empty', (p) => put(p, '')],
    ['huge (2 MiB)', (p) => put(p, Buffer.alloc(2 << 20, 0x61))],
    ['binary', (p) => put(p, Buffer.from([0xff, 0x00, 0x68, 0x66, 0x69, 0x32, 0x0a]))],
    ['NUL inside the name', (p) => put(p, 'hfi2_1\0\n')],
    ...(['dir', 'fifo', 'loop', 'dangling', 'dev-zero', 'dev-urandom'] as Oddity[]).map((k): [string, (path: string) => void] => [
      `a ${k}`,
      (p) => replaceWith(p, k),
    ]),
    ['uverbs0 itself a link loop', (p) => replaceWith(dirname(p), 'loop')],
  ];
  it.each(cases)('%s', async (_, make) => {
    const root = fresh();
    writeHfi2Tree(root);
    make(join(root, IBDEV));
    writer(root, 4811, ['anon_inode:hfi2-sdma', '/dev/infiniband/uverbs0']);
    const { pids, s } = await psmPids(root);
    expect(pids).toEqual([4811]);
    expect(s.visibility.find((v) => v.kind === 'psm')?.visible).toBe(true);
  });

  it('the control: an ibdev naming the other unit hides the writer from this one', async () => {
    const root = fresh();
    writeHfi2Tree(root);
    put(join(root, IBDEV), 'hfi2_1\n');
    writer(root, 4811, ['anon_inode:hfi2-sdma', '/dev/infiniband/uverbs0']);
    expect((await psmPids(root)).pids).toEqual([]);
  });
});

describe('fd links of odd forms', () => {
  it('bracketed anon_inode and a deleted uverbs node are handles; oversized numbers and look-alikes are not', async () => {
    const root = fresh();
    writeHfi2Tree(root);
    writer(root, 4821, ['anon_inode:[hfi2-sdma]']);
    writer(root, 4822, ['/dev/infiniband/uverbs0 (deleted)']);
    writer(root, 4823, ['/dev/infiniband/uverbs99999999999999999999']);
    writer(root, 4824, ['anon_inode:hfi2-sdma-x', 'anon_inode:[eventpoll]', '/dev/infiniband/uverbs0x']);
    writer(root, 4825, [`/dev/infiniband/uverbs0${' (deleted)'.repeat(300)}`]);
    const fd = join(root, 'proc/4826/fd');
    writer(root, 4826, []);
    symlinkSync('anon_inode:hfi2-sdma', join(fd, '99999999999999999999'));
    symlinkSync('anon_inode:hfi2-sdma', join(fd, '-1'));
    const { pids } = await psmPids(root);
    expect(pids).toEqual([4821, 4822]);
  });

  it('a process directory with an enormous pid and an fd directory that is a file are passed over', async () => {
    const root = fresh();
    writeHfi2Tree(root);
    writer(root, 4831, ['anon_inode:hfi2-sdma']);
    mkdirSync(join(root, 'proc/99999999999999999999/fd'), { recursive: true });
    put(join(root, 'proc/4832/fd'), 'not a directory\n');
    expect((await psmPids(root)).pids).toEqual([4831]);
  });
});

describe('qp_stats under hfi2/ that is not the kernel file', () => {
  it.each(['fifo', 'dev-zero', 'dir', 'loop'] as Oddity[])('%s: qp is not visible, the file named', async (kind) => {
    const root = fresh();
    writeHfi2Tree(root);
    const file = join(root, 'sys/kernel/debug/hfi2/hfi2_0/qp_stats');
    replaceWith(file, kind);
    const { s } = await psmPids(root);
    const qp = s.visibility.find((v) => v.kind === 'qp');
    expect(qp?.visible).toBe(false);
    expect(qp?.reason).toContain(file);
  });
});

describe('a process that names itself with control characters (PR_SET_NAME)', () => {
  it('its command is kept with them escaped, and the waiters report never sends them to a terminal', async () => {
    const root = fresh();
    writeHfi2Tree(root);
    writer(root, 4841, ['anon_inode:hfi2-sdma']);
    put(join(root, 'proc/4841/comm'), '\x1b]0;x\x07\x1b[2Jevil\n');
    const { s } = await psmPids(root);
    expect(s.waiters.map((w) => (w.kind === 'psm' ? w.command : null))).toEqual(['\\x1b]0;x\\x07\\x1b[2Jevil']);
    const r = await cli(root, ['waiters']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('\\x1b[2Jevil');
    expect(r.stdout).not.toContain('\x1b');
  });
});
