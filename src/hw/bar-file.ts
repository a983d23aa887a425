// A register window on a BAR image: the `resource0` of a sysroot or an unpacked snapshot (or any
// resource0 not on sysfs), which is a plain file rather than a PCI resource. It is read with pread(2), a page at a time, never
// mapped: no FFI is loaded for it, and a file that shrinks under the reader gives a short read
// (the device is gone), never SIGBUS. A live host's sysfs resource0 is mapped (bar.ts).
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { endianness } from 'node:os';
import { Hfi1SdmaError } from '../errors.js';
import { barError, barSizeProblem, checkOffset, type RegisterWindow, type WindowSpec } from './bar.js';
import { type Containment, OutsideTreeError } from './contain.js';

const PAGE = 4096;
const EACCES = 13;
const ENOENT = 2;
const LITTLE = endianness() === 'LE';

class FileWindow implements RegisterWindow {
  private fd: number | null;
  /** Pages read since the last check(): one sample reads each page once. */
  private readonly pages = new Map<number, Buffer>();

  constructor(
    private readonly path: string,
    fd: number,
    private readonly start: number,
    private readonly length: number,
    private readonly allowed: readonly (readonly [number, number])[],
  ) {
    this.fd = fd;
  }

  get closed(): boolean {
    return this.fd === null;
  }

  read64(offset: number): bigint {
    const fd = this.fd;
    if (fd === null) throw new Hfi1SdmaError('E_INTERNAL', 'read of a closed BAR window');
    checkOffset(offset, this.start, this.length, this.allowed);
    const base = offset - (offset % PAGE);
    let page = this.pages.get(base);
    if (page === undefined) {
      page = Buffer.allocUnsafe(PAGE);
      const n = readSync(fd, page, 0, PAGE, base);
      if (n < PAGE) throw this.shrunk(base + n);
      this.pages.set(base, page);
    }
    const at = offset - base;
    return LITTLE ? page.readBigUInt64LE(at) : page.readBigUInt64BE(at);
  }

  check(): void {
    const fd = this.fd;
    if (fd === null) throw new Hfi1SdmaError('E_INTERNAL', 'check of a closed BAR window');
    this.pages.clear();
    let size: number;
    try {
      size = fstatSync(fd).size;
    } catch (e) {
      throw new Hfi1SdmaError('E_DEVICE_GONE', `${this.path}: cannot stat the BAR image: the device is gone`, { cause: e });
    }
    if (size < this.start + this.length) throw this.shrunk(size);
  }

  close(): void {
    if (this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
    this.pages.clear();
  }

  private shrunk(size: number): Hfi1SdmaError {
    return new Hfi1SdmaError(
      'E_DEVICE_GONE',
      `${this.path}: shrank to ${size} bytes while open (registers up to 0x${(this.start + this.length).toString(16)} are gone): the device or its image went away`,
    );
  }
}

function notRegular(path: string): Hfi1SdmaError {
  return new Hfi1SdmaError('E_UNAVAILABLE', `${path}: not a regular file: a BAR image must be one (replace it)`);
}

/**
 * Open a BAR image file read-only: regular files only; under a sysroot (`within`) resolved inside
 * it, links inside the tree followed; elsewhere no symlink followed at the last step.
 */
export function openFileWindow(path: string, spec: WindowSpec, within: Containment | null = null): RegisterWindow {
  let fd: number;
  try {
    fd =
      within === null
        ? openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
        : within.openRead(path, (st) => {
            if (!st.isFile()) throw notRegular(path);
          });
  } catch (e) {
    if (e instanceof Hfi1SdmaError) throw e;
    if (e instanceof OutsideTreeError) throw new Hfi1SdmaError('E_UNAVAILABLE', e.message, { cause: e });
    const code = (e as NodeJS.ErrnoException).code;
    throw barError(path, 'open', code === 'EACCES' || code === 'EPERM' ? EACCES : ENOENT);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw notRegular(path);
    const tooSmall = barSizeProblem(st.size, spec);
    if (tooSmall !== null) throw new Hfi1SdmaError('E_UNAVAILABLE', `${path}: ${tooSmall}`);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  return new FileWindow(path, fd, spec.start, spec.length, spec.allowed ?? [[spec.start, spec.start + spec.length]]);
}
