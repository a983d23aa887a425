// The only file that touches the C library: open, mmap, munmap and close through koffi, and the
// openat2 system call (through syscall(2), which the C library may not wrap). koffi and libc are
// loaded on first use, never at import time. Only read-only flags are defined here.
import { createRequire } from 'node:module';
import { endianness } from 'node:os';

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
let loaded: { koffi: Koffi; lib: ReturnType<Koffi['load']> } | null = null;

/** koffi and the C library (Linux glibc or musl), loaded once. */
function load(): { koffi: Koffi; lib: ReturnType<Koffi['load']> } {
  if (loaded) return loaded;
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
  loaded = { koffi, lib };
  return loaded;
}

/** Load the C library's mapping calls on first use. */
export function libc(): Libc {
  if (cached) return cached;
  const { koffi, lib } = load();
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

/** RESOLVE_BENEATH (openat2): every step of the path stays beneath the directory descriptor; EXDEV otherwise. */
export const RESOLVE_BENEATH = 0x08;
/** RESOLVE_NO_MAGICLINKS (openat2): /proc's fd and exe links are never followed (ELOOP). */
export const RESOLVE_NO_MAGICLINKS = 0x02;
/** O_CLOEXEC (Linux): no descriptor of a read leaks into a program this one runs. */
export const O_CLOEXEC = 0o2000000;

/**
 * openat2's number: 437 on every architecture Node runs on with the common system-call table
 * (added in Linux 5.6); null elsewhere (mips numbers it otherwise), where the caller resolves
 * beneath the descriptor itself.
 */
const OPENAT2_NR: number | null = ['x64', 'ia32', 'arm', 'arm64', 'ppc', 'ppc64', 'riscv64', 's390', 's390x', 'loong64'].includes(
  process.arch,
)
  ? 437
  : null;

/** openat2(2): open `path` relative to `dirfd`, resolved in the kernel under `resolve`'s rules. */
export type Openat2 = (dirfd: number, path: string, flags: number, resolve: number) => { fd: number; errno: number };

let openat2Cached: Openat2 | null | undefined;
let syscallFn: { koffi: Koffi; call: (...args: unknown[]) => unknown } | null = null;

/** syscall(2), declared once: variadic, each argument given with its C type. */
function syscall(): { koffi: Koffi; call: (...args: unknown[]) => unknown } {
  if (syscallFn) return syscallFn;
  const { koffi, lib } = load();
  syscallFn = { koffi, call: lib.func('long syscall(long number, ...)') as (...args: unknown[]) => unknown };
  return syscallFn;
}

/** openat2 through syscall(2), or null where its number is not known; ENOSYS from a kernel before 5.6. */
export function openat2(): Openat2 | null {
  if (openat2Cached === undefined) openat2Cached = OPENAT2_NR === null ? null : makeOpenat2(OPENAT2_NR);
  return openat2Cached;
}

function makeOpenat2(nr: number): Openat2 {
  const { koffi, call } = syscall();
  // struct open_how { u64 flags; u64 mode; u64 resolve; }, one per (flags, resolve) pair, kept.
  const hows = new Map<string, Buffer>();
  const howOf = (flags: number, resolve: number): Buffer => {
    const key = `${flags}:${resolve}`;
    let how = hows.get(key);
    if (how === undefined) {
      how = Buffer.alloc(24);
      // Native byte order, as the kernel reads the struct.
      if (endianness() === 'LE') {
        how.writeBigUInt64LE(BigInt(flags), 0);
        how.writeBigUInt64LE(BigInt(resolve), 16);
      } else {
        how.writeBigUInt64BE(BigInt(flags), 0);
        how.writeBigUInt64BE(BigInt(resolve), 16);
      }
      hows.set(key, how);
    }
    return how;
  };
  return (dirfd, path, flags, resolve) => {
    const fd = Number(call(nr, 'int', dirfd, 'str', path, 'void *', howOf(flags, resolve), 'size_t', 24));
    return { fd, errno: fd < 0 ? koffi.errno() : 0 };
  };
}

/** getdents64's number on the architectures whose table is known; null elsewhere (the caller lists through /proc). */
const GETDENTS64_NR: number | null =
  (
    { x64: 217, arm: 217, ia32: 220, s390x: 220, ppc64: 202, ppc: 202, arm64: 61, riscv64: 61, loong64: 61 } as Record<
      string,
      number
    >
  )[process.arch] ?? null;

/** The directory reads of a descriptor: getdents64(2) into `buf`, and readlinkat(2) of a link's text into `buf`. */
export interface DirCalls {
  /** Bytes of linux_dirent64 records written into `buf` (0 at the end), or −1 with errno. */
  getdents64(fd: number, buf: Buffer): { n: number; errno: number };
  /** Bytes of the link's text (`path` '' reads the link `fd` itself names, an O_PATH descriptor), or −1 with errno. */
  readlinkat(fd: number, path: string, buf: Buffer): { n: number; errno: number };
}

let dirCached: DirCalls | null | undefined;

/** getdents64 and readlinkat, or null where getdents64's number is not known. */
export function dirCalls(): DirCalls | null {
  if (dirCached === undefined) dirCached = GETDENTS64_NR === null ? null : makeDirCalls(GETDENTS64_NR);
  return dirCached;
}

function makeDirCalls(nr: number): DirCalls {
  const { koffi, call } = syscall();
  const cReadlinkat = load().lib.func('long readlinkat(int dirfd, const char *path, void *buf, size_t size)');
  return {
    getdents64(fd, buf) {
      const n = Number(call(nr, 'int', fd, 'void *', buf, 'size_t', buf.length));
      return { n, errno: n < 0 ? koffi.errno() : 0 };
    },
    readlinkat(fd, path, buf) {
      const n = Number(cReadlinkat(fd, path, buf, buf.length));
      return { n, errno: n < 0 ? koffi.errno() : 0 };
    },
  };
}
