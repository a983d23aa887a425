// The emulated ports' counters in the files a live host has: debugfs portcounter_names and port<N>counters (the
// driver's, debugfs.c), sysfs ports/<N>/hw_counters (the RDMA core's rdma stats of the same names, verbs.c
// hfi_alloc_hw_port_stats), ports/<N>/counters (the RDMA core's PortCounters view, sysfs.c) and ports/<N>/link_layer;
// and the same counters as the contract gives them.
import { join } from 'node:path';
import type { PortCounters } from '../backend.js';
import { FLIT_BYTES, HW_COUNTER_FILES, PORT_COUNTER_NAMES, pmaCounterFiles, portCounterValues } from './port-counters.js';
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

/** The portcounter_names text (the same for every port of a unit). */
const NAMES_TEXT = PORT_COUNTER_NAMES.map((n) => `${n}\n`).join('');

/**
 * Write every port's counter files: `dbg` is the unit's debugfs directory, `classDir` its sysfs class directory.
 * The driver's counters the model does not move read 0; hw_counters shows the ones it moves.
 */
export function writePortFiles(
  w: TreeWriter,
  ports: readonly EmuPort[],
  dirs: { dbg: string; classDir: string },
  nowNs: number,
  littleEndian: boolean,
): void {
  w.file(join(dirs.dbg, 'portcounter_names'), NAMES_TEXT);
  for (const p of ports) {
    const values = portCounterValues(p.counters, nowNs);
    w.file(join(dirs.dbg, `port${p.port}counters`), countersBinary(values, littleEndian));
    const portDir = join(dirs.classDir, 'ports', String(p.port));
    w.file(join(portDir, 'link_layer'), 'InfiniBand\n');
    for (const [name, text] of pmaCounterFiles(p.counters)) w.file(join(portDir, 'counters', name), text, IN_PLACE);
    const byName = new Map(PORT_COUNTER_NAMES.map((n, i) => [n, values[i] ?? 0n]));
    for (const name of HW_COUNTER_FILES) w.file(join(portDir, 'hw_counters', name), `${byName.get(name) ?? 0n}\n`, IN_PLACE);
  }
}
