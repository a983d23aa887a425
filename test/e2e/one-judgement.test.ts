// One judgement on every path, through the rendered sysroot as an operator reads a host: after health names a
// fault, the commands the runbook and the findings' actions send the operator to next (show, engines, waiters) say
// the same, at their defaults; a PSM writer's lost wake-up is seen at health's defaults on the one-engine rehearsal
// host, and on a busy host, where nothing names a writer's engine, health says which evidence is missing.
import { describe, expect, it } from 'vitest';
import type { EmuCliOptions } from '../../src/emu/index.js';
import { runCli } from '../support/cli.js';
import { renderedHost } from '../support/rendered-host.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('one-judgement-');

/** Run the commands, one after another, on one rendered host run to `atMs` (virtual time moves as they watch). */
async function onHost(opts: Partial<EmuCliOptions>, atMs: number, argvs: string[][]) {
  const host = await renderedHost(tmp(), { descqCnt: 256, ...opts }, atMs);
  const close = host.close;
  host.close = async () => {};
  try {
    const out = [];
    for (const argv of argvs) out.push(await runCli(argv, {}, false, '', host));
    return out;
  } finally {
    await close();
  }
}

describe('the follow-up commands say what health says', () => {
  it('a stalled engine and a halted one: show names each, engines lists both findings (the walk’s stop-fetch + halt-stuck host)', async () => {
    // health says CRITICAL SD101 and SD102 on this host (the matrix's stop-fetch and halt-stuck scenarios).
    const [show3, show2, engines] = await onHost(
      { workload: 'mixed:gbps=0.5', engines: 4, fault: ['stop-fetch@100:3', 'halt-stuck@100:2'] },
      300,
      [['show', '3'], ['show', '2'], ['engines']],
    );
    expect(show3?.stdout).toMatch(/^verdict +STALLED \(CHIP-NOT-FETCHING\), head still for/m);
    expect(show3?.stdout).toMatch(/^CRITICAL SD101 hfi1_0 sdma3 stalled/m);
    expect(show2?.stdout).toMatch(/^verdict +HALTED \(STATUS-HALTED\)/m);
    expect(show2?.stdout).toMatch(/^CRITICAL SD102 hfi1_0 sdma2 halted/m);
    expect(engines?.stdout).toMatch(/^CRITICAL SD101 hfi1_0 sdma3 stalled/m);
    expect(engines?.stdout).toMatch(/^CRITICAL SD102 hfi1_0 sdma2 halted/m);
  });

  it('engines and show take the --stall-ms the check uses: a stall of 150 ms is named under a threshold of 100', async () => {
    const [show, engines, bad] = await onHost({ workload: 'mixed:gbps=0.5', engines: 4, fault: ['stop-fetch@100:3'] }, 250, [
      ['show', '3', '--stall-ms', '100'],
      ['engines', '--stall-ms', '100'],
      ['engines', '--stall-ms', '0'],
    ]);
    expect(show?.stdout).toMatch(/^verdict +STALLED \(CHIP-NOT-FETCHING\), head still for/m);
    expect(show?.stdout).toMatch(/^CRITICAL SD101 hfi1_0 sdma3 stalled \(chip-not-fetching\) for ≥ \d+ ms/m);
    expect(engines?.stdout).toMatch(/^CRITICAL SD101 hfi1_0 sdma3 stalled \(chip-not-fetching\) for ≥ \d+ ms/m);
    expect(bad?.code).toBe(64);
    expect(bad?.stderr).toMatch(/--stall-ms/);
  });

  it('a stranded QP: show gives the engine STRANDED, as watch does, with the finding (the walk’s lost-wakeup host)', async () => {
    const [show] = await onHost({ workload: 'mixed:gbps=0.5', fault: ['lost-wakeup@300:5'] }, 400, [['show', '5']]);
    expect(show?.stdout).toMatch(/^verdict +STRANDED \(1 WAITER\)/m);
    expect(show?.stdout).toMatch(/^CRITICAL SD201 hfi1_0 sdma5 QP 0x[0-9a-f]+ RTS .*stranded \(lost-wakeup\)/m);
  });

  it('an IPoIB queue the watchdog keeps timing out: waiters says STUCK with SD207, show judges its engine', async () => {
    const [waiters, show] = await onHost(
      // (The netdev's queue 0 sends on VL 0's first engine, engine 0.)
      { workload: 'mixed:ipoib=1,gbps=0.5', engines: 4, fault: ['ipoib-timeout@100:0'] },
      2100,
      [['waiters'], ['show', '0']],
    );
    expect(waiters?.stdout).toMatch(/^hfi1_0\/0 +ipoib +ib0 txq \d+ .*STUCK \(WATCHDOG-TIMEOUT\)/m);
    expect(waiters?.stdout).toMatch(/^CRITICAL SD207 hfi1_0 sdma0 IPoIB queue ib0 txq \d+ stuck/m);
    // The action SD207 names tells a stalled engine from an idle one: show says which, never "warming-up".
    expect(show?.stdout).toMatch(/^verdict +(idle|progressing|STALLED|backpressure)/m);
    expect(show?.stdout).toMatch(/^CRITICAL SD207 /m);
  });
});

describe("a PSM writer's lost wake-up", () => {
  it('on the one-engine rehearsal host: WARNING SD203 at health’s defaults, in each run around the stall', async () => {
    for (const atMs of [300, 1000]) {
      const [h] = await onHost({ workload: 'psm:gbps=0.2', engines: 1, descqCnt: 2048, fault: ['lost-wakeup:psm@300:0'] }, atMs, [
        ['health'],
      ]);
      expect(h?.code, `at ${atMs} ms: ${h?.stdout}`).toBe(1);
      expect(h?.stdout).toMatch(/^HFI1-SDMA WARNING - emulated sysroot: SD203 hfi1_0 1 PSM writer stall/);
    }
  });

  it('on a busy host, where nothing names a writer’s engine: health says which evidence is missing, once', async () => {
    const [h] = await onHost({ workload: 'psm:gbps=0.2', engines: 4, fault: ['lost-wakeup:psm@300:1'] }, 400, [['health']]);
    const notes = (h?.stdout ?? '').split('\n').filter((l) => l.startsWith('SD405 '));
    expect(notes, h?.stdout).toHaveLength(1);
    expect(notes[0]).toMatch(/PSM writer\(s\) wait while engines of the unit are busy.*cannot be told from a wait for room/);
    expect(notes[0]).toMatch(/hfi1_usdma_defer\/enable/);
  });
});
