// hfi1-sdma/emulator: the emulated backend, driven from code. It is a Backend like any other (the monitor and
// every command read it the same way), plus what only an emulator can do: let virtual time pass, inject a fault
// now or at a time, and write or serve a sysroot that the live backend reads as it reads a host. Every argument
// is checked here, in the library's words: the model underneath trusts what it is given.
import { type Hfi1SdmaError, isHfi1SdmaError, usageError } from '../errors.js';
import type { TwinFixture } from '../twin/fixture.js';
import { checkNumber, checkOneOf, checkOptions, checkSignal, checkText, checkTimeMs, shown } from './check.js';
import type { Emulator, EmulatorOptions } from './emulator-types.js';
import { inLibraryTerms } from './library-terms.js';
import { remember } from './opened.js';

export type * from '../backend.js';
export type * from './emulator-types.js';

const OPTIONS = [
  'seed',
  'engines',
  'firstEngine',
  'chip',
  'driver',
  'ports',
  'activePorts',
  'descqCnt',
  'workload',
  'atMs',
  'faults',
  'signal',
  'from',
  'fromInstant',
  'variant',
] as const;

/** The options a capture fixes: refused beside `from`. */
const FIXED_BY_CAPTURE = ['engines', 'firstEngine', 'chip', 'driver', 'ports', 'activePorts', 'descqCnt'] as const;

/**
 * The options, each checked in the library's words (the emulator's own checks name the command's flags). A new
 * option (a capture to start from, say) is one more name here and one more check.
 */
function checkEmulatorOptions(given: EmulatorOptions | undefined): EmulatorOptions {
  const where = 'createEmuBackend';
  const o: EmulatorOptions = checkOptions(where, given, OPTIONS);
  const n = (name: keyof EmulatorOptions, rule: Parameters<typeof checkNumber>[3]) => {
    if (o[name] !== undefined) checkNumber(where, name, o[name], rule);
  };
  n('seed', { min: 0, max: 0xffff_ffff, integer: true, what: 'a seed' });
  n('engines', { min: 1, max: 16, integer: true, what: 'a count of engines' });
  n('firstEngine', { min: 0, max: 15, integer: true, what: 'an engine index' });
  n('descqCnt', { min: 0, max: 0xffff_ffff, integer: true, what: 'the sdma_descq_cnt module parameter' });
  n('atMs', { min: 0, max: 86_400_000, what: 'a virtual time in ms' });
  if (o.chip !== undefined) checkOneOf(where, 'chip', o.chip, ['wfr', 'jkr'] as const);
  if (o.driver !== undefined) checkOneOf(where, 'driver', o.driver, ['upstream', 'cornelis', 'hfi2'] as const);
  if (o.ports !== undefined) checkOneOf(where, 'ports', o.ports, [1, 2] as const);
  if (o.activePorts !== undefined) {
    if (!Array.isArray(o.activePorts))
      throw usageError(`${where}: activePorts must be an array of port numbers; got ${shown(o.activePorts)}`);
    for (const p of o.activePorts) checkNumber(where, 'activePorts', p, { min: 1, max: 2, integer: true, what: 'port numbers' });
  }
  if (o.workload !== undefined) checkText(where, 'workload', o.workload, 'a workload (e.g. "mixed:gbps=10")');
  if (o.faults !== undefined) {
    if (!Array.isArray(o.faults))
      throw usageError(`${where}: faults must be an array (e.g. ["stop-fetch@1000:3"]); got ${shown(o.faults)}`);
    for (const f of o.faults) checkText(where, 'faults', f, 'faults written NAME[:PARAM]@MS[:ENGINE]');
  }
  checkSignal(where, o.signal);
  if (o.variant !== undefined) checkOneOf(where, 'variant', o.variant, ['kernel', 'kernel-sample-first'] as const);
  if (o.fromInstant !== undefined) {
    checkNumber(where, 'fromInstant', o.fromInstant, {
      min: 0,
      max: 10_000,
      integer: true,
      what: 'an instant (0 for the first)',
    });
    if (o.from === undefined) throw usageError(`${where}: fromInstant needs from (the capture to start from)`);
  }
  if (o.from !== undefined) {
    if (typeof o.from !== 'string' && (typeof o.from !== 'object' || o.from === null || Array.isArray(o.from))) {
      throw usageError(
        `${where}: from must be a capture's path (.tar.gz), a twin's path (.json) or a twin (the parsed .json); got ${shown(o.from)}`,
      );
    }
    if (typeof o.from === 'string') checkText(where, 'from', o.from, "a capture's path (.tar.gz) or a twin's (.json)");
    const fixed = FIXED_BY_CAPTURE.filter((k) => o[k] !== undefined);
    if (fixed.length > 0) {
      throw usageError(
        `${where}: ${fixed.join(', ')} ${fixed.length === 1 ? 'is' : 'are'} the capture's beside from; drop ${fixed.length === 1 ? 'it' : 'them'}`,
      );
    }
  }
  return o;
}

/** The twin `from` names, read and checked (E_USAGE for a twin object that is not one). */
async function twinFrom(o: EmulatorOptions): Promise<TwinFixture | undefined> {
  if (o.from === undefined) return undefined;
  const where = 'createEmuBackend';
  if (typeof o.from === 'string') {
    const { loadTwin } = await import('../twin/load.js');
    return inLibraryTerms(where, () =>
      loadTwin(o.from as string, { instant: o.fromInstant, option: 'from', instantOption: 'fromInstant' }),
    );
  }
  if (o.fromInstant !== undefined)
    throw usageError(`${where}: fromInstant applies to a capture's path; a twin starts at its own instant`);
  const { checkFixture } = await import('../twin/fixture.js');
  try {
    return checkFixture(o.from, `${where}: from`);
  } catch (e) {
    throw isHfi1SdmaError(e) && e.code === 'E_PARSE' ? usageError(e.message) : e;
  }
}

/** The error for a method called after close(). */
function closedError(what: string): Hfi1SdmaError {
  return usageError(`${what}: the emulator was closed; create another with createEmuBackend()`);
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('the emulator was stopped', 'AbortError');
}

/** Create the emulated backend (one unit: hfi1_0, or hfi2_0 with the hfi2 driver), run to `atMs` on first use. */
export async function createEmuBackend(options?: EmulatorOptions): Promise<Emulator> {
  const o = checkEmulatorOptions(options);
  const [{ createEmuBackend: create }, { warmUp }, { invariantViolations }] = await Promise.all([
    import('../emu/index.js'),
    import('../emu/warm-up.js'),
    import('../emu/invariants.js'),
  ]);
  const twin = await twinFrom(o);
  const pinned = twin?.run;
  const inner = inLibraryTerms('createEmuBackend', () =>
    create({
      seed: o.seed ?? pinned?.seed ?? 1,
      engines: o.engines,
      firstEngine: o.firstEngine,
      chip: o.chip,
      driver: o.driver,
      ports: o.ports,
      activePorts: o.activePorts,
      descqCnt: o.descqCnt,
      workload: o.workload ?? pinned?.workload,
      atMs: o.atMs,
      fault: [...(o.faults ?? pinned?.faults ?? [])],
      param: [...(pinned?.params ?? [])],
      variant: o.variant ?? pinned?.variant,
      twin,
    }),
  );
  const u = inner.model;
  // The warm-up, here where a signal can stop it (the backend's own runs on first use otherwise).
  if (o.signal) {
    o.signal.throwIfAborted();
    if (!(await warmUp(u, inner.atMs, { stopped: () => o.signal?.aborted === true }))) throw abortError(o.signal);
  }
  let closed = false;
  const open = (what: string) => {
    if (closed) throw closedError(what);
  };
  const emulator: Emulator = {
    kind: 'emu',
    emulated: true,
    twin: twin ?? null,
    origin: { host: null, capturedAtMs: null, toolVersion: null, emulated: true },
    async units() {
      open('units()');
      return inner.units();
    },
    async unit(n) {
      open('unit()');
      return inner.unit(n);
    },
    async close() {
      closed = true;
      await inner.close();
    },
    [Symbol.asyncDispose]: () => emulator.close(),
    get nowMs() {
      return u.nowMs;
    },
    advanceMs(ms) {
      open('advanceMs()');
      inner.advanceMs(checkTimeMs('advanceMs(ms)', 'ms', ms));
    },
    async advance(ms, opts) {
      open('advance()');
      checkTimeMs('advance(ms)', 'ms', ms);
      const signal = checkSignal('advance()', checkOptions('advance()', opts, ['signal']).signal);
      await inner.units(); // the warm-up first
      if (!(await warmUp(u, u.nowMs + ms, { stopped: () => signal?.aborted === true }))) {
        throw abortError(signal as AbortSignal);
      }
    },
    injectFault(fault: string, target?: number) {
      open('injectFault()');
      const where = `injectFault(${shown(fault)})`;
      checkText('injectFault()', 'fault', fault, 'a fault (e.g. "stop-fetch", or "stop-fetch@1000:3")');
      if (target !== undefined) checkNumber(where, 'target', target, { min: 0, integer: true, what: 'an engine or a port' });
      if (fault.includes('@')) {
        if (target !== undefined) throw usageError(`${where}: the fault names its time and target; give no target`);
        inLibraryTerms(where, () => u.injectFault(fault));
        return;
      }
      inLibraryTerms(where, () => u.injectFault(`${fault}@${u.nowMs}${target === undefined ? '' : `:${target}`}`));
    },
    async writeSysroot(dir) {
      open('writeSysroot()');
      checkText('writeSysroot(dir)', 'dir', dir, 'a directory');
      const { writeSysroot, closeSysroot } = await import('../emu/sysroot.js');
      await inner.units();
      try {
        await inLibraryTerms('writeSysroot(dir)', () => writeSysroot(u, dir));
      } finally {
        closeSysroot(u, dir);
      }
    },
    async serve(dir, opts) {
      open('serve()');
      const where = 'serve(dir, opts)';
      checkText(where, 'dir', dir, 'a directory');
      const s = checkOptions(where, opts, ['signal', 'intervalMs', 'speed']);
      const signal = checkSignal(where, s.signal);
      if (!signal) throw usageError(`${where}: signal is required (an AbortSignal that ends serving)`);
      const intervalMs =
        s.intervalMs === undefined
          ? 100
          : checkNumber(where, 'intervalMs', s.intervalMs, { min: 10, max: 60_000, what: 'wall ms between rewrites' });
      const speed =
        s.speed === undefined
          ? 1
          : checkNumber(where, 'speed', s.speed, { min: 0.001, max: 1000, what: 'virtual ms per wall ms' });
      const [{ serveSysroot }, { closeSysroot }] = await Promise.all([import('../emu/serve.js'), import('../emu/sysroot.js')]);
      await inner.units();
      try {
        await inLibraryTerms(where, () => serveSysroot(u, dir, { speed, intervalMs, signal }));
      } finally {
        closeSysroot(u, dir);
      }
    },
    totals() {
      open('totals()');
      const t = u.totals();
      return {
        descriptors: t.descriptors,
        txSubmitted: t.txSubmitted,
        txCompleted: t.txCompleted,
        txAborted: t.txAborted,
        waitersAsleep: t.waitersAsleep,
        lostWakeups: t.lostWakeups,
        invariantViolations: invariantViolations(u),
      };
    },
  };
  remember(emulator, { kind: 'emu', unit: u, ready: () => inner.units() });
  return emulator;
}
