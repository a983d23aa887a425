// parse.qpStats: a qp_stats (qp_iter_print, hfi1 qp.c) of 10,000 QPs parsed vs split('\n') of the same text.

import { qpStatsLine } from '../src/emu/qp-stats.js';
import { parseQpStats } from '../src/hw/parse/qp-stats.js';
import { type BenchResult, type BenchSuite, nsPerOp, ratioResult } from './harness.js';

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

function run(): BenchResult[] {
  const qps = 10_000;
  const text = qpStatsText(qps);
  const bytes = Buffer.from(text, 'latin1');
  const opts = { batch: 1, minMs: 1500, warmupMs: 300 };
  const split = nsPerOp(() => text.split('\n').length, opts);
  const parse = nsPerOp(() => parseQpStats(bytes).records.length, opts);
  // The same parse from the already decoded text, to show what the bytes-to-text step costs.
  const fromText = nsPerOp(() => parseQpStats(text).records.length, opts);
  const mb = bytes.length / 1e6;
  return [
    ratioResult('parse.qpStats', parse / 1e6, split / 1e6, 'ms/file', 2, {
      bytes: bytes.length,
      qps,
      fromTextMs: Math.round(fromText / 1e4) / 100,
      mbPerSec: Math.round(mb / (parse / 1e9)),
      splitMbPerSec: Math.round(mb / (split / 1e9)),
    }),
  ];
}

export const qpStatsBenchSuite: BenchSuite = { name: 'parse.qpStats', run };
