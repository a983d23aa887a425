// The sysroot writer: the DESIGN.md layout in the kernel's formats, so that src/hw reads an
// emulated host exactly as a live one. Text files are replaced atomically (write, rename);
// resource0 is a sparse 64 MiB BAR image updated in place so a reader mapping it sees live values.

import {
  closeSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  renameSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { endianness } from 'node:os';
import { dirname, join } from 'node:path';
import {
  ALL_ONES_64,
  BAR0_SIZE,
  CCE_INT_SDMA_REG,
  CCE_INT_STATUS,
  PCI_DEVICE_HFI1_DISCRETE,
  PCI_VENDOR_INTEL,
  SDMA_CSR_BLOCK_SIZE,
  SDMA_CSR_BLOCK_START,
  SEND_DMA_ENGINES,
  SEND_DMA_MEM_SIZE,
  SEND_DMA_MEM_SIZE_OBSERVED,
} from '../progress/constants.js';
import { writeRegisters } from './bar-image.js';
import { CSR_OFFSETS, readCsr } from './sample.js';
import { countersBinary, counterTable, procInterrupts, sdesText } from './sdes.js';
import type { EmuUnit } from './unit.js';

function writeAtomic(path: string, data: string | Buffer): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}

function link(target: string, path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  if (!existsSync(path)) symlinkSync(target, path);
}

/** The BAR0 bytes the writer owns, as (offset, 8-byte value) pairs: SDMA CSR block and §f.3 registers. */
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
      [SEND_DMA_ENGINES, v(BigInt(u.engines.length))],
      [SEND_DMA_MEM_SIZE, v(BigInt(SEND_DMA_MEM_SIZE_OBSERVED))],
      [CCE_INT_STATUS + 8 * CCE_INT_SDMA_REG, v(status)],
    ],
  };
}

function writeBar(u: EmuUnit, path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const fd = openSync(path, existsSync(path) ? 'r+' : 'w+');
  try {
    if (fstatSync(fd).size !== BAR0_SIZE) ftruncateSync(fd, BAR0_SIZE);
    const { block, device } = barRegisters(u);
    writeSync(fd, block, 0, block.length, SDMA_CSR_BLOCK_START);
    writeRegisters(fd, device);
  } finally {
    closeSync(fd);
  }
}

/**
 * Write (or refresh) the whole emulated sysroot of one unit under `dir`: sysfs class and PCI
 * device, debugfs sdes/counters/counter_names/sdma_cpu_list, module parameters, /proc/interrupts.
 */
export async function writeSysroot(u: EmuUnit, dir: string): Promise<void> {
  const { unit, name, pci } = u.info;
  const cfg = u.host.cfg;
  const samples = await u.sample();
  const rings = await Promise.all(u.engines.map((e) => u.ring(e.idx)));
  const pciDir = join(dir, 'sys/bus/pci/devices', pci);
  const classDir = join(dir, 'sys/class/infiniband', name);
  const dbg = join(dir, 'sys/kernel/debug/hfi1', name);

  writeAtomic(join(pciDir, 'vendor'), `0x${PCI_VENDOR_INTEL.toString(16).padStart(4, '0')}\n`);
  writeAtomic(join(pciDir, 'device'), `0x${PCI_DEVICE_HFI1_DISCRETE.toString(16).padStart(4, '0')}\n`);
  writeBar(u, join(pciDir, 'resource0'));
  link(`../../../bus/pci/devices/${pci}`, join(classDir, 'device'));
  link(name, join(dir, 'sys/kernel/debug/hfi1', String(unit)));

  for (const s of samples) {
    writeAtomic(join(classDir, `sdma${s.engine}`, 'vl'), `${s.vl ?? -1}\n`);
    writeAtomic(join(classDir, `sdma${s.engine}`, 'cpu_list'), `${s.cpuList ?? 'empty'}\n`);
  }
  const { names, values } = counterTable(samples, u.errBitCounts);
  for (const [i, n] of names.entries()) writeAtomic(join(classDir, 'hw_counters', n), `${values[i] ?? 0n}\n`);

  writeAtomic(join(dbg, 'sdes'), sdesText(samples, rings));
  writeAtomic(join(dbg, 'counter_names'), names.map((n) => `${n}\n`).join(''));
  writeAtomic(join(dbg, 'counters'), countersBinary(values, endianness() === 'LE'));
  writeAtomic(join(dbg, 'sdma_cpu_list'), '');

  const params = join(dir, 'sys/module/hfi1/parameters');
  writeAtomic(join(params, 'sdma_descq_cnt'), `${cfg.descqCntParam}\n`);
  writeAtomic(join(params, 'sdma_idle_cnt'), `${cfg.idleCntNs}\n`);
  writeAtomic(join(params, 'num_sdma'), `${cfg.engines === 16 ? 0 : cfg.engines}\n`);
  writeAtomic(join(params, 'desct_intr'), `${cfg.desctIntr}\n`);
  writeAtomic(join(params, 'sdma_comp_size'), '128\n');
  writeAtomic(join(params, 'num_vls'), `${cfg.numVls}\n`);
  writeAtomic(join(params, 'piothreshold'), '256\n');
  writeAtomic(join(params, 'cap_mask'), `0x${cfg.capMask.toString(16)}\n`);

  writeAtomic(
    join(dir, 'proc/interrupts'),
    procInterrupts(
      unit,
      pci,
      cfg.cpus,
      u.engines.map((e) => e.cpu),
      u.vectorCounts,
    ),
  );
}
