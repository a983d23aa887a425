// The per-engine reads of a unit besides sdes and the BAR: the interrupt counters from debugfs
// counter_names + counters (the debugfs counters, debugfs.c) or sysfs hw_counters (the hfi1 sysfs attributes, sysfs.c), read whole so that a fault shows
// before merging; and sdma<N>/vl and cpu_list (sdma<N>/vl and cpu_list, sysfs.c).
import { join } from 'node:path';
import type { EngineCounters } from '../backend.js';
import {
  COUNTER_DESC_FETCHED,
  COUNTER_ERR,
  COUNTER_IDLE_INT,
  COUNTER_PROGRESS_INT,
  COUNTER_SDMA_INT,
} from '../progress/constants.js';
import { errnoCode, type HwFs, oddFileReason, readdirOrNull, readError, readSource } from './fsio.js';
import {
  type CounterName,
  countersByName,
  engineCounters,
  hwCounterName,
  parseCounterNames,
  parseCounterValues,
  parseHwCounterValue,
} from './parse/counters.js';
import { parseCpuList, parseVl } from './parse/sysfs.js';
import type { UnitPaths } from './paths.js';
import type { WarningLog } from './warnings.js';

/** Counters of the requested engines, by engine; null where an engine's counters are incomplete. */
export type CountersByEngine = Map<number, EngineCounters | null>;

/**
 * The names of the last counter_names text read at each path: the driver writes the same list for as long as it is
 * loaded, and a watch reads it at every sample (parsed again only when the text differs).
 */
const namesRead = new Map<string, { text: string; names: readonly CounterName[] }>();
/** Paths remembered at most (one per unit a process watches; a long-lived library user may open many trees). */
const NAMES_KEPT = 64;

/** counter_names at `path`, parsed (or as parsed last time, when its text is the same). */
function counterNames(text: string, path: string): readonly CounterName[] {
  const last = namesRead.get(path);
  if (last !== undefined && last.text === text) return last.names;
  const names = parseCounterNames(text, path);
  if (namesRead.size >= NAMES_KEPT) namesRead.clear();
  namesRead.set(path, { text, names });
  return names;
}

/** debugfs counter_names + counters (the debugfs counters, debugfs.c) for the engines. */
export async function readDebugfsCounters(fs: HwFs, p: UnitPaths, engines: readonly number[]): Promise<CountersByEngine> {
  const names = counterNames(Buffer.from(await readSource(fs, p.counterNames)).toString('utf8'), p.counterNames);
  const values = parseCounterValues(await readSource(fs, p.counters), names.length, p.counters);
  const byName = countersByName(names, values);
  return new Map(engines.map((e) => [e, engineCounters(byName, e)]));
}

const BASES = [COUNTER_DESC_FETCHED, COUNTER_SDMA_INT, COUNTER_IDLE_INT, COUNTER_PROGRESS_INT, COUNTER_ERR];
const ENGINE_COUNTER = new RegExp(`^(?:${BASES.join('|')})\\d{1,2}$`);

/** True for a device hw_counters file readHwCounters reads (an engine's counter, `SDMAInt3` or `SDMAInt3,32`); the rest it never reads. */
export function isEngineHwCounter(fileName: string): boolean {
  return ENGINE_COUNTER.test(hwCounterName(fileName));
}

/** sysfs hw_counters (the hfi1 sysfs attributes, sysfs.c): one file per counter, `SDMAInt3` or `SDMAInt3,32`, for the engines. */
export async function readHwCounters(fs: HwFs, dir: string, engines: readonly number[]): Promise<CountersByEngine> {
  const files = new Map(((await readdirOrNull(fs, dir)) ?? []).map((f) => [hwCounterName(f), f]));
  const out: CountersByEngine = new Map();
  for (const e of engines) {
    const m = new Map<string, bigint>();
    for (const base of BASES) {
      const f = files.get(`${base}${e}`);
      if (f === undefined) continue;
      const path = join(dir, f);
      m.set(`${base}${e}`, parseHwCounterValue(Buffer.from(await readSource(fs, path)).toString('utf8'), path));
    }
    out.set(e, engineCounters(m, e));
  }
  return out;
}

/**
 * sdma<N>/vl and cpu_list (sdma<N>/vl and cpu_list, sysfs.c) of the engine directory `dir`. A read error is "unknown" (an
 * unmapped engine's vl fails to read); a file that is not the kernel's is a warning; a malformed
 * or oversized one fails (sysfs is their only source).
 */
export async function readEngineSysfs(
  fs: HwFs,
  dir: string,
  log: WarningLog,
): Promise<{ vl: number | null; cpuList: string | null }> {
  const read = async <T>(f: 'vl' | 'cpu_list', parse: (text: string, path: string) => T): Promise<T | null> => {
    const path = join(dir, f);
    let text: string;
    try {
      text = Buffer.from(await fs.readFile(path)).toString('utf8');
    } catch (e) {
      if (errnoCode(e) === 'EFBIG') throw readError(e, path);
      const why = await oddFileReason(fs, path, e);
      if (why !== null) log.add({ source: 'sysfs', path, key: `sysfs:${path}`, message: `${path}: ${why}; ${f} is left out` });
      return null;
    }
    return parse(text, path);
  };
  const vl = await read('vl', parseVl);
  const cpuList = await read('cpu_list', (t, p) => parseCpuList(t, p).text);
  return { vl, cpuList };
}
