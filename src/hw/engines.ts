// The engine set of a unit: absolute hardware indexes, possibly a window that does not start at 0 (an SR-IOV
// function of hfi2 dumps, counts and names only first_sdma_engine..last_sdma_engine). Taken from the first
// source that shows it: the sdma<E> directories, the `sde a-b` line of hw_resources, the sdes records,
// SEND_DMA_ENGINES, else the chip's 16 engines.

import { TXE_NUM_SDMA_ENGINES } from '../progress/constants.js';
import { engineIdsText } from '../progress/engine-ids.js';
import type { FoundUnit } from './discover.js';
import type { SdesDump } from './parse/sdes.js';

/** The engine set and the line that says where it came from (a line of the flavour's evidence). */
export interface EngineSet {
  engineIds: number[];
  evidence: string;
}

/** `8-15`, or `0-3,6` when the set has gaps. */
export function formatEngineIds(ids: readonly number[]): string {
  return engineIdsText(ids);
}

const range = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

/**
 * The engine set by the rule above. `sdes` is a parsed dump (headers are enough) when sdes was readable;
 * `sendDmaEngines` the value of SEND_DMA_ENGINES when the BAR was readable.
 */
export function engineSetOf(u: FoundUnit, sdes: SdesDump | null, sendDmaEngines: number | null): EngineSet {
  const say = (ids: number[], from: string): EngineSet => ({
    engineIds: ids,
    evidence: `engines ${formatEngineIds(ids)}: ${from}`,
  });
  if (u.engineDirIds.length > 0) return say(u.engineDirIds, `the sdma<E> directories of ${u.paths.classDir}`);
  if (u.sdeWindow) {
    const how = u.sdeWindow.bound === 'inclusive' ? 'last engine included' : 'read as one past the last engine';
    return say(u.sdeWindow.engines, `${u.paths.hwResources} line ${u.sdeWindow.line} (sde, ${how})`);
  }
  if (sdes) {
    const ids = sdes.records.map((r) => r.header.engine);
    if (sdes.torn?.header) ids.push(sdes.torn.header.engine);
    if (ids.length > 0) return say(ids, `the records of ${u.paths.sdes}`);
  }
  if (sendDmaEngines !== null && sendDmaEngines >= 1 && sendDmaEngines <= TXE_NUM_SDMA_ENGINES) {
    return say(range(0, sendDmaEngines), `SEND_DMA_ENGINES of ${u.paths.resource0}`);
  }
  return say(range(0, TXE_NUM_SDMA_ENGINES), `no source shows them; the chip's ${TXE_NUM_SDMA_ENGINES} engines assumed`);
}
