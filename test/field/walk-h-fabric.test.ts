// The twin of walk-h-fabric.tar.gz (hfi1_0, instant 4 of 5, captured 2026-12-03T19:19:29.666Z on vm by hfi1-sdma 0.1.0), written by
// hfi1-sdma 0.1.0 ('emu twin --emit-test'): built from walk-h-fabric.twin.json, watched as health watches, it reaches the
// capture's verdict. Pinned in the fixture: capture format hfi1-sdma-snapshot/2, twin format hfi1-sdma-twin/1, seed 1, workload
// captured, order kernel.
import { readFileSync } from 'node:fs';
import { createMonitor } from 'hfi1-sdma';
import { createEmuBackend } from 'hfi1-sdma/emulator';
import { expect, it } from 'vitest';

const fixture = JSON.parse(readFileSync(new URL('./walk-h-fabric.twin.json', import.meta.url), 'utf8'));

it('the twin of walk-h-fabric.tar.gz reaches SD109 hfi1_0 port 1', async () => {
  const emu = await createEmuBackend({ from: fixture });
  const monitor = createMonitor(emu, { stallMs: 1000, strandMs: 200 });
  try {
    let verdict: string[] = [];
    for await (const round of monitor.rounds({ intervalMs: 100, count: 21 })) {
      verdict = round.findings
        .filter((f) => f.severity !== 'note')
        .map((f) => [f.code, f.unit, f.engine === null ? null : `sdma${f.engine}`, f.port === null ? null : `port ${f.port}`])
        .map((parts) => parts.filter((x) => x !== null).join(' '));
    }
    expect(verdict.sort()).toEqual(['SD109 hfi1_0 port 1']);
  } finally {
    await monitor.close();
    await emu.close();
  }
});
