// No false stranded verdict while every workload's senders sleep and wake all the time, read
// through the rendered sysroot with the unlocked, torn reads a live host gives. npm test keeps a
// share (half a virtual second of each workload: rounds 100 ms apart over 500 ms, 2.5 times the 200 ms a strand
// must last); npm run soak runs the full minute on every flavour (WFR on the driver's normal map of two engines per
// VL, the CN5000 under the Cornelis hfi1 and under hfi2).
import { describe, expect, it } from 'vitest';
import { EmuUnit } from '../../src/emu/index.js';
import { SOAK } from '../support/runs.js';
import { tempDirs } from '../support/temp.js';
import { observe } from './strand-support.js';

const tmp = tempDirs('no-false-strand-');

// Each workload, and whether its rings fill so that senders sleep (the test must see waiters).
// npm test lightens the costliest to emulate (many packets, many small ones, or many sleeps); the soak runs them whole.
const WORKLOADS: [string, boolean][] = [
  [SOAK ? 'mixed' : 'mixed:gbps=25', true],
  [SOAK ? 'qp' : 'qp:gbps=10', false],
  [SOAK ? 'psm' : 'psm:gbps=10', true],
  [SOAK ? 'small' : 'small:gbps=1', false],
  ['line-rate:gbps=20', true],
  ['idle', false],
];

/** The hosts: WFR on the driver's normal map (16 engines, two per VL), and the CN5000 flavours. */
const FLAVOURS: [string, ConstructorParameters<typeof EmuUnit>[0]][] = [
  ['wfr upstream, 16 engines (two per VL)', { engines: 16 }],
  ['jkr cornelis, 16 engines', { chip: 'jkr', driver: 'cornelis', engines: 16 }],
  ['jkr hfi2, two ports, engines 8-15', { chip: 'jkr', driver: 'hfi2', ports: 2, firstEngine: 8, engines: 8 }],
];

/** npm test: every workload on 8 engines, and mixed on the normal two-per-VL map; soak: every workload on every flavour. */
const CASES: [string, string, boolean, ConstructorParameters<typeof EmuUnit>[0]][] = SOAK
  ? FLAVOURS.flatMap(([host, o]) => WORKLOADS.map(([w, fills]): [string, string, boolean, typeof o] => [w, host, fills, o]))
  : [
      ...WORKLOADS.map(([w, fills]): [string, string, boolean, ConstructorParameters<typeof EmuUnit>[0]] => [
        w,
        'wfr upstream, 8 engines',
        fills,
        { engines: 8 },
      ]),
      // On 16 engines at a quarter of the link rate: the rings fill and the senders sleep and wake as at full rate,
      // in a quarter of the events (the soak runs every workload on this map, at full rate).
      ['mixed:gbps=25', 'wfr upstream, 16 engines (two per VL)', true, { engines: 16 }],
    ];

describe('no false stranded verdict while senders sleep and wake all the time', () => {
  const seconds = SOAK ? 60 : 0.5;
  it.each(CASES)(`${seconds} virtual seconds of %s on %s, read through the sysroot`, async (workload, _host, fills, o) => {
    const u = new EmuUnit({ seed: 9, ...o, workload });
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
