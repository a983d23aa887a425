// `--capture-dir DIR` of watch and export: the options, and how a capture of what is watched is taken. A live
// host or a sysroot directory is captured as `snapshot` captures it, in wall time beside the rounds; the
// emulator in process is rendered into a temporary tree at each of the watched rounds and that is captured; a
// recording being replayed is a capture already and is refused.
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Argv } from 'yargs';
import type { Backend } from '../backend.js';
import { Hfi1SdmaError, usageError } from '../errors.js';
import { isEmulatedSysroot } from '../hw/paths.js';
import { type CaptureLimits, Captures, checkCaptureDir, DEFAULT_CAPTURE_LIMITS, type TakeSnapshot } from '../monitor/capture.js';
import { isAdvanceable } from '../monitor/pace.js';
import { makePrivateTree } from '../private-tree.js';
import { DEFAULT_LIMITS } from '../snapshot/format.js';
import { parseIntArg } from './args.js';
import { sysrootOf } from './backend-select.js';
import type { CliContext } from './context.js';
import { version } from './version.js';

const MIB = 1024 * 1024;

/** The capture options, shared by watch and export. */
export function captureOptions(y: Argv): Argv {
  return y
    .option('capture-dir', {
      type: 'string',
      describe:
        'write a snapshot (3 instants, 1 s apart) into DIR when an engine first turns stalled, halted or stranded, or a unit goes',
    })
    .option('capture-keep', {
      type: 'string',
      describe: `with --capture-dir: captures kept, the oldest removed past it (default ${DEFAULT_CAPTURE_LIMITS.keep})`,
    })
    .option('capture-max-mb', {
      type: 'string',
      describe: `with --capture-dir: MiB all captures may take (default ${DEFAULT_CAPTURE_LIMITS.maxBytes / MIB})`,
    });
}

/** The limits the options give (usage errors for bad values, or for limits without a directory). */
export function captureLimitsOf(args: Record<string, unknown>): CaptureLimits | null {
  const dir = args.captureDir;
  if (dir === undefined) {
    for (const o of ['captureKeep', 'captureMaxMb'] as const) {
      if (args[o] !== undefined)
        throw usageError(`--${o === 'captureKeep' ? 'capture-keep' : 'capture-max-mb'} needs --capture-dir DIR`);
    }
    return null;
  }
  if (String(dir) === '') throw usageError('--capture-dir needs a directory');
  return {
    ...DEFAULT_CAPTURE_LIMITS,
    keep: args.captureKeep === undefined ? DEFAULT_CAPTURE_LIMITS.keep : parseIntArg('--capture-keep', args.captureKeep, 1, 1000),
    maxBytes:
      args.captureMaxMb === undefined
        ? DEFAULT_CAPTURE_LIMITS.maxBytes
        : parseIntArg('--capture-max-mb', args.captureMaxMb, 1, 1024 * 1024) * MIB,
  };
}

/** A snapshot of the host or sysroot directory being read, in wall time. */
export function hostTake(sysroot: string): TakeSnapshot {
  return async (file, _trigger, how) => {
    const { captureSnapshot } = await import('../snapshot/capture.js');
    await captureSnapshot(
      sysroot,
      file,
      { host: hostname(), toolVersion: version(), now: new Date(), emulated: isEmulatedSysroot(sysroot) },
      {
        samples: how.samples,
        intervalMs: how.intervalMs,
        clock: { nowMs: () => Date.now() },
        sleep: how.wait,
        limits: { ...DEFAULT_LIMITS, maxStoredBytes: how.maxBytes },
        output: { shownAs: how.shownAs, mode: how.mode },
      },
    );
  };
}

/** A snapshot of the emulator in process: its tree rendered into a temporary at each instant, and captured. */
export function emuTake(backend: Backend): TakeSnapshot {
  return async (file, _trigger, how) => {
    const [{ writeSysroot, closeSysroot }, { captureSnapshot }] = await Promise.all([
      import('../emu/sysroot.js'),
      import('../snapshot/capture.js'),
    ]);
    const info = (await backend.units())[0];
    if (!info) throw new Hfi1SdmaError('E_NO_DEVICE', 'the emulator has no unit to capture');
    const u = (await backend.unit(info.name)) as unknown as Parameters<typeof writeSysroot>[0];
    const priv = makePrivateTree('hfi1-sdma-capture-');
    const dir = join(priv.root, 'tree');
    // The capture's clock is the virtual time of the tree it reads (rendered at each instant), not the
    // emulator's, which the rounds move on meanwhile.
    let renderedAtMs = 0;
    const render = async () => {
      renderedAtMs = u.nowMs;
      await writeSysroot(u, dir);
    };
    try {
      await render();
      await captureSnapshot(
        dir,
        file,
        { host: hostname(), toolVersion: version(), now: new Date(), emulated: true },
        {
          samples: how.samples,
          intervalMs: how.intervalMs,
          clock: { nowMs: () => renderedAtMs },
          sleep: async (ms) => {
            await how.wait(ms);
            await render();
          },
          limits: { ...DEFAULT_LIMITS, maxStoredBytes: how.maxBytes },
          output: { shownAs: how.shownAs, mode: how.mode },
        },
      );
    } finally {
      closeSysroot(u, dir);
      await priv.remove();
    }
  };
}

/**
 * The captures `--capture-dir` asks for, or null without it. The directory is checked (and created) before
 * anything is watched; `log` gets one line per capture written, failed or removed.
 */
export function openCaptures(
  args: Record<string, unknown>,
  ctx: CliContext,
  backend: Backend,
  log: (line: string) => void,
): Captures | null {
  const limits = captureLimitsOf(args);
  if (!limits) return null;
  if (backend.recording) {
    throw usageError(
      `--capture-dir: ${backend.recording.source} is a recording already; captures are of a live host, a sysroot directory or the emulator`,
    );
  }
  const emulated = backend.kind === 'emu';
  const sysroot = sysrootOf(ctx.global);
  const dir = checkCaptureDir(String(args.captureDir), emulated ? [] : [sysroot], process.getuid?.() ?? null);
  const advance = isAdvanceable(backend) ? backend.advanceMs.bind(backend) : null;
  return new Captures({
    dir,
    limits,
    take: emulated ? emuTake(backend) : hostTake(sysroot),
    pace: emulated && advance ? { kind: 'rounds', advance } : { kind: 'wall' },
    wallNowMs: () => Date.now(),
    log,
  });
}
