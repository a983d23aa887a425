// The per-engine interrupt counters of a unit: debugfs counter_names + counters (§g.4), else the
// same counters as sysfs hw_counters files (§h.1). Whole reads, so a fault shows before merging.
import { join } from 'node:path';
import type { EngineCounters } from '../backend.js';
import {
  COUNTER_DESC_FETCHED,
  COUNTER_ERR,
  COUNTER_IDLE_INT,
  COUNTER_PROGRESS_INT,
  COUNTER_SDMA_INT,
} from '../progress/constants.js';
import { type HwFs, readdirOrNull, readSource } from './fsio.js';
import {
  countersByName,
  engineCounters,
  hwCounterName,
  parseCounterNames,
  parseCounterValues,
  parseHwCounterValue,
} from './parse/counters.js';
import type { UnitPaths } from './paths.js';

/** Counters of the requested engines, by engine; null where an engine's counters are incomplete. */
export type CountersByEngine = Map<number, EngineCounters | null>;

/** debugfs counter_names + counters (§g.4) for the engines. */
export async function readDebugfsCounters(fs: HwFs, p: UnitPaths, engines: readonly number[]): Promise<CountersByEngine> {
  const names = parseCounterNames(Buffer.from(await readSource(fs, p.counterNames)).toString('utf8'), p.counterNames);
  const values = parseCounterValues(await readSource(fs, p.counters), names.length, p.counters);
  const byName = countersByName(names, values);
  return new Map(engines.map((e) => [e, engineCounters(byName, e)]));
}

const BASES = [COUNTER_DESC_FETCHED, COUNTER_SDMA_INT, COUNTER_IDLE_INT, COUNTER_PROGRESS_INT, COUNTER_ERR];

/** sysfs hw_counters (§h.1): one file per counter, `SDMAInt3` or `SDMAInt3,32`, for the engines. */
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
