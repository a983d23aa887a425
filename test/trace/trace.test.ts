// Timelines in Chrome trace-event JSON: `emu race --trace`, `report --trace` and `watch --trace` write documents valid
// against docs/schema/trace.schema.json and sound as a viewer reads them (test/support/trace.ts), equal to the
// golden files of test/fixtures/trace (but for the tool's version); the ids that let two hosts' files merge; a
// target that cannot be written is refused before anything is read, and nothing is left behind.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AsyncEvent, CompleteEvent, TraceEvent } from '../../src/trace/format.js';
import { pidOf, TRACKS, tidOf } from '../../src/trace/ids.js';
import { ROOT } from '../support/child.js';
import { runCli } from '../support/cli.js';
import { tempDirs } from '../support/temp.js';
import { onTrack, readTrace, type TraceDoc, traceProblems } from '../support/trace.js';

const tmp = tempDirs('trace-');
const GOLDEN = join(ROOT, 'test', 'fixtures', 'trace');

/** The document without what changes from run to run (the stamp's host and time, the tool's version), as the golden files hold it. */
function normalised(doc: TraceDoc): string {
  const stable = {
    ...doc,
    host: 'HOST',
    time: 'TIME',
    toolVersion: 'VERSION',
    otherData: { ...doc.otherData, tool: 'hfi1-sdma' },
  };
  return `${JSON.stringify(stable, null, 1)}\n`;
}

/** Compare with the golden file `name` (written when UPDATE_GOLDEN=1: review the diff before committing it). */
function expectGolden(doc: TraceDoc, name: string): void {
  const file = join(GOLDEN, name);
  if (process.env.UPDATE_GOLDEN === '1') {
    mkdirSync(GOLDEN, { recursive: true });
    writeFileSync(file, normalised(doc));
  }
  expect(normalised(doc)).toBe(readFileSync(file, 'utf8'));
}

const spans = (events: TraceEvent[], ph: 'b' | 'e' | 'n', cat: string) =>
  events.filter((e): e is AsyncEvent => e.ph === ph && e.cat === cat);

describe('emu race --trace', () => {
  it('the shortest lost wake-up: a track per actor, each step a slice, the window and the endless sleep as spans', async () => {
    const out = join(tmp(), 'race.json');
    const r = await runCli(['emu', 'race', '--variant', 'kernel', '--senders', 'qp', '--trace', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(`hfi1-sdma: wrote ${out} (57 trace events: the shortest lost wake-up, one track per actor)\n`);
    const doc = readTrace(out);
    expect(traceProblems(doc)).toEqual([]);
    expect(doc.otherData).toMatchObject({ clock: 'steps', source: 'emu race --variant kernel --senders qp' });
    const names = doc.traceEvents
      .filter((e) => e.ph === 'M' && e.name === 'thread_name')
      .map((e) => (e.args as { name: string }).name);
    expect(names).toEqual(['S1 qp', 'chip', 'irq']);
    const s1 = onTrack(doc, 'S1 qp');
    expect(s1.filter((e) => e.ph === 'X').map((e) => (e as CompleteEvent).name)).toEqual([
      'sdma_send_txreq',
      'sdma_check_progress',
      'sample head_lock seq = 14',
      "park txreq on S1's work list",
      'sdma_progress',
      'enqueue S1 on dmawait (1 waiting)',
      'release waitlock',
    ]);
    expect(spans(s1, 'b', 'window').map((e) => e.ts)).toEqual([1]);
    expect(spans(s1, 'e', 'window').map((e) => e.ts)).toEqual([13]);
    expect(spans(s1, 'b', 'sleep').map((e) => e.ts)).toEqual([14]);
    expect(spans(s1, 'e', 'sleep').map((e) => e.ts)).toEqual([16]);
    expect(doc.traceEvents.filter((e) => e.ph === 'i' && e.name === 'lost wake-up')).toHaveLength(1);
    expectGolden(doc, 'race-kernel-qp.json');
  });

  it('an order without a lost wake-up draws nothing and says so', async () => {
    const dir = tmp();
    const out = join(dir, 'none.json');
    const r = await runCli(['emu', 'race', '--variant', 'kernel-sample-first', '--submitters', '1', '--trace', out]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`hfi1-sdma: no lost wake-up to draw: ${out} was not written\n`);
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('report --trace and watch --trace on the emulator', () => {
  const EMU = ['--backend', 'emu', '--seed', '4', '--engines', '2', '--workload', 'qp:gbps=10', '--fault', 'lost-wakeup@250:1'];

  it('report: the capture as a timeline only (no page), its JSON saying so', async () => {
    const dir = tmp();
    const out = join(dir, 'rep.json');
    const r = await runCli([...EMU, '--json', 'report', '--trace', out, '--samples', '6', '--interval-ms', '100']);
    expect(r.code, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j).toMatchObject({ file: null, bytes: null, trace: { file: out } });
    const doc = readTrace(out);
    expect(traceProblems(doc)).toEqual([]);
    expect(j.trace.events).toBe(doc.traceEvents.length);
    expect(doc.otherData.clock).toBe('virtual');
    const sdma1 = onTrack(doc, 'sdma1');
    expect(spans(sdma1, 'b', 'verdict').map((e) => e.name)).toContain('stranded');
    expect(spans(sdma1, 'b', 'waiter').length).toBeGreaterThan(0);
    expect(sdma1.some((e) => e.ph === 'X' && e.name === 's99_Running')).toBe(true);
    expect(doc.traceEvents.some((e) => e.ph === 'C' && e.name === 'sdma1 ring')).toBe(true);
    expectGolden(doc, 'report-emu-stranded.json');
  });

  it('watch: streamed as the rounds come, put in place when watch ends, the stranded QP named on its engine', async () => {
    const dir = tmp();
    const out = join(dir, 'w.json');
    const r = await runCli([...EMU, 'watch', '--json', '--count', '6', '--interval-ms', '100', '--trace', out]);
    expect([2, 0]).toContain(r.code);
    expect(r.stderr).toMatch(
      new RegExp(`hfi1-sdma watch: wrote ${out.replace(/[.]/g, '\\.')} \\(\\d+ trace events, 6 rounds\\)\\n$`),
    );
    expect(readdirSync(dir)).toEqual(['w.json']);
    const doc = readTrace(out);
    expect(traceProblems(doc)).toEqual([]);
    const waiters = spans(onTrack(doc, 'sdma1'), 'b', 'waiter');
    expect(waiters.map((e) => e.name).some((n) => /^QP 0x[0-9a-f]+ RTS$/.test(n))).toBe(true);
    expect(spans(onTrack(doc, 'sdma1'), 'n', 'waiter').map((e) => e.name)).toContain('stranded');
  });

  it('a target that cannot be written is refused first (73), a wrong name is a usage error (64): nothing is left', async () => {
    const dir = tmp();
    mkdirSync(join(dir, 'd.json'));
    const r = await runCli([...EMU, 'watch', '--count', '1', '--trace', join(dir, 'd.json')]);
    expect(r.code).toBe(73);
    expect(r.stderr).toMatch(/--trace .*d\.json: is a directory, not a regular file/);
    for (const argv of [
      ['watch', '--count', '1', '--trace', join(dir, 'w.txt')],
      ['report', '--trace', join(dir, 'r.html')],
      ['report'],
    ]) {
      const u = await runCli([...EMU, ...argv]);
      expect([argv, u.code]).toEqual([argv, 64]);
    }
    expect(readdirSync(dir)).toEqual(['d.json']);
    expect(existsSync(join(dir, 'w.txt'))).toBe(false);
  });
});

describe('ids', () => {
  it('two hosts with the same unit name are two processes whose thread ids never meet', () => {
    const a = pidOf('node17\0hfi1_0');
    const b = pidOf('node18\0hfi1_0');
    expect(a).not.toBe(b);
    const tids = (p: number) => Array.from({ length: TRACKS }, (_, k) => tidOf(p, k));
    expect(tids(a).filter((t) => tids(b).includes(t))).toEqual([]);
  });
});
