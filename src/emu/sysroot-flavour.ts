// The parts of the emulated sysroot that differ from the WFR/upstream host: a CN5000 (JKR) PCI identity and BAR
// image, the `device/driver` link, the Cornelis builds' `hw_resources`, per-port `vl` lists and `sdma_cpu_list`
// with `pidx`, and the cornelis/hfi2 module parameters (the bulk service's on cornelis). sysroot.ts calls
// writeFlavourFiles only for a unit that is not the classic host, so the classic tree and its refresh cost are unchanged.
import { join } from 'node:path';
import type { EngineSample } from '../backend.js';
import { engineRegOffset, interruptSources, memoryRegOffset } from '../progress/chip.js';
import {
  ALL_ONES_64,
  CCE_INT_STATUS,
  CCE_REVISION,
  SEND_DMA_CTRL,
  SEND_DMA_MEM_SIZE_OBSERVED,
  VL_UNMAPPED,
} from '../progress/constants.js';
import { defaultDriverSettings } from '../progress/driver.js';
import { EMU_CCE_REVISION, EMU_PCI_IDENTITY } from './context.js';
import { CHIP_RCV_CONTEXTS, CHIP_RCVARRAY_ENTRIES, type PortContexts, portContexts } from './rcv-contexts.js';
import { readCsr } from './sample.js';
import type { TreeWriter } from './tree.js';
import type { EmuUnit } from './unit.js';

/** PCI identity of a CN5000 (Cornelis 434e:0001; subsystem 0x0002 dual port, 0x0003 single port). */
export const CN5000_PCI = { vendor: '0x434e', device: '0x0001', dualPort: '0x0002', singlePort: '0x0003' } as const;

/** The per-engine registers of a JKR engine block written into the image (inner offsets 0x0–0x70; no CHECK registers). */
const JKR_BLOCK_REGS = 15;

/** Where a unit's files live: module, class directory, debugfs directory, PCI device directory, parameters. */
export interface SysrootPaths {
  module: 'hfi1' | 'hfi2';
  classDir: string;
  dbg: string;
  pciDir: string;
  params: string;
}

/** The paths of a unit's files (hfi1_N / hfi2_N under the module's directories). */
export function sysrootPaths(u: EmuUnit): SysrootPaths {
  const module = u.flavour.module;
  const { name, pci } = u.info;
  return {
    module,
    classDir: join('sys/class/infiniband', name),
    dbg: join('sys/kernel/debug', module, name),
    pciDir: join('sys/bus/pci/devices', pci),
    params: join('sys/module', module, 'parameters'),
  };
}

/**
 * The BAR image blocks of a JKR unit (chip_registers_jkr.h): each engine's registers at 0x1A00000 + 0x2000·e, its
 * SEND_DMA_CFG_MEMORY at 0x1B00B00 + 8·e, SEND_DMA_ENGINES and SEND_DMA_MEM_SIZE, CCE_REVISION, and CCE_INT_STATUS #4
 * holding the engines' pending SDMA sources. All-ones once the device is gone.
 */
export function jkrBarBlocks(u: EmuUnit): [number, Buffer][] {
  const chip = u.flavour.chip;
  const gone = u.host.gone;
  const out: [number, Buffer][] = [];
  const reg = (offset: number, value: bigint) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(gone ? ALL_ONES_64 : value);
    out.push([offset, b]);
  };
  let status = 0n;
  for (const c of u.chips) {
    const block = Buffer.alloc(JKR_BLOCK_REGS * 8, gone ? 0xff : 0);
    if (!gone) {
      for (let r = 0; r < JKR_BLOCK_REGS; r++) {
        const base = SEND_DMA_CTRL + 8 * r; // the same inner offsets as WFR's engine 0
        block.writeBigUInt64LE(readCsr(c, false, base), 8 * r);
      }
    }
    out.push([engineRegOffset(chip, 'ctrl', c.idx), block]);
    reg(memoryRegOffset(chip, c.idx), BigInt(c.memory));
    status |= BigInt(c.pendingStatusMask());
  }
  reg(CCE_REVISION, EMU_CCE_REVISION.jkr); // at the WFR offset (a choice: the JKR map of the CCE block is not public)
  reg(chip.sendDmaEngines, BigInt(u.engines.length));
  reg(chip.sendDmaMemSize, BigInt(SEND_DMA_MEM_SIZE_OBSERVED));
  reg(CCE_INT_STATUS + 8 * interruptSources(chip, 0).reg, status);
  return out;
}

/** The PCI identity files of a JKR unit (a WFR unit keeps the classic ones). */
export function jkrPciIdentity(u: EmuUnit): Record<string, string> {
  return {
    ...EMU_PCI_IDENTITY,
    vendor: CN5000_PCI.vendor,
    device: CN5000_PCI.device,
    subsystem_vendor: CN5000_PCI.vendor,
    subsystem_device: u.flavour.ports === 2 ? CN5000_PCI.dualPort : CN5000_PCI.singlePort,
    max_link_speed: '32.0 GT/s PCIe',
  };
}

/**
 * The `hw_resources` device attribute of the Cornelis hfi1 and hfi2 (hw_resources_show, sysfs.c): pfunit, si_idx,
 * numvfs, then `%u-%u` ranges, `sde` the SDMA engines with their last one (first, last − 1 of the driver's half-open
 * bounds), then per port `p%d not used` or its receive contexts (rcv-contexts.ts; hfi2 without the bulk-service
 * lines and with narrower labels), and on the Cornelis hfi1 `bulksvc.sde a-b` when the bulk service owns engines (the
 * loan moves last_sdma_engine down to its first engine, bulksvc.c). hfi2's vf2pf lines of a function without VFs
 * print nothing (a choice: vf2pf_sysfs_emit_at is not in the public sources).
 */
export function hwResourcesText(u: EmuUnit): string {
  const f = u.flavour;
  const first = f.firstEngine;
  const bulk = u.bulkEngines;
  const last = first + f.count - 1 - bulk.length;
  let out = `pfunit 0\nsi_idx 0\nnumvfs 0\nsctxt  0-159\nrctxt  0-${CHIP_RCV_CONTEXTS - 1}\nsde    ${first}-${last}\n`;
  out += `rcvary 0-${CHIP_RCVARRAY_ENTRIES - 1}\npio    0-159\n`;
  const hfi2 = f.driver === 'hfi2';
  for (const p of unitContexts(u)) {
    const at = `p${p.pidx}.`;
    if (p.base === null) {
      out += `p${p.pidx} not used\n`;
      continue;
    }
    const lastCtxt = p.base + p.kernel + p.bulksvc + p.netdev + p.user - 1;
    const firstDyn = p.base + p.kernel + p.bulksvc;
    out += hfi2
      ? `${at}rctxt    ${p.base}-${lastCtxt}\n${at}firstdyn ${firstDyn}\n${at}nkrcvq   ${p.kernel}\n${at}nnetdev  ${p.netdev}\n${at}nuctxts  ${p.user}\n${at}rcvary   ${p.rcvArrayBase}\n`
      : `${at}rctxt        ${p.base}-${lastCtxt}\n${at}firstbulksvc ${p.base + p.kernel}\n${at}firstdyn     ${firstDyn}\n` +
        `${at}nkrcvq    ${p.kernel}\n${at}nbulksvc  ${p.bulksvc}\n${at}nnetdev   ${p.netdev}\n${at}nuctxts   ${p.user}\n${at}rcvary    ${p.rcvArrayBase}\n`;
  }
  if (bulk.length > 0) out += `bulksvc.sde ${bulk[0]}-${bulk[bulk.length - 1]}\n`;
  return out;
}

/** The unit's receive contexts per port (rcv-contexts.ts). */
export function unitContexts(u: EmuUnit): PortContexts[] {
  return portContexts({
    cpus: u.host.cfg.cpus,
    capMask: u.host.cfg.capMask,
    ports: u.flavour.ports,
    activePorts: u.flavour.activePorts,
    bulksvcContexts: u.bulkEngines.length > 0 ? Number(u.params.bulksvc.bulksvc_num_rctx) : 0,
  });
}

/**
 * `sdma<E>/vl` (sde_show_vl / vl_show, sysfs.c): upstream hfi1 `%d\n` of its one port; the Cornelis hfi1 and hfi2
 * the engine's VL on each port (`%d`, `,%d` after the first) with no newline. An engine a port's map does not use
 * reads 255 (VL_UNMAPPED).
 */
export function vlText(u: EmuUnit, pos: number): string {
  const vls = u.host.ports.map((p) => {
    const vl = p.vlMap.engineToVl[pos] ?? -1;
    return vl < 0 ? VL_UNMAPPED : vl;
  });
  return u.flavour.driver === 'upstream' ? `${vls[0]}\n` : vls.join(',');
}

/**
 * debugfs `sdma_cpu_list` of the Cornelis hfi1 and hfi2 (sdma_seqfile_dump_cpu_list, sdma.c): per CPU with a user
 * mapping, one line per port, `cpu%3lu: ` on the first and 8 spaces on the later ones, then `pidx %d: ` and for
 * each VL of that port's map ` vl%d: [`, ` sdma%2d` per engine joined by `,`, and ` ]`. The emulated unit maps each
 * engine's interrupt CPU (its sysfs cpu_list) for user processes.
 */
export function cpuListText(u: EmuUnit, samples: readonly EngineSample[]): string {
  const byCpu = new Map<number, EngineSample[]>();
  for (const s of samples) {
    if (s.cpu === null || s.cpuList === 'empty') continue;
    const list = byCpu.get(s.cpu) ?? [];
    list.push(s);
    byCpu.set(s.cpu, list);
  }
  const pos = (s: EngineSample) => s.engine - u.flavour.firstEngine;
  let out = '';
  for (const cpu of [...byCpu.keys()].sort((a, b) => a - b)) {
    const engines = byCpu.get(cpu) ?? [];
    for (const p of u.host.ports) {
      const vlOf = (s: EngineSample) => p.vlMap.engineToVl[pos(s)] ?? -1;
      out += p.port === 1 ? `cpu${String(cpu).padStart(3)}: ` : ' '.repeat(8);
      out += `pidx ${p.port - 1}: `;
      const vls = [...new Set(engines.map(vlOf).filter((v) => v >= 0))].sort((a, b) => a - b);
      for (const vl of vls) {
        const names = engines.filter((s) => vlOf(s) === vl).map((s) => ` sdma${String(s.engine).padStart(2)}`);
        out += ` vl${vl}: [${names.join(',')} ]`;
      }
      out += '\n';
    }
  }
  return out;
}

/** The cornelis/hfi2 module parameters as the driver shows them: −1 where the value is automatic. */
export function extraParams(u: EmuUnit): [string, string][] {
  const f = u.flavour;
  const auto = defaultDriverSettings(f.driver, f.chip.name, f.amdHost);
  const shown = (v: number, a: number) => (v === a ? '-1' : String(v));
  return [
    ['pad_sdma_desc', shown(f.settings.padSdmaDesc, auto.padSdmaDesc)],
    ['sdma_align', shown(f.settings.sdmaAlign, auto.sdmaAlign)],
    ['sdma_threshold', shown(f.settings.sdmaThreshold, auto.sdmaThreshold)],
    ['sdma_single_descriptor', f.singleDescriptor ? '1' : '0'],
    ['enable_jkr_sdma_mem_init', '0'],
    ['jkr_sdma_credits_limit', '-1'],
  ];
}

/**
 * The files only a non-classic unit has: the `device/driver` link, the cornelis/hfi2 parameters and `hw_resources`,
 * and the Cornelis hfi1's bulk-service parameters (use_bulksvc as the driver shows a bool, Y or N).
 */
export function writeFlavourFiles(w: TreeWriter, u: EmuUnit, p: SysrootPaths): void {
  const f = u.flavour;
  w.link(join(p.pciDir, 'driver'), `../../../bus/pci/drivers/${p.module}`);
  if (f.driver !== 'upstream') for (const [name, v] of extraParams(u)) w.file(join(p.params, name), `${v}\n`);
  if (f.driver !== 'upstream') w.file(join(p.classDir, 'hw_resources'), hwResourcesText(u));
  if (f.driver === 'cornelis') {
    w.file(join(p.params, 'use_bulksvc'), u.params.useBulksvc ? 'Y\n' : 'N\n');
    for (const [name, v] of Object.entries(u.params.bulksvc)) w.file(join(p.params, name), `${v}\n`);
  }
}
