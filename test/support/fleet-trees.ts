// Emulated hosts for the fleet tests: one sysroot tree per node, written in this process (`emu write` without a
// child), named as the node in its proc/sys/kernel/hostname. A tree is one still instant: an idle host is healthy
// in it, a QP stranded by a lost wake-up stays stranded, an engine halted for good stays halted.
import { join } from 'node:path';
import { emuUnitFromOptions } from '../../src/emu/index.js';
import { closeSysroot, openSysroot, writeSysroot } from '../../src/emu/sysroot.js';
import { emuOptions } from './rendered-host.js';

/** What a node shows: healthy, a QP stranded on engine 1 (SD201), or engine 2 halted (SD102). */
export type NodeKind = 'healthy' | 'stranded' | 'halted';

const SCENARIO: Record<NodeKind, { workload: string; fault: string[]; atMs: number }> = {
  healthy: { workload: 'idle', fault: [], atMs: 20 },
  stranded: { workload: 'qp:load=0.02', fault: ['lost-wakeup@30:1'], atMs: 300 },
  halted: { workload: 'idle', fault: ['halt-stuck@10:2'], atMs: 110 },
};

/** Write `kinds[i]` as node `name(i)` under `root`; the trees' directories are `root/<name>`. */
export async function writeNodes(root: string, kinds: readonly NodeKind[], name: (i: number) => string): Promise<void> {
  for (const [i, kind] of kinds.entries()) {
    const s = SCENARIO[kind];
    const u = emuUnitFromOptions(emuOptions({ engines: 4, workload: s.workload, fault: s.fault }));
    u.runUntilMs(s.atMs);
    const dir = join(root, name(i));
    openSysroot(u, dir, { hostname: name(i) });
    try {
      await writeSysroot(u, dir);
    } finally {
      closeSysroot(u, dir);
    }
  }
}
