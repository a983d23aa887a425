// The sysroot writer: the layout src/hw reads, in the kernel's formats, so that an emulated host
// reads exactly as a live one. Files are replaced atomically and only when they changed;
// resource0 is a sparse 64 MiB BAR image updated in place so a reader mapping it sees live values
// (tree.ts: how nothing is written through a symlink).

import { endianness, hostname } from 'node:os';
import { join, resolve } from 'node:path';
import {
  ALL_ONES_64,
  BAR0_SIZE,
  CCE_INT_SDMA_REG,
  CCE_INT_STATUS,
  CCE_REVISION,
  PCI_DEVICE_HFI1_DISCRETE,
  PCI_VENDOR_INTEL,
  SDMA_CSR_BLOCK_SIZE,
  SDMA_CSR_BLOCK_START,
  SEND_DMA_ENGINES,
  SEND_DMA_MEM_SIZE,
  SEND_DMA_MEM_SIZE_OBSERVED,
} from '../progress/constants.js';
import { version } from '../version.js';
import { EMU_CCE_REVISION, EMU_CMDLINE, EMU_PCI_IDENTITY, emuContext, portRate } from './context.js';
import { DRIVER_COUNTER_NAMES, HW_STATS_LIFESPAN_TEXT } from './dev-counters.js';
import { kmsgText } from './kmsg.js';
import { writeNetdevFiles } from './netdev-files.js';
import { FLIT_BYTES } from './port-counters.js';
import { writePortFiles } from './port-files.js';
import { portFileTexts } from './ports.js';
import { forgetRdmaAnswer, writeQpOwners } from './qp-owners.js';
import { usedContexts } from './rcv-contexts.js';
import { CSR_OFFSETS, readCsr, sampleEngine } from './sample.js';
import { countersBinary, counterTable, procInterrupts } from './sdes.js';
import { SdesRenderer } from './sdes-render.js';
import {
  cpuListText,
  jkrBarBlocks,
  jkrPciIdentity,
  sysrootPaths,
  unitContexts,
  vlText,
  writeFlavourFiles,
} from './sysroot-flavour.js';
import { traceEventFiles } from './trace-events.js';
import type { TreeWriter } from './tree.js';
import { openTree } from './tree-root.js';
import type { EmuUnit } from './unit.js';
import { qpStatsText, writePsmProc } from './waiter-files.js';

/**
 * The BAR0 bytes the writer owns, as (offset, 8-byte value) pairs: the SDMA CSR block, the SEND_DMA device registers
 * and CCE_REVISION, whose revision fields `boardversion` and `hw_rev` print (chip_registers.h).
 */
export function barRegisters(u: EmuUnit): { block: Buffer; device: [number, bigint][] } {
  const gone = u.host.gone;
  const block = Buffer.alloc(SDMA_CSR_BLOCK_SIZE, gone ? 0xff : 0);
  if (!gone) {
    for (const c of u.chips) {
      for (const base of CSR_OFFSETS) {
        block.writeBigUInt64LE(readCsr(c, gone, base), base - SDMA_CSR_BLOCK_START + 0x100 * c.idx);
      }
    }
  }
  let status = 0n;
  for (const c of u.chips) status |= BigInt(c.pendingStatusMask());
  const v = (x: bigint) => (gone ? ALL_ONES_64 : x);
  return {
    block,
    device: [
      [CCE_REVISION, v(EMU_CCE_REVISION.wfr)],
      [SEND_DMA_ENGINES, v(BigInt(u.engines.length))],
      [SEND_DMA_MEM_SIZE, v(BigInt(SEND_DMA_MEM_SIZE_OBSERVED))],
      [CCE_INT_STATUS + 8 * CCE_INT_SDMA_REG, v(status)],
    ],
  };
}

/**
 * The BAR image as the blocks the writer compares and pwrites: the SDMA CSR block (4 KiB, one
 * pwrite when anything in it changed), then each device register.
 */
function barBlocks(u: EmuUnit): [number, Buffer][] {
  const { block, device } = barRegisters(u);
  const out: [number, Buffer][] = [[SDMA_CSR_BLOCK_START, block]];
  for (const [offset, value] of device) {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(value);
    out.push([offset, b]);
  }
  return out;
}

/** A sysfs counter (one short line, read whole): overwritten in place when its length is unchanged. */
const IN_PLACE = true;

/** The device counters of the link the model moves (DcXmitFlits and the rest, chip.c dev_cntrs): its ports' traffic summed. */
function linkCounters(u: EmuUnit): Map<string, bigint> {
  let xmitFlits = 0;
  let rcvFlits = 0;
  let xmitPkts = 0;
  let rcvPkts = 0;
  for (const p of u.host.ports) {
    xmitFlits += Math.floor(p.counters.xmitBytes / FLIT_BYTES);
    rcvFlits += Math.floor(p.counters.rcvBytes / FLIT_BYTES);
    xmitPkts += p.counters.xmitPackets;
    rcvPkts += p.counters.rcvPackets;
  }
  return new Map([
    ['DcXmitFlits', BigInt(xmitFlits)],
    ['DcRcvFlits', BigInt(rcvFlits)],
    ['DcXmitPkts', BigInt(xmitPkts)],
    ['DcRcvPkts', BigInt(rcvPkts)],
  ]);
}

/**
 * The device's `hw_counters/` (the RDMA core's hw stats, ib_setup_device_attrs; hfi1_alloc_hw_device_stats and
 * get_hw_stats, verbs.c): one file per device counter, then the driver's DRIVER_* counters (DRIVER_KernIntr the
 * interrupts the unit's handlers took; the others 0 here), then `lifespan`.
 */
function writeDeviceHwCounters(
  w: TreeWriter,
  dir: string,
  names: readonly string[],
  values: readonly bigint[],
  vectorCounts: readonly number[],
): void {
  for (const [i, n] of names.entries()) w.file(join(dir, n), `${values[i] ?? 0n}\n`, IN_PLACE);
  const interrupts = vectorCounts.reduce((a, b) => a + b, 0);
  for (const n of DRIVER_COUNTER_NAMES) w.file(join(dir, n), `${n === 'DRIVER_KernIntr' ? interrupts : 0}\n`, IN_PLACE);
  w.file(join(dir, 'lifespan'), HW_STATS_LIFESPAN_TEXT, IN_PLACE);
}

/** What one unit keeps between writes of one tree. */
interface SysrootState {
  tree: TreeWriter;
  sdes: SdesRenderer;
  /** dev/kmsg as last rendered, and the log line count it was rendered at. */
  kmsg: { seq: number; text: string };
  /** PIDs of the PSM writers whose /proc entries are in the tree. */
  psmPids: Set<number>;
  /** The emulated host's name (proc/sys/kernel/hostname): this machine's unless openSysroot named another. */
  hostname: string;
}

const writers = new WeakMap<EmuUnit, Map<string, SysrootState>>();
/** A unit dropped without closeSysroot still gets its writers' descriptors closed. */
const closeWhenDropped = new FinalizationRegistry<TreeWriter>((tree) => tree.closeFiles());

/** The writer of `dir` for this unit: the root is checked (and marked) on the first write only. */
function writerFor(u: EmuUnit, dir: string): SysrootState {
  let byDir = writers.get(u);
  if (!byDir) {
    byDir = new Map();
    writers.set(u, byDir);
  }
  const key = resolve(dir);
  let w = byDir.get(key);
  if (!w) {
    w = {
      tree: openTree(dir, version()),
      sdes: new SdesRenderer(),
      kmsg: { seq: -1, text: '' },
      psmPids: new Set(),
      hostname: hostname(),
    };
    closeWhenDropped.register(u, w.tree, w.tree);
    byDir.set(key, w);
  }
  return w;
}

/** Check `dir` as the root of this unit's tree and mark it, without writing the rest yet; `hostname` names the emulated host. */
export function openSysroot(u: EmuUnit, dir: string, opts: { hostname?: string } = {}): void {
  const w = writerFor(u, dir);
  if (opts.hostname !== undefined) w.hostname = opts.hostname;
}

/** Forget the writer of `dir` for this unit and remove its staging directory. */
export function closeSysroot(u: EmuUnit, dir: string): void {
  const byDir = writers.get(u);
  const key = resolve(dir);
  const tree = byDir?.get(key)?.tree;
  if (tree) {
    forgetRdmaAnswer(tree.root, u.info.name);
    tree.close();
    closeWhenDropped.unregister(tree);
  }
  byDir?.delete(key);
}

/**
 * Write (or refresh) the whole emulated sysroot of one unit under `dir`: sysfs class and PCI
 * device, debugfs sdes/counters/counter_names/sdma_cpu_list/qp_stats, module parameters, /proc/interrupts, and
 * /proc/<pid> of each PSM writer blocked now (removed when it wakes).
 * The first write checks `dir` (never /, a file or a foreign non-empty directory) and marks it;
 * later writes of the same unit replace only the files whose bytes changed (see tree.ts).
 */
export async function writeSysroot(u: EmuUnit, dir: string): Promise<void> {
  const { unit, name, pci } = u.info; // hfi1_N or hfi2_N; engines are absolute indexes (a window may start above 0)
  const cfg = u.host.cfg;
  const state = writerFor(u, dir);
  const w = state.tree;
  w.beginPass();
  // The driver's view (its software state beside all-ones registers once the device is gone).
  const samples = u.engines.map((e) => sampleEngine(u, e, true));
  const flavour = u.flavour;
  const paths = sysrootPaths(u);
  const { pciDir, classDir, dbg, module } = paths;
  const jkr = flavour.chip.name === 'jkr';

  if (jkr) {
    for (const [f, v] of Object.entries(jkrPciIdentity(u))) w.file(join(pciDir, f), `${v}\n`);
    w.image(join(pciDir, 'resource0'), flavour.chip.bar0Size, jkrBarBlocks(u));
  } else {
    w.file(join(pciDir, 'vendor'), `0x${PCI_VENDOR_INTEL.toString(16).padStart(4, '0')}\n`);
    w.file(join(pciDir, 'device'), `0x${PCI_DEVICE_HFI1_DISCRETE.toString(16).padStart(4, '0')}\n`);
    w.image(join(pciDir, 'resource0'), BAR0_SIZE, barBlocks(u));
  }
  w.link(join(classDir, 'device'), `../../../bus/pci/devices/${pci}`);
  w.link(join('sys/kernel/debug', module, String(unit)), name);

  // Identity files: they never change, so after the first pass each costs one comparison.
  const ctx = emuContext(flavour.chip.name);
  w.file('proc/sys/kernel/osrelease', `${ctx.kernelRelease}\n`);
  w.file('proc/sys/kernel/hostname', `${state.hostname}\n`);
  w.file('proc/cmdline', EMU_CMDLINE);
  if (!jkr) for (const [f, v] of Object.entries(EMU_PCI_IDENTITY)) w.file(join(pciDir, f), `${v}\n`);
  w.file(join('sys/module', module, 'version'), `${ctx.driverVersion}\n`);
  w.file(join('sys/module', module, 'srcversion'), `${ctx.driverSrcversion}\n`);
  w.file(join(classDir, 'fw_ver'), `${ctx.fwVer}\n`);
  w.file(join(classDir, 'board_id'), `${ctx.boardId}\n`);
  w.file(join(classDir, 'hw_rev'), `${ctx.hwRev}\n`);
  w.file(join(classDir, 'serial'), `${ctx.serial}\n`);
  w.file(join(classDir, 'boardversion'), `${ctx.boardVersion}\n`);
  // The unit's uverbs device (ib_uverbs: one per RDMA device, numbered as the devices register; the unit's number here).
  w.file(join('sys/class/infiniband_verbs', `uverbs${unit}`, 'ibdev'), `${name}\n`);
  w.file(join(pciDir, 'current_link_speed'), `${ctx.pciLinkSpeed}\n`);
  w.file(join(pciDir, 'current_link_width'), `${ctx.pciLinkWidth}\n`);
  const rate = portRate(flavour.chip.name);
  for (const p of u.host.ports) {
    const t = portFileTexts(p, rate);
    w.file(join(classDir, `ports/${p.port}/state`), t.state);
    w.file(join(classDir, `ports/${p.port}/phys_state`), t.phys_state);
    w.file(join(classDir, `ports/${p.port}/rate`), t.rate);
  }
  // The kernel log as a regular file in /dev/kmsg's record form (a capture of this tree reads it).
  if (state.kmsg.seq !== u.host.kernelLogSeq) state.kmsg = { seq: u.host.kernelLogSeq, text: kmsgText(u.host) };
  w.file('dev/kmsg', state.kmsg.text);
  // The kernel's clock (fs/proc/uptime.c: seconds since boot, two decimals), on which the log above is stamped.
  w.file('proc/uptime', `${(u.nowMs / 1000).toFixed(2)} 0.00\n`);
  // With the trace switch on, tracefs as if the sleep and wake-up events were enabled (on the same clock).
  for (const [path, text] of traceEventFiles(u)) w.file(path, text);

  for (const s of samples) {
    w.file(join(classDir, `sdma${s.engine}`, 'vl'), vlText(u, s.engine - flavour.firstEngine));
    w.file(join(classDir, `sdma${s.engine}`, 'cpu_list'), `${s.cpuList ?? 'empty'}\n`);
  }
  const { names, values } = counterTable(samples, u.errBitCounts, linkCounters(u));
  writeDeviceHwCounters(w, join(classDir, 'hw_counters'), names, values, u.vectorCounts);

  w.file(join(dbg, 'sdes'), state.sdes.render(u, samples));
  w.file(join(dbg, 'counter_names'), names.map((n) => `${n}\n`).join(''));
  w.file(join(dbg, 'counters'), countersBinary(values, endianness() === 'LE'));
  w.file(join(dbg, 'sdma_cpu_list'), flavour.driver === 'upstream' ? '' : cpuListText(u, samples));
  w.file(join(dbg, 'qp_stats'), qpStatsText(u.senders, flavour.firstEngine, unit));
  writePsmProc(w, unit, u.senders, state.psmPids, module);
  if (!flavour.classic) writeFlavourFiles(w, u, paths);
  writePortFiles(w, u.host.ports, paths, u.host.sched.nowNs, endianness() === 'LE', usedContexts(unitContexts(u)));
  writeNetdevFiles(w, u, pci);
  // The kernel's uptime (the virtual time): what a reader needs to date /dev/kmsg records.
  w.file('proc/uptime', `${(u.nowMs / 1000).toFixed(2)} ${((u.nowMs / 1000) * cfg.cpus).toFixed(2)}\n`);
  writeQpOwners(w, name, unit, u.senders, u.host.ports.length);

  const params = paths.params;
  w.file(join(params, 'sdma_descq_cnt'), `${cfg.descqCntParam}\n`);
  w.file(join(params, 'sdma_idle_cnt'), `${cfg.idleCntNs}\n`);
  w.file(join(params, 'num_sdma'), `${cfg.engines === 16 ? 0 : cfg.engines}\n`);
  w.file(join(params, 'desct_intr'), `${cfg.desctIntr}\n`);
  w.file(join(params, 'sdma_comp_size'), '128\n');
  w.file(join(params, 'num_vls'), `${cfg.numVls}\n`);
  w.file(join(params, 'piothreshold'), '256\n');
  w.file(join(params, 'cap_mask'), `0x${cfg.capMask.toString(16)}\n`);

  w.file(
    'proc/interrupts',
    procInterrupts(
      unit,
      pci,
      cfg.cpus,
      u.engines.map((e) => e.cpu),
      u.vectorCounts,
      module,
      u.info.engineIds,
    ),
  );
}
