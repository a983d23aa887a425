// The emulated ports' counters in the files a live host has: debugfs portcounter_names and port<N>counters (the
// driver's, debugfs.c), sysfs ports/<N>/hw_counters (the RDMA core's rdma stats of the same names, verbs.c
// hfi_alloc_hw_port_stats), ports/<N>/counters (the RDMA core's PortCounters view, sysfs.c) and ports/<N>/link_layer;
// and the same counters as the contract gives them.
import { join } from 'node:path';
import type { PortCounters } from '../backend.js';
import { HW_STATS_LIFESPAN_TEXT } from './dev-counters.js';
import { FLIT_BYTES, pmaCounterFiles, portCounterNames, portCounterValues } from './port-counters.js';
import type { EmuPort } from './ports.js';
import { countersBinary } from './sdes.js';
import type { TreeWriter } from './tree.js';

/** A port's counters as the contract gives them, from the model. */
export function modelPortCounters(p: EmuPort, nowNs: number): PortCounters {
  const c = p.counters;
  return {
    port: p.port,
    values: {
      xmitWait: BigInt(c.xmitWaitAt(nowNs)),
      xmitData: BigInt(Math.floor(c.xmitBytes / FLIT_BYTES)),
      xmitPackets: BigInt(c.xmitPackets),
      xmitDiscards: BigInt(c.xmitDiscards),
      linkDowned: BigInt(c.linkDowned),
      linkErrorRecovery: BigInt(c.linkErrorRecovery),
      rcvErrors: BigInt(c.rcvErrors),
      dmaWait: BigInt(c.dmaWait),
    },
    sources: {
      xmitWait: 'model',
      xmitData: 'model',
      xmitPackets: 'model',
      xmitDiscards: 'model',
      linkDowned: 'model',
      linkErrorRecovery: 'model',
      rcvErrors: 'model',
      dmaWait: 'model',
    },
    saturated: [],
  };
}

/** A sysfs counter (one short line, read whole): overwritten in place when its length is unchanged. */
const IN_PLACE = true;

/** The port counter names and their portcounter_names text, by receive contexts in use (the same for every port of a unit). */
const namesByContexts = new Map<number, { names: string[]; text: string }>();

function namesOf(rcvContexts: number): { names: string[]; text: string } {
  let n = namesByContexts.get(rcvContexts);
  if (!n) {
    const names = portCounterNames(rcvContexts);
    n = { names, text: names.map((x) => `${x}\n`).join('') };
    namesByContexts.set(rcvContexts, n);
  }
  return n;
}

/**
 * Write every port's counter files: `dbg` is the unit's debugfs directory, `classDir` its sysfs class directory,
 * `rcvContexts` the unit's receive contexts in use (its RcvHdrOvr counters). The driver's counters the model does
 * not move read 0.
 */
export function writePortFiles(
  w: TreeWriter,
  ports: readonly EmuPort[],
  dirs: { dbg: string; classDir: string },
  nowNs: number,
  littleEndian: boolean,
  rcvContexts: number,
): void {
  const { names, text } = namesOf(rcvContexts);
  w.file(join(dirs.dbg, 'portcounter_names'), text);
  for (const p of ports) {
    const values = portCounterValues(p.counters, nowNs, names);
    w.file(join(dirs.dbg, `port${p.port}counters`), countersBinary(values, littleEndian));
    const portDir = join(dirs.classDir, 'ports', String(p.port));
    w.file(join(portDir, 'link_layer'), 'InfiniBand\n');
    for (const [name, text] of pmaCounterFiles(p.counters)) w.file(join(portDir, 'counters', name), text, IN_PLACE);
    // The RDMA core's port hw stats (hfi_alloc_hw_port_stats, verbs.c): every port counter, then `lifespan`.
    for (const [i, name] of names.entries()) w.file(join(portDir, 'hw_counters', name), `${values[i] ?? 0n}\n`, IN_PLACE);
    w.file(join(portDir, 'hw_counters', 'lifespan'), HW_STATS_LIFESPAN_TEXT, IN_PLACE);
  }
}
