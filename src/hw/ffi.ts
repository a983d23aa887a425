// The only file that touches the C library: open, mmap, munmap and close through koffi. koffi and
// libc are loaded on first use, never at import time. Only read-only flags are defined here.
import { createRequire } from 'node:module';

type Koffi = typeof import('koffi');

/** O_RDONLY | O_CLOEXEC (Linux). */
export const O_RDONLY_CLOEXEC = 0o2000000;
/** PROT_READ: the only protection this program ever asks for. */
export const PROT_READ = 0x1;
/** MAP_SHARED: see the device's registers, not a private copy. */
export const MAP_SHARED = 0x01;
/** (void *)-1 as an address. */
export const MAP_FAILED_ADDRESS = 0xffff_ffff_ffff_ffffn;

/** The C functions used, with errno read right after each call. */
export interface Libc {
  open(path: string, flags: number): { fd: number; errno: number };
  /** Returns the mapping (opaque) and its address; address MAP_FAILED_ADDRESS on failure. */
  mmap(length: number, prot: number, flags: number, fd: number, offset: number): { ptr: unknown; address: bigint; errno: number };
  munmap(ptr: unknown, length: number): { rc: number; errno: number };
  close(fd: number): { rc: number; errno: number };
  /** An ArrayBuffer over `length` bytes at `ptr` (no copy). */
  view(ptr: unknown, length: number): ArrayBuffer;
}

let cached: Libc | null = null;

/** Load the C library on first use (Linux glibc or musl). */
export function libc(): Libc {
  if (cached) return cached;
  const koffi = createRequire(import.meta.url)('koffi') as Koffi;
  let lib: ReturnType<typeof koffi.load> | undefined;
  let lastError: unknown;
  for (const name of ['libc.so.6', 'libc.so']) {
    try {
      lib = koffi.load(name);
      break;
    } catch (e) {
      lastError = e;
    }
  }
  if (!lib) throw new Error(`cannot load the C library: ${String(lastError)}`);
  const cOpen = lib.func('int open(const char *path, int flags)');
  const cMmap = lib.func('void *mmap(void *addr, size_t length, int prot, int flags, int fd, int64_t offset)');
  const cMunmap = lib.func('int munmap(void *addr, size_t length)');
  const cClose = lib.func('int close(int fd)');
  cached = {
    open(path, flags) {
      const fd = cOpen(path, flags) as number;
      return { fd, errno: fd < 0 ? koffi.errno() : 0 };
    },
    mmap(length, prot, flags, fd, offset) {
      const ptr = cMmap(null, length, prot, flags, fd, offset) as unknown;
      const address = ptr === null ? 0n : BigInt(koffi.address(ptr));
      return { ptr, address, errno: address === MAP_FAILED_ADDRESS ? koffi.errno() : 0 };
    },
    munmap(ptr, length) {
      const rc = cMunmap(ptr, length) as number;
      return { rc, errno: rc < 0 ? koffi.errno() : 0 };
    },
    close(fd) {
      const rc = cClose(fd) as number;
      return { rc, errno: rc < 0 ? koffi.errno() : 0 };
    },
    view(ptr, length) {
      return koffi.view(ptr as never, length);
    },
  };
  return cached;
}
