// The twin of walk-a-lost-wakeup.tar.gz (hfi1_0, instant 4 of 5, captured 2026-12-03T19:18:44.508Z on vm by hfi1-sdma 0.1.0), written by
// hfi1-sdma 0.1.0 ('emu twin --emit-test'): built from walk-a-lost-wakeup.twin.json, watched as health watches, it reaches the
// capture's verdict. Pinned in the fixture: capture format hfi1-sdma-snapshot/2, twin format hfi1-sdma-twin/1, seed 1, workload
// captured, order kernel.
import { readFileSync } from 'node:fs';
import { createMonitor } from 'hfi1-sdma';
import { createEmuBackend } from 'hfi1-sdma/emulator';
import { expect, it } from 'vitest';

const fixture = JSON.parse(readFileSync(new URL('./walk-a-lost-wakeup.twin.json', import.meta.url), 'utf8'));

it('the twin of walk-a-lost-wakeup.tar.gz reaches SD201 hfi1_0 sdma5', async () => {
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
    expect(verdict.sort()).toEqual(['SD201 hfi1_0 sdma5']);
  } finally {
    await monitor.close();
    await emu.close();
  }
});
