// Which sources of a unit are readable here, and for each that is not, why and what to do.
// Shared by UnitInfo.sources and `doctor`. Probing only reads (and maps resource0 read-only).
import { join } from 'node:path';
import type { SourceName, SourceStatus, SourceWarning } from '../backend.js';
import { isHfi1SdmaError } from '../errors.js';
import { chipModel } from '../progress/chip.js';
import type { FoundUnit } from './discover.js';
import { errnoCode, type HwFs, oddFileReason, readdirOrNull, readTextOrNull } from './fsio.js';
import { hwCounterName } from './parse/counters.js';
import { parseInterrupts } from './parse/interrupts.js';
import { engineDir } from './paths.js';
import { INTERRUPTS_CAP_BYTES } from './read-file.js';
import { openSdmaWindow } from './regs.js';
import { waiterSources } from './waiters-sources.js';

const ROOT_FIX = 'run as root (e.g. sudo hfi1-sdma …)';
const MOUNT_FIX = 'mount debugfs: mount -t debugfs none /sys/kernel/debug';

/** The kernel lockdown mode from sys/kernel/security/lockdown (`[none]`, `[integrity]`, …), or null. */
export async function lockdownMode(fs: HwFs, path: string): Promise<string | null> {
  const text = await readTextOrNull(fs, path).catch(() => null);
  const m = text === null ? null : /\[([a-z]+)\]/.exec(text);
  return m ? (m[1] as string) : null;
}

/** Statuses of sources that are there but are not the kernel's file (see probeSources). */
const ODD = new WeakSet<SourceStatus>();

function odd(status: SourceStatus): SourceStatus {
  ODD.add(status);
  return status;
}

/** Probe the files of a debugfs source in turn; the first that cannot be read decides. */
async function debugfsStatus(fs: HwFs, u: FoundUnit, source: SourceName, files: readonly string[]): Promise<SourceStatus> {
  const file = files[files.length - 1] as string;
  let failed = file;
  try {
    for (const f of files) {
      failed = f;
      await fs.canRead(f);
    }
    return { source, readable: true, path: file };
  } catch (e) {
    const why = await oddFileReason(fs, failed, e);
    if (why !== null) return odd({ source, readable: false, path: failed, reason: why });
    const code = errnoCode(e);
    if (code === 'EACCES') {
      return { source, readable: false, path: file, reason: 'debugfs is readable by root only (mode 0700)', fix: ROOT_FIX };
    }
    if (code === 'EPERM') {
      const mode = await lockdownMode(fs, u.paths.lockdown);
      return {
        source,
        readable: false,
        path: file,
        reason: `the kernel refused the read (EPERM): kernel lockdown restricts debugfs${mode ? ` (lockdown mode: ${mode})` : ''}`,
        fix: 'boot without kernel lockdown (Secure Boot off, or lockdown=none); meanwhile the BAR, hw_counters and /proc/interrupts may still be readable',
      };
    }
    const root = await readdirOrNull(fs, u.paths.debugRoot);
    if (root === null || root.length === 0) {
      return { source, readable: false, path: file, reason: `debugfs is not mounted at ${u.paths.debugRoot}`, fix: MOUNT_FIX };
    }
    const mod = u.paths.module;
    const moduleDir = await readdirOrNull(fs, join(u.paths.debugRoot, mod));
    if (moduleDir === null) {
      return {
        source,
        readable: false,
        path: file,
        reason: `debugfs is mounted but has no ${mod} directory`,
        fix: `load the ${mod} driver (modprobe ${mod}); a kernel without CONFIG_DEBUG_FS has no sdes`,
      };
    }
    // Node's message already starts with the code ('ENOENT: no such file or directory, stat …').
    const message = String((e as Error).message);
    const reason = code && !message.startsWith(`${code}:`) ? `${code}: ${message}` : code ? message : `cannot read: ${message}`;
    return { source, readable: false, path: file, reason };
  }
}

async function hwCountersStatus(fs: HwFs, u: FoundUnit): Promise<SourceStatus> {
  const dir = u.paths.hwCounters;
  const names = await readdirOrNull(fs, dir);
  if (names === null) {
    return { source: 'hwCounters', readable: false, path: dir, reason: 'no hw_counters directory for this unit' };
  }
  // Any engine's SDMAInt<E>: a unit with an engine window (hfi2 SR-IOV) need not have engine 0.
  const sdmaInt = names.find((n) => /^SDMAInt[0-9]{1,2}$/.test(hwCounterName(n)));
  if (sdmaInt === undefined) {
    return {
      source: 'hwCounters',
      readable: false,
      path: dir,
      reason: 'hw_counters lists no per-engine SDMA counters (SDMAInt0 …) on this kernel',
    };
  }
  const first = join(dir, sdmaInt);
  try {
    await fs.canRead(first);
    return { source: 'hwCounters', readable: true, path: dir };
  } catch (e) {
    const why = await oddFileReason(fs, first, e);
    if (why !== null) return odd({ source: 'hwCounters', readable: false, path: first, reason: why });
    return {
      source: 'hwCounters',
      readable: false,
      path: dir,
      reason: `cannot read: ${errnoCode(e) || String(e)}`,
      fix: ROOT_FIX,
    };
  }
}

async function interruptsStatus(fs: HwFs, u: FoundUnit): Promise<SourceStatus> {
  const file = u.paths.interrupts;
  let text: string | null;
  try {
    text = await readTextOrNull(fs, file, INTERRUPTS_CAP_BYTES);
  } catch (e) {
    const why = await oddFileReason(fs, file, e);
    if (why !== null) return odd({ source: 'interrupts', readable: false, path: file, reason: why });
    const code = errnoCode(e);
    if (code === 'EFBIG') return { source: 'interrupts', readable: true, path: file }; // the read says why
    return {
      source: 'interrupts',
      readable: false,
      path: file,
      reason:
        code === 'EACCES'
          ? 'permission denied (EACCES): procfs is not readable by this user'
          : `cannot read: ${code || String(e)}`,
    };
  }
  if (text === null)
    return {
      source: 'interrupts',
      readable: false,
      path: file,
      reason: 'no /proc/interrupts (procfs not mounted?)',
      fix: 'mount -t proc proc /proc',
    };
  let vectors: Map<string, number>;
  try {
    vectors = parseInterrupts(text, file);
  } catch {
    // Readable but malformed: each sample applies the one rule for malformed sources (unit.ts).
    return { source: 'interrupts', readable: true, path: file };
  }
  if (![...vectors.keys()].some((k) => k.startsWith(`${u.name}/`))) {
    return {
      source: 'interrupts',
      readable: false,
      path: file,
      reason: `no '${u.name} sdma<N>' vectors: the engines have no MSI-X vectors of their own`,
    };
  }
  return { source: 'interrupts', readable: true, path: file };
}

async function barStatus(fs: HwFs, u: FoundUnit): Promise<SourceStatus> {
  const file = u.paths.resource0;
  try {
    openSdmaWindow(file, chipModel(u.chip), u.paths.sysroot).close();
    return { source: 'bar', readable: true, path: file };
  } catch (e) {
    if (!isHfi1SdmaError(e)) throw e;
    let fix: string | undefined;
    let reason = e.message.startsWith(`${file}: `) ? e.message.slice(file.length + 2) : e.message;
    if (/root only/.test(reason)) fix = ROOT_FIX;
    else if (/lockdown/.test(reason)) {
      const mode = await lockdownMode(fs, u.paths.lockdown);
      if (mode) reason += ` (lockdown mode: ${mode})`;
      fix = 'boot without kernel lockdown (Secure Boot off, or lockdown=none), or use debugfs sdes';
    } else if (/IO_STRICT_DEVMEM/.test(reason)) fix = 'boot with iomem=relaxed on the kernel command line, or use debugfs sdes';
    return fix === undefined
      ? { source: 'bar', readable: false, path: file, reason }
      : { source: 'bar', readable: false, path: file, reason, fix };
  }
}

async function sysfsStatus(fs: HwFs, u: FoundUnit): Promise<SourceStatus> {
  const dir = engineDir(u.paths, u.engineDirIds[0] ?? 0);
  if (u.engineDirs === 0) {
    return { source: 'sysfs', readable: false, path: dir, reason: 'no sdma<N> directories (kernels before v4.8)' };
  }
  const file = join(dir, 'cpu_list');
  try {
    await fs.canRead(file);
    return { source: 'sysfs', readable: true, path: dir };
  } catch (e) {
    const why = await oddFileReason(fs, file, e);
    if (why !== null) return odd({ source: 'sysfs', readable: false, path: file, reason: why });
    return { source: 'sysfs', readable: false, path: dir, reason: `cannot read cpu_list: ${errnoCode(e) || String(e)}` };
  }
}

/**
 * debugfs port counters (portcounter_names and port1counters). When they cannot be read, every port's counters still
 * come from sysfs ports/<N>/hw_counters and ports/<N>/counters, which anyone may read: the status says so.
 */
async function portCountersStatus(fs: HwFs, u: FoundUnit): Promise<SourceStatus> {
  const st = await debugfsStatus(fs, u, 'portCounters', [u.paths.portCounterNames, join(u.paths.debugDir, 'port1counters')]);
  if (st.readable || ODD.has(st)) return st;
  return { ...st, reason: `${st.reason}; the port counters come from sysfs ports/<N>/hw_counters and counters instead` };
}

/**
 * The readability of every source of a unit, and a warning for each source that is there but
 * cannot be read as the kernel's file (a FIFO, a directory, a dangling link): unlike an absent
 * source or a missing privilege that is never expected, so it is said even when others stand in.
 */
export async function probeSources(fs: HwFs, u: FoundUnit): Promise<{ sources: SourceStatus[]; warnings: SourceWarning[] }> {
  const sources = [
    await debugfsStatus(fs, u, 'sdes', [u.paths.sdes]),
    await debugfsStatus(fs, u, 'counters', [u.paths.counterNames, u.paths.counters]),
    await hwCountersStatus(fs, u),
    await interruptsStatus(fs, u),
    await barStatus(fs, u),
    await sysfsStatus(fs, u),
    await portCountersStatus(fs, u),
    ...(await waiterSources(fs, u)),
  ];
  const warnings = sources
    .filter((st) => ODD.has(st))
    .map((st) => ({
      source: st.source,
      path: st.path ?? '',
      key: `${st.source}:unreadable`,
      message: `${st.path}: ${st.reason}; ${st.source} is left out`,
    }));
  return { sources, warnings };
}
/** True when the named source is readable. */
export function readable(sources: readonly SourceStatus[], name: SourceName): boolean {
  return sources.some((s) => s.source === name && s.readable);
}
