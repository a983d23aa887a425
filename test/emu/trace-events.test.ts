// The emulator's trace switch: the sleep and wake-up records of its model become tracefs events in the kernel's
// formats (each line reads back with the parser the live reader uses), in a bounded buffer whose header counts
// them; the live reader takes from them each QP's sleep time, lists the QPs asleep when qp_stats cannot be read,
// and ties each PSM writer to its engine. Off, no tracefs is rendered.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { WaitersSample } from '../../src/backend.js';
import { EmuUnit } from '../../src/emu/index.js';
import { SleepKind } from '../../src/emu/iowait.js';
import { LogKind } from '../../src/emu/log.js';
import { writeSysroot } from '../../src/emu/sysroot.js';
import { EmuTraceBuffer, enableTraceEvents, TRACE_BUFFER_EVENTS } from '../../src/emu/trace-events.js';
import { openHwBackend } from '../../src/hw/index.js';
import { parseWaitTraceLine } from '../../src/kmsg/trace-wait.js';
import { QP_TRACE_PARTIAL } from '../../src/progress/waiters.js';
import { runCli } from '../support/cli.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('emu-trace-');
const TRACE = 'sys/kernel/tracing/trace';

/** A unit with QPs and PSM writers whose engine 2 loses a wake-up at 100 ms, traced, written at 300 ms. */
async function traced(): Promise<{ unit: EmuUnit; dir: string }> {
  const unit = new EmuUnit({
    seed: 2,
    engines: 4,
    workload: 'mixed:gbps=40',
    faults: ['lost-wakeup@100:2'],
    model: 'stepped',
    retainLog: 'all', // the sleeps the trace is checked against
  });
  enableTraceEvents(unit);
  unit.runUntilMs(300);
  const dir = tmp();
  await writeSysroot(unit, dir);
  return { unit, dir };
}

/** The waiters of the rendered tree as the live reader sees them, on a clock 1000 s past the epoch. */
async function liveWaiters(dir: string): Promise<WaitersSample> {
  const b = await openHwBackend({ sysroot: dir, clock: { nowMs: () => 1_000_000 } });
  try {
    const u = await b.unit(0);
    return (await u.waiters?.()) as WaitersSample;
  } finally {
    await b.close();
  }
}

describe('--trace-events', () => {
  let unit: EmuUnit;
  let dir: string;
  beforeAll(async () => {
    ({ unit, dir } = await traced());
  });

  it("renders every sleep and wake-up of the model in the kernel's formats, counted in the header", async () => {
    const text = readFileSync(join(dir, TRACE), 'utf8');
    const lines = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    expect(lines.length).toBeGreaterThan(100);
    const events = lines.map((l) => parseWaitTraceLine(l));
    expect(events.filter((e) => e === null)).toEqual([]);
    expect(text).toContain(`# entries-in-buffer/entries-written: ${lines.length}/${lines.length}   #P:16\n`);
    // As the model counts them: a QP sleep traces qpsleep and iowait_set, a PSM one usdma_defer.
    const records = unit.host.log.records(['sleep']);
    const qp = records.filter((r) => unit.senders[r.a]?.wait.sleepKind === SleepKind.qp).length;
    const psm = records.filter((r) => unit.senders[r.a]?.wait.sleepKind === SleepKind.psm).length;
    const kinds = (k: string) => events.filter((e) => e?.kind === k).length;
    expect([kinds('qp-sleep'), kinds('iowait-set'), kinds('psm-defer')]).toEqual([qp, qp, psm]);
    for (const e of ['qpsleep', 'qpwakeup', 'usdma_defer', 'usdma_activate'])
      expect(readFileSync(join(dir, `sys/kernel/tracing/events/hfi1_tx/hfi1_${e}/enable`), 'utf8')).toBe('1\n');
    // The lost wake-up's QP sleeps last, and is never woken.
    const lost = unit.waiters ? (await unit.waiters()).waiters.find((w) => w.kind === 'qp' && w.engine === 2) : undefined;
    expect(lost?.kind).toBe('qp');
    const mine = events.filter((e) => e && 'qpn' in e && lost?.kind === 'qp' && e.qpn === lost.qpn && e.kind.startsWith('qp-'));
    expect(mine.at(-1)?.kind).toBe('qp-sleep');
  });

  it('the live reader dates the QP by its sleep, lists it from the trace without qp_stats, and ties PSM writers to engines', async () => {
    const seen = await liveWaiters(dir);
    const qp = seen.waiters.find((w) => w.kind === 'qp' && w.engine === 2);
    // Asleep since 100 ms of virtual time, read at 300 ms: 200 ms before the reader's now.
    expect(qp?.sinceMs).toBeCloseTo(1_000_000 - 200, 0);
    expect(seen.waiters.filter((w) => w.kind === 'psm').every((w) => w.engine !== null)).toBe(true);
    rmSync(join(dir, 'sys/kernel/debug/hfi1/hfi1_0/qp_stats'));
    const without = await liveWaiters(dir);
    expect(without.visibility.find((v) => v.kind === 'qp')).toMatchObject({ visible: true, source: 'trace' });
    expect(without.visibility.find((v) => v.kind === 'qp')?.partial).toMatch(new RegExp(`^${QP_TRACE_PARTIAL.slice(0, 40)}`));
    const fromTrace = without.waiters.filter((w) => w.kind === 'qp');
    expect(fromTrace.map((w) => [w.kind === 'qp' && w.qpn, w.engine, w.source])).toContainEqual([
      qp?.kind === 'qp' && qp.qpn,
      null,
      'trace',
    ]);
  });

  it('off by default: no tracefs in the tree', async () => {
    const off = new EmuUnit({ seed: 2, engines: 1, workload: 'psm:gbps=10' });
    off.runUntilMs(20);
    const tree = tmp();
    await writeSysroot(off, tree);
    expect(existsSync(join(tree, 'sys/kernel/tracing'))).toBe(false);
    expect(existsSync(join(tree, 'proc/uptime'))).toBe(true);
  });

  it('the buffer keeps the last events, as tracefs overwrites its oldest, and counts every one written', () => {
    const unit = new EmuUnit({ seed: 1, engines: 1, workload: 'qp:gbps=10' });
    const b = new EmuTraceBuffer();
    for (let k = 0; k < TRACE_BUFFER_EVENTS + 10; k++) b.record(k * 1000, LogKind.sleep, 0, 0, SleepKind.psm);
    b.record(0, LogKind.interrupt, 0, 0, SleepKind.psm);
    const text = b.text(unit);
    expect(text).toContain(`# entries-in-buffer/entries-written: ${TRACE_BUFFER_EVENTS}/${TRACE_BUFFER_EVENTS + 10}`);
    const first = text.split('\n').find((l) => l.includes('usdma_defer'));
    expect(first).toMatch(/ {4}0\.000010: hfi1_usdma_defer: /);
  });

  it('needs the stepped model: the fast one skips stretches whose records are never written one by one', () => {
    expect(() => enableTraceEvents(new EmuUnit({ seed: 1, engines: 1 }))).toThrow(/needs the stepped model/);
  });

  it('as a global option of the command line, for emu write (the stepped model then)', async () => {
    const dir = tmp();
    const r = await runCli([
      '--backend',
      'emu',
      '--trace-events',
      '--engines',
      '2',
      '--at-ms',
      '50',
      'emu',
      'write',
      '--sysroot',
      dir,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(join(dir, TRACE), 'utf8')).toMatch(/^# tracer: nop\n/);
  });
});
