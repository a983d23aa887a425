// Choosing a backend from the global options (--backend auto|hw|emu, --sysroot).
import { lstatSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Backend, Clock } from '../backend.js';
import { Hfi1SdmaError } from '../errors.js';
import type { GlobalOptions } from './context.js';
import type { Io } from './io.js';

/** The sysroot prefix: --sysroot, else HFI1_SDMA_SYSROOT (folded into --sysroot), else `/`. */
export function sysrootOf(global: GlobalOptions): string {
  return global.sysroot && global.sysroot !== '' ? global.sysroot : '/';
}

/** How a command wants its backend chosen. */
export interface OpenOptions {
  /**
   * May a bare `--backend auto` with no sysroot given fall back to the emulator when the host
   * has no hfi1 or hfi2 unit? True for interactive commands (said on stderr); false for monitoring
   * (health, export), which must never pass the emulator off as the host.
   */
  fallback: boolean;
  /** The clock a live-host backend stamps its samples with; the wall clock when absent (tests pass a virtual one). */
  clock?: Clock;
}

/** A snapshot is a file named .tar.gz or .tgz (the names `hfi1-sdma snapshot` writes). */
function looksLikeSnapshot(path: string): boolean {
  return /\.(tar\.gz|tgz)$/.test(path);
}

/**
 * Check an explicitly given sysroot: it must be a directory or a snapshot file. E_NO_INPUT (66)
 * naming the path otherwise, so a typo never shows some other host (or the emulator).
 */
export function checkSysroot(path: string, label = '--sysroot'): 'dir' | 'snapshot' {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? String(e);
    if (code === 'EACCES') {
      throw new Hfi1SdmaError('E_PERMISSION', `${label} ${path}: permission denied: run as a user who can read it`, {
        cause: e,
      });
    }
    throw new Hfi1SdmaError(
      'E_NO_INPUT',
      `${label} ${path}: ${code === 'ENOENT' ? 'no such file or directory' : code}: name a directory holding sys/ and proc/, or a snapshot .tar.gz`,
      { cause: e },
    );
  }
  if (st.isDirectory()) return 'dir';
  if (st.isFile() && looksLikeSnapshot(path)) return 'snapshot';
  throw new Hfi1SdmaError(
    'E_NO_INPUT',
    `${label} ${path}: not a directory or a snapshot (.tar.gz): name a directory holding sys/ and proc/, or a file written by 'hfi1-sdma snapshot'`,
  );
}

/**
 * Open the selected backend. `--backend emu` is the emulator; `hw` the host or the sysroot;
 * `auto` the host (or the sysroot tree) when it has an hfi1 unit. Only a bare `auto` with no
 * sysroot given, on a command that allows it, falls back to the emulator, saying so on stderr.
 */
export async function openBackend(global: GlobalOptions, io: Io, opts: OpenOptions = { fallback: true }): Promise<Backend> {
  // Backends load on demand: a command that needs only one of them starts faster.
  const createEmuBackend = async (g: GlobalOptions) => (await import('../emu/index.js')).createEmuBackend(g);
  if (global.backend === 'emu') return createEmuBackend(global);
  const explicit = global.sysroot !== undefined && global.sysroot !== '';
  const sysroot = sysrootOf(global);
  if (explicit && checkSysroot(sysroot) === 'snapshot') return snapshotBackend(sysroot);
  if (explicit && isUnpackedOpacapture(sysroot)) {
    return (await import('../snapshot/backend.js')).openOpacaptureBackend(sysroot, { dir: sysroot });
  }
  const { findUnits, openHwBackend } = await import('../hw/index.js');
  if (global.backend === 'hw' || explicit || !opts.fallback) return openHwBackend({ sysroot, clock: opts.clock });
  const units = await findUnits(sysroot);
  if (units.length > 0) return openHwBackend({ sysroot, clock: opts.clock });
  io.stderr(
    'hfi1-sdma: no hfi1 or hfi2 unit under /sys/class/infiniband: using the emulator (--backend emu; --backend hw to insist on hardware)\n',
  );
  return createEmuBackend(global);
}

/**
 * A directory holding an unpacked opacapture (an opacaptureall upload, `uploads/<host>/<name>/`): its sysroot lies
 * under tmp/capture<PID>/, with no sys/ of its own at the top.
 */
function isUnpackedOpacapture(dir: string): boolean {
  if (lstatSync(join(dir, 'sys'), { throwIfNoEntry: false })) return false;
  try {
    return readdirSync(join(dir, 'tmp')).some((n) => /^capture[0-9]{1,10}$/.test(n));
  } catch {
    return false;
  }
}

/** The live-host backend over each instant of an unpacked snapshot; closing it removes the unpacked tree. */
async function snapshotBackend(file: string): Promise<Backend> {
  return (await import('../snapshot/backend.js')).openSnapshotBackend(file);
}
