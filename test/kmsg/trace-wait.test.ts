// The sleep and wake-up tracepoints in tracefs `trace` text (trace-wait.ts): each event in the kernel's format for
// hfi1 and hfi2, the staging-era qpsleep wording, a wording not known passed over; `log` decodes them with the
// flags named, files them under their unit, and finds them when the text is streamed in pieces.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { qpSleeps, usdmaEngines } from '../../src/hw/waiters-trace.js';
import { readKernelLog } from '../../src/kmsg/stream.js';
import { parseWaitTraceLine } from '../../src/kmsg/trace-wait.js';
import { ROOT } from '../support/child.js';
import { runCli } from '../support/cli.js';

const FILE = join(ROOT, 'test', 'fixtures', 'kmsg', 'trace-waits.txt');
const TEXT = readFileSync(FILE, 'utf8');
const LINES = TEXT.split('\n').filter((l) => l !== '' && !l.startsWith('#'));

describe('parseWaitTraceLine', () => {
  it('reads each event with its task, cpu and time', () => {
    expect(parseWaitTraceLine(LINES[0] as string)).toEqual({
      comm: 'kworker/3:1H',
      pid: 412,
      cpu: 3,
      ts: '8812.100001',
      module: 'hfi1',
      kind: 'qp-sleep',
      device: '0000:05:00.0',
      qpn: 0x10a,
      flags: 0x1000,
      sFlags: 0x1002,
      psFlags: 0,
      iowFlags: 0,
    });
    expect(parseWaitTraceLine(LINES[1] as string)).toMatchObject({
      kind: 'iowait-set',
      iowait: 'ffff9a8bc2d41100',
      qpn: 266,
      flags: 0,
      flag: 1,
    });
    expect(parseWaitTraceLine(LINES[2] as string)).toMatchObject({ comm: '<idle>', pid: 0, kind: 'qp-wakeup', iowFlags: 1 });
    expect(parseWaitTraceLine(LINES[3] as string)).toMatchObject({ kind: 'iowait-clear', flags: 1, flag: 1 });
    expect(parseWaitTraceLine(LINES[6] as string)).toMatchObject({
      comm: 'mpi_rank_0',
      pid: 20001,
      kind: 'psm-defer',
      pq: 'ffff9a8bc3e50000',
      engine: 3,
      empty: true,
    });
    expect(parseWaitTraceLine(LINES[7] as string)).toMatchObject({ kind: 'psm-activate', reason: 0, engine: null });
    expect(parseWaitTraceLine(LINES[8] as string)).toMatchObject({ module: 'hfi2', kind: 'qp-sleep', device: '0000:41:00.0' });
    expect(parseWaitTraceLine(LINES[9] as string)).toMatchObject({ module: 'hfi2', kind: 'iowait-set', qpn: 64 });
  });

  it('the staging-era wording (no ps_flags, iow_flags) is read; a wording not known, or another event, is not', () => {
    expect(parseWaitTraceLine(LINES[10] as string)).toMatchObject({ qpn: 0x30, psFlags: null, iowFlags: null });
    expect(parseWaitTraceLine(LINES[11] as string)).toBeNull();
    expect(parseWaitTraceLine(LINES[12] as string)).toBeNull();
    expect(parseWaitTraceLine('  kworker/9:1-412 [009] d..1. 8812.1: hfi2_sdma_pad: SDE (9) pkts 1')).toBeNull();
    // No task column (trace-cmd report -N, a trimmed copy): the time and event still read.
    expect(parseWaitTraceLine('8812.100001: hfi1_qpwakeup: [0000:05:00.0] qpn 0x1 flags 0x1000 s_flags 0x0')).toMatchObject({
      comm: null,
      pid: null,
      cpu: null,
      qpn: 1,
    });
  });

  it("each QP's last event, and each PSM writer thread's engine, of one device", () => {
    expect([...qpSleeps(TEXT, '0000:05:00.0').values()]).toEqual([
      { qpn: 0x10a, asleep: false, flags: 0x1000, atSec: 8812.2 },
      { qpn: 0x2b, asleep: true, flags: 0x1000, atSec: 8812.3 },
      { qpn: 0x2c, asleep: true, flags: 0x400, atSec: 8812.3 },
      { qpn: 0x30, asleep: true, flags: 0x1000, atSec: 4001 },
    ]);
    expect([...qpSleeps(TEXT, '0000:41:00.0').keys()]).toEqual([0x40]);
    expect(usdmaEngines(TEXT, '0000:05:00.0')).toEqual(new Map([[20001, 3]]));
  });
});

describe('log of the sleep and wake-up events', () => {
  it('decodes each with its flags named, under its unit, and the same when streamed in pieces', async () => {
    const r = await runCli(['log', FILE]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      "line 13 [8812.100001]: hfi1 0000:05:00.0: QP 0x10a asleep on WAIT_DMA_DESC (an engine's dmawait); s_flags BUSY|WAIT_DMA_DESC (hfi1_qpsleep trace event, kworker/3:1H-412 on cpu 3)",
    );
    expect(r.stdout).toContain(
      'line 14 [8812.100001]: hfi1: QP 0x10a (iowait 0xffff9a8bc2d41100): IOWAIT_PENDING_IB set, flags 0x0 before (hfi1_iowait_set trace event, kworker/3:1H-412 on cpu 3)',
    );
    expect(r.stdout).toContain('line 15 [8812.200000]: hfi1 0000:05:00.0: QP 0x10a woken: WAIT_DMA_DESC cleared; s_flags 0');
    expect(r.stdout).toContain('line 18 [8812.300000]: hfi1 0000:05:00.0: QP 0x2c asleep on WAIT_PIO; s_flags BUSY|WAIT_PIO');
    expect(r.stdout).toContain(
      'line 19 [8812.400000]: hfi1 0000:05:00.0 sdma3: PSM queue pq 0xffff9a8bc3e50000 deferred (not on a list yet) (hfi1_usdma_defer trace event, mpi_rank_0-20001 on cpu 7)',
    );
    expect(r.stdout).toContain('PSM queue pq 0xffff9a8bc3e50000 activated (reason 0: descriptors available)');
    expect(r.stdout).toContain('line 22 [9001.000001]: hfi2: QP 0x40 (iowait 0xffff9a8bd0001000): IOWAIT_PENDING_IB set');
    expect(r.stdout).toMatch(/^11 SDMA events \(0 engine errors\) in 25 lines\n/);
    async function* pieces(...parts: string[]) {
      yield* parts;
    }
    const whole = await readKernelLog(pieces(TEXT));
    for (const cut of [1, 700, 1400, TEXT.length - 10]) {
      const split = await readKernelLog(pieces(TEXT.slice(0, cut), TEXT.slice(cut)));
      expect([cut, split.events]).toEqual([cut, whole.events]);
    }
    const j = JSON.parse((await runCli(['log', '--json', FILE])).stdout);
    expect(j.events.map((e: { kind: string }) => e.kind)).toEqual([
      'qp-sleep',
      'iowait-set',
      'qp-wakeup',
      'iowait-clear',
      'qp-sleep',
      'qp-sleep',
      'psm-defer',
      'psm-activate',
      'qp-sleep',
      'iowait-set',
      'qp-sleep',
    ]);
  });
});
