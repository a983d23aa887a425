// A regular file standing in for resource0: 64 MiB, sparse, registers pwritten at their offsets
// (the BAR0 map, chip_registers.h; SEND_DMA_* per-engine CSRs, chip_registers.h). Used to build hosts for tests and benchmarks; the emulator's own writer keeps
// its image current in place (sysroot.ts).
import { closeSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import { BAR0_SIZE } from '../progress/constants.js';

/** pwrite 64-bit little-endian registers at their BAR0 offsets into an open image. */
export function writeRegisters(fd: number, regs: Iterable<readonly [number, bigint]>): void {
  const b = Buffer.alloc(8);
  for (const [offset, value] of regs) {
    b.writeBigUInt64LE(value);
    writeSync(fd, b, 0, 8, offset);
  }
}

/** Create `path` as a sparse BAR image with the given 64-bit little-endian registers. */
export function writeBarImage(path: string, regs: ReadonlyMap<number, bigint>, size = BAR0_SIZE): void {
  const fd = openSync(path, 'w');
  try {
    ftruncateSync(fd, size);
    writeRegisters(fd, regs);
  } finally {
    closeSync(fd);
  }
}
