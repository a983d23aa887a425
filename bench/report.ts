// report.render: the page of the 100-instant capture of two 16-engine emulated units (a stall, an engine error, a
// lost wake-up), in CPU time (user + system): gathering the monitor's rounds into the report, placing the kernel
// log and writing the HTML, against reading the capture (unpacking the snapshot and the monitor's rounds over
// every instant, as `health` reads it). Goal: under 1 s of CPU.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Monitor, rounds } from '../src/monitor/monitor.js';
import type { Round } from '../src/monitor/round.js';
import { ReportCollector } from '../src/report/collect.js';
import { snapshotSource } from '../src/report/gather.js';
import { renderReport } from '../src/report/html.js';
import { placeLog } from '../src/report/log.js';
import { openSnapshotBackend } from '../src/snapshot/backend.js';
import { emulatedCapture, TWO_UNITS, TWO_UNITS_PLAN } from '../test/report/capture.js';
import { type BenchResult, type BenchSuite, round } from './harness.js';

const GOAL_MS = 1000;

function cpuMsSince(c0: NodeJS.CpuUsage): number {
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
}

async function renderResult(): Promise<BenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'hfi1-bench-report-'));
  try {
    const file = await emulatedCapture(dir, 'two-units', TWO_UNITS, TWO_UNITS_PLAN);
    // Reading the capture: unpack it and run the monitor over every instant (the uptime files read as it goes).
    const c0 = process.cpuUsage();
    const backend = await openSnapshotBackend(file);
    const source = snapshotSource(backend, file);
    const read: { round: Round; uptimeSec: number | null }[] = [];
    let log: ReturnType<typeof source.kernelLog>;
    try {
      for await (const r of rounds(new Monitor(backend, { requireUnit: true }), { intervalMs: 0 })) {
        read.push({ round: r, uptimeSec: source.uptimeSec() });
      }
      log = source.kernelLog();
    } finally {
      await backend.close();
    }
    const readMs = cpuMsSince(c0);
    // The report: every round gathered, the log placed, the page rendered.
    const c1 = process.cpuUsage();
    const c = new ReportCollector();
    for (const r of read) c.add(r.round, r.uptimeSec);
    const placed = await placeLog(log, c.logOffsetMs(), 'wfr');
    const html = renderReport(
      c.finish({ sourceLabel: file, toolVersion: 'bench', renderedAtMs: 0, stallMs: 1000, strandMs: 200 }, placed),
    );
    const renderMs = cpuMsSince(c1);
    return {
      name: 'report.render',
      value: round(renderMs),
      unit: 'ms',
      baseline: round(readMs),
      ratio: round(renderMs / readMs),
      goal: `≤ ${GOAL_MS} ms of CPU`,
      met: renderMs <= GOAL_MS,
      instants: read.length,
      bytes: Buffer.byteLength(html),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const reportSuite: BenchSuite = {
  name: 'report',
  run: async () => [await renderResult()],
};
