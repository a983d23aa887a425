// A read-only window on BAR0 through sysfs resource0 (pci_mmap_resource, drivers/pci): opened O_RDONLY, mapped PROT_READ
// MAP_SHARED, read with aligned 8-byte loads at offsets inside the allowed ranges. There is no
// write path. The typed-array view is dropped before munmap so nothing can touch a dead mapping.
import { fstatSync, statSync } from 'node:fs';
import { Hfi1SdmaError } from '../errors.js';
import { type Libc, libc, MAP_FAILED_ADDRESS, MAP_SHARED, O_RDONLY_CLOEXEC, PROT_READ } from './ffi.js';

/** A 64-bit register window. Offsets are BAR0 offsets (the BAR0 map, chip_registers.h). */
export interface RegisterWindow {
  /** The 64-bit value at a BAR0 offset: 8-byte aligned, inside an allowed range. */
  read64(offset: number): bigint;
  /**
   * E_DEVICE_GONE when the file behind the mapping no longer covers it (a truncated image): a read
   * would fault (SIGBUS). Call before each sample; a PCI resource0 always has the BAR's size.
   */
  check(): void;
  /** Release the mapping; later reads throw. Safe to call twice. */
  close(): void;
  readonly closed: boolean;
}

/** What to map: [start, start + length) of BAR0 (page aligned), and the ranges reads may touch. */
export interface WindowSpec {
  start: number;
  length: number;
  /** Half-open [from, to) BAR0 ranges that may be read; all of the mapping when omitted. */
  allowed?: readonly (readonly [number, number])[];
  /** The least size the file must have: the chip's BAR0 (128 MiB on JKR); only the window must fit when omitted. */
  minFileBytes?: number;
}

/** The size check of a BAR file against a window: null when it fits, else why not. */
export function barSizeProblem(size: number, spec: WindowSpec): string | null {
  if (spec.minFileBytes !== undefined && size < spec.minFileBytes) {
    return `${size} bytes, smaller than the chip's ${spec.minFileBytes >> 20} MiB BAR0: not this chip's resource0`;
  }
  if (size < spec.start + spec.length) {
    return `${size} bytes, too small for registers up to 0x${(spec.start + spec.length).toString(16)}: hfi1's BAR0 is 64 MiB`;
  }
  return null;
}

const EPERM = 1;
const ENOENT = 2;
const EACCES = 13;
const EINVAL = 22;

/** The error for an errno from open(2) or mmap(2) of resource0, with the fix (pci_mmap_resource, drivers/pci). */
export function barError(path: string, call: 'open' | 'mmap', errno: number): Hfi1SdmaError {
  if (errno === EACCES) {
    return new Hfi1SdmaError(
      'E_PERMISSION',
      `${path}: permission denied: resource0 is readable by root only (mode 0600): run as root`,
    );
  }
  if (errno === EPERM) {
    return new Hfi1SdmaError(
      'E_PERMISSION',
      `${path}: the kernel refused to ${call} the BAR (EPERM): kernel lockdown forbids PCI BAR access from user space (LOCKDOWN_PCI_ACCESS); see /sys/kernel/security/lockdown. Boot without lockdown (e.g. Secure Boot off or lockdown=none), or read debugfs sdes instead`,
    );
  }
  if (errno === EINVAL && call === 'mmap') {
    return new Hfi1SdmaError(
      'E_UNAVAILABLE',
      `${path}: the kernel refused to map the BAR (EINVAL): hfi1 claims its regions and this kernel has CONFIG_IO_STRICT_DEVMEM=y; boot with iomem=relaxed, or read debugfs sdes instead`,
    );
  }
  if (errno === ENOENT) {
    return new Hfi1SdmaError('E_UNAVAILABLE', `${path}: no such file: the PCI device is gone or the tree has no BAR image`);
  }
  return new Hfi1SdmaError('E_UNAVAILABLE', `${path}: ${call} failed with errno ${errno}`);
}

/**
 * The offset of `offset` inside a window at [start, start + length): RangeError unless it is an
 * aligned 8-byte register inside one of the allowed ranges. Shared by every kind of window.
 */
export function checkOffset(
  offset: number,
  start: number,
  length: number,
  allowed: readonly (readonly [number, number])[],
): number {
  const rel = offset - start;
  let permitted = false;
  for (let i = 0; i < allowed.length && !permitted; i++) {
    const r = allowed[i] as readonly [number, number];
    permitted = offset >= r[0] && offset < r[1];
  }
  if (!(rel >= 0 && rel < length) || (rel & 7) !== 0 || !permitted) {
    throw new RangeError(`BAR0 offset 0x${offset.toString(16)} is misaligned or outside the registers this program reads`);
  }
  return rel;
}

class MappedWindow implements RegisterWindow {
  private view: BigUint64Array | null;
  private mapping: unknown;

  constructor(
    private readonly c: Libc,
    private readonly path: string,
    /** Kept open to check the file's size before each sample. */
    private readonly fd: number,
    mapping: unknown,
    private readonly start: number,
    private readonly length: number,
    private readonly allowed: readonly (readonly [number, number])[],
  ) {
    this.mapping = mapping;
    this.view = new BigUint64Array(c.view(mapping, length));
  }

  get closed(): boolean {
    return this.view === null;
  }

  read64(offset: number): bigint {
    const view = this.view;
    if (view === null) throw new Hfi1SdmaError('E_INTERNAL', 'read of a closed BAR window');
    const rel = checkOffset(offset, this.start, this.length, this.allowed);
    return view[rel >>> 3] as bigint;
  }

  check(): void {
    if (this.view === null) throw new Hfi1SdmaError('E_INTERNAL', 'check of a closed BAR window');
    let size: number;
    try {
      size = fstatSync(this.fd).size;
    } catch (e) {
      throw new Hfi1SdmaError('E_DEVICE_GONE', `${this.path}: cannot stat the mapped file: the device is gone`, {
        cause: e,
      });
    }
    if (size < this.start + this.length) {
      throw new Hfi1SdmaError(
        'E_DEVICE_GONE',
        `${this.path}: shrank to ${size} bytes while mapped (registers up to 0x${(this.start + this.length).toString(16)} are gone): the device or its image went away`,
      );
    }
  }

  close(): void {
    if (this.view === null) return;
    this.view = null; // drop the view first: nothing may read a mapping being released
    this.c.munmap(this.mapping, this.length);
    this.mapping = null;
    this.c.close(this.fd);
  }
}

/** Map part of resource0 read-only. Fails with E_PERMISSION / E_UNAVAILABLE saying why (pci_mmap_resource, drivers/pci). */
export function openBarWindow(path: string, spec: WindowSpec, c: Libc = libc()): RegisterWindow {
  if (spec.start % 4096 !== 0 || spec.length <= 0 || spec.length % 8 !== 0) {
    throw new RangeError('a BAR window starts on a page and spans whole registers');
  }
  let size: number;
  try {
    size = statSync(path).size;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw barError(path, 'open', code === 'EACCES' ? EACCES : ENOENT);
  }
  const tooSmall = barSizeProblem(size, spec);
  if (tooSmall !== null) throw new Hfi1SdmaError('E_UNAVAILABLE', `${path}: ${tooSmall}`);
  const o = c.open(path, O_RDONLY_CLOEXEC);
  if (o.fd < 0) throw barError(path, 'open', o.errno);
  const m = c.mmap(spec.length, PROT_READ, MAP_SHARED, o.fd, spec.start);
  if (m.address === MAP_FAILED_ADDRESS || m.address === 0n) {
    c.close(o.fd);
    throw barError(path, 'mmap', m.errno);
  }
  const allowed = spec.allowed ?? [[spec.start, spec.start + spec.length]];
  const win = new MappedWindow(c, path, o.fd, m.ptr, spec.start, spec.length, allowed);
  try {
    win.check(); // the file may have changed between stat and mmap
  } catch (e) {
    win.close();
    throw e;
  }
  return win;
}
