// parse.qpStats: a qp_stats (qp_iter_print, hfi1 qp.c) of 10,000 QPs parsed vs a loop over the same bytes.

import { qpStatsLine } from '../src/emu/qp-stats.js';
import { parseQpStats } from '../src/hw/parse/qp-stats.js';
import { type BenchResult, type BenchSuite, measureRatio, nsPerOp, round } from './harness.js';

/** 10,000 QPs in the current upstream format: QP0/QP1, then RC QPs over 16 engines, one in seven waiting for descriptors. */
export function qpStatsText(qps: number): string {
  let text = '';
  for (let i = 0; i < qps; i++) {
    const waiting = i % 7 === 3;
    text += qpStatsLine({
      slot: i < 2 ? i : 2 + (i % 4093),
      idle: !waiting,
      qpn: i < 2 ? i : 0x40 + i,
      refcount: waiting ? 2 : 1,
      type: i === 0 ? 'SMI' : i === 1 ? 'GSI' : 'RC',
      state: 3,
      sFlags: waiting ? 0x80001000 : i % 3 === 0 ? 0x80000000 : 0,
      sdmaPending: i % 5 === 0 ? 4 : 0,
      pioPending: 0,
      onList: waiting,
      engine: i === 0 ? null : i % 16,
      sendContext: i % 8,
      pid: 20000 + i,
    });
  }
  return text;
}

/** The plainest look at every byte: a loop that counts the newlines (what any parser must at least do). */
export function countNewlines(bytes: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 10) n++;
  return n;
}

/** Parses (or byte loops) in one measured round: a round is tens of milliseconds. */
const PER_ROUND = 10;

async function run(): Promise<BenchResult[]> {
  const qps = 10_000;
  const text = qpStatsText(qps);
  const bytes = Buffer.from(text, 'latin1');
  let sink = 0;
  const r = await measureRatio(
    'parse.qpStats',
    'ms/file',
    {
      work: () => {
        for (let i = 0; i < PER_ROUND; i++) sink += parseQpStats(bytes).records.length;
      },
      baseline: () => {
        for (let i = 0; i < PER_ROUND; i++) sink += countNewlines(bytes);
      },
      perRound: PER_ROUND,
      rounds: 15,
    },
    { max: 3 },
    { bytes: bytes.length, qps, baselineIs: 'a loop over the same bytes counting newlines' },
  );
  // The same parse from the already decoded text, and split('\n') (a native search), for comparison.
  const opts = { batch: 1, minMs: 600, warmupMs: 200 };
  r.fromTextMs = round(nsPerOp(() => parseQpStats(text).records.length, opts) / 1e6);
  r.splitMs = round(nsPerOp(() => text.split('\n').length, opts) / 1e6);
  r.mbPerSec = round(bytes.length / 1e6 / (r.value / 1000));
  if (sink === -1) console.log('');
  return [r];
}

export const qpStatsBenchSuite: BenchSuite = { name: 'parse.qpStats', run };
