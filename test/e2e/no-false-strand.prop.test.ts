// No false stranded verdict while every workload's senders sleep and wake all the time, read
// through the rendered sysroot with the unlocked, torn reads a live host gives. npm test keeps a
// share (1 virtual second of each workload: 10 rounds 100 ms apart, 5 times the 200 ms a strand must last);
// npm run soak runs the full minute.
import { describe, expect, it } from 'vitest';
import { EmuUnit } from '../../src/emu/index.js';
import { SOAK } from '../support/runs.js';
import { tempDirs } from '../support/temp.js';
import { observe } from './strand-support.js';

const tmp = tempDirs('no-false-strand-');

// Each workload, and whether its rings fill so that senders sleep (the test must see waiters).
// npm test lightens the two costliest to emulate (many small packets); the soak runs them whole.
const WORKLOADS: [string, boolean][] = [
  ['mixed', true],
  [SOAK ? 'qp' : 'qp:gbps=10', false],
  ['psm', true],
  [SOAK ? 'small' : 'small:gbps=1', false],
  ['line-rate:gbps=20', true],
  ['idle', false],
];

describe('no false stranded verdict while senders sleep and wake all the time', () => {
  const seconds = SOAK ? 60 : 1;
  it.each(WORKLOADS)(`${seconds} virtual seconds of %s, read through the sysroot`, async (workload, fills) => {
    const u = new EmuUnit({ seed: 9, engines: 8, workload });
    const wrong: string[] = [];
    let seen = 0;
    await observe(u, tmp(), 100, 100 + seconds * 1000, (t, js) => {
      seen += js.length;
      for (const j of js) {
        if (j.verdict === 'stranded' || j.verdict === 'orphaned') wrong.push(`${t} ms: ${j.verdict} on ${j.waiter.engine}`);
      }
    });
    expect(wrong).toEqual([]);
    if (fills) expect(seen).toBeGreaterThan(0);
  });
});
