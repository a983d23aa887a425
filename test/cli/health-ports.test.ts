// health on the port side, in process over a scripted backend: a stall whose port waits for credits while it sends
// nothing is the fabric's (SD109, by port, never SD101), one whose link retrains the link's (SD110), one with XmitWait
// flat the host's (SD101 saying so); LinkDowned rising on an ACTIVE port is a flap (SD307), LinkErrorRecovery a
// retraining link (SD308); an IPoIB queue the watchdog timed out is stuck (SD207); the bulk service's engines are
// idle and said as normal (SD403), SDMA off in cap_mask likewise (SD404).
import { describe, expect, it } from 'vitest';
import type { PortCounters, UnitSettings, Waiter } from '../../src/backend.js';
import { PORT_COUNTER_NAMES } from '../../src/hw/parse/port-counters.js';
import { runCli } from '../support/cli.js';
import { FakeBackend, type FakeOptions, type Script } from '../support/fake-backend.js';

// Engine 1's head frozen behind its tail, the chip not fetching; the others retire.
const stall: Script = (e, t) =>
  e === 1
    ? { dh: 100, dt: 300, fetched: 100 }
    : { dh: Math.floor(t / 10) * 10 + e, dt: Math.floor(t / 10) * 10 + e + 50, fetched: t };
const ACTIVE = { state: 'ACTIVE', physState: 'LinkUp', rate: '100 Gb/sec (4X EDR)' };

/** Port 1's counters at t from per-counter functions (the rest 0). */
function port(values: Partial<Record<(typeof PORT_COUNTER_NAMES)[number], (t: number) => number>>) {
  return (t: number): PortCounters[] => {
    const c: PortCounters = { port: 1, values: {} as PortCounters['values'], sources: {}, saturated: [] };
    for (const n of PORT_COUNTER_NAMES) {
      c.values[n] = BigInt(Math.floor(values[n]?.(t) ?? 0));
      c.sources[n] = 'debugfs';
    }
    return [c];
  };
}

const SETTINGS: UnitSettings = {
  useBulksvc: null,
  bulksvc: {},
  bulkServiceEngines: [],
  numSdma: 0,
  numVls: 8,
  capMask: '0x4c09a08cb9a',
  sdmaEnabled: true,
  evidence: [],
};

async function health(script: Script, opts: FakeOptions, engines = 4) {
  const r = await runCli(
    ['health', '--stall-ms', '400', '--state', 'none', '--json'],
    {},
    false,
    '',
    new FakeBackend(script, engines, 2048, { kind: 'hw', link: ACTIVE, ...opts }),
  );
  const doc = JSON.parse(r.stdout) as {
    findings: { code: string; kind: string; engine: number | null; port: number | null; text: string; action?: string }[];
  };
  return { code: r.code, findings: doc.findings, codes: doc.findings.map((f) => f.code) };
}

describe('health: host or fabric', () => {
  it('XmitWait rising while the port sends nothing: SD109 for port 1, never a host stall', async () => {
    const h = await health(stall, { portCounters: port({ xmitWait: (t) => t * 100_000, xmitData: () => 5 }) });
    expect(h.code).toBe(2);
    expect(h.codes).toContain('SD109');
    expect(h.codes).not.toContain('SD101');
    const f = h.findings.find((x) => x.code === 'SD109');
    expect(f).toMatchObject({ kind: 'fabricStall', port: 1, engine: 1 });
    expect(f?.text).toMatch(
      /hfi1_0 port 1: 1 engine\(s\) stalled by the fabric .*\(sdma1\): port 1 ACTIVE, XmitWait \+\d+ flit times while it sent nothing/,
    );
    expect(f?.action).toMatch(/switch port.*opareport -o errors.*opainfo/);
  });

  it('XmitWait flat: SD101, the host, with why', async () => {
    const h = await health(stall, { portCounters: port({ xmitData: (t) => t * 1000 }) });
    expect(h.codes[0]).toBe('SD101');
    expect(h.findings[0]?.text).toMatch(
      /stalled \(chip-not-fetching\) .*\(host: port 1 ACTIVE and XmitWait flat: the engine itself stopped\)/,
    );
    expect(h.codes).not.toContain('SD109');
  });

  it('a busy port that waits now and then while it keeps sending is no fabric stall', async () => {
    const h = await health(stall, { portCounters: port({ xmitWait: (t) => t * 10, xmitData: (t) => t * 100_000 }) });
    expect(h.codes[0]).toBe('SD101');
    expect(h.findings[0]?.text).toMatch(/credits arrive/);
  });

  it('LinkErrorRecovery rising during the stall: SD110 (the link), and the retraining said (SD308)', async () => {
    const h = await health(stall, { portCounters: port({ linkErrorRecovery: (t) => (t > 300 ? 1 : 0) }) });
    expect(h.codes).toContain('SD110');
    expect(h.codes).toContain('SD308');
    expect(h.codes).not.toContain('SD101');
    expect(h.findings.find((f) => f.code === 'SD110')?.text).toMatch(
      /stalled while the port's link fails .*LinkErrorRecovery \+1/,
    );
  });

  it('no port counters at all: the stall is said as before, without a cause', async () => {
    const h = await health(stall, {});
    expect(h.codes[0]).toBe('SD101');
    expect(h.findings[0]?.text).not.toMatch(/host:|fabric/);
  });
});

describe('health: link events, IPoIB, the settings that make idle normal', () => {
  const healthy: Script = (e, t) => ({ dh: Math.floor(t / 10) * 10 + e, dt: Math.floor(t / 10) * 10 + e + 50, fetched: t });

  it('LinkDowned rising on a port ACTIVE again: a flap (SD307), a warning', async () => {
    const h = await health(healthy, { portCounters: port({ linkDowned: (t) => (t > 300 ? 1 : 0) }) });
    expect(h.code).toBe(1);
    expect(h.findings.find((f) => f.code === 'SD307')?.text).toBe(
      'hfi1_0 port 1 link went down and came back (LinkDowned +1 while watched): ACTIVE again',
    );
  });

  it('an IPoIB queue the watchdog timed out just now: SD207 naming its engine', async () => {
    const q = (t: number): Waiter => ({
      kind: 'ipoib',
      netdev: 'ib0',
      txq: 2,
      evidence: {
        source: 'kmsg',
        stopped: true,
        stops: 3,
        noDesc: 1,
        ringFull: 0,
        sent: null,
        completed: null,
        waitQueued: true,
        used: 0,
        timeouts: 1,
        lastTimeoutMs: t,
      },
      waitsFor: 'dma-desc',
      descriptorsNeeded: null,
      engine: 2,
      onList: null,
      ownPending: 0,
      sinceMs: t,
      source: 'kmsg',
    });
    const h = await health(healthy, {
      waiters: { at: (t) => [q(t)], visibility: [{ kind: 'ipoib', visible: true, source: 'kmsg', partial: 'timed out only' }] },
    });
    expect(h.code).toBe(2);
    const f = h.findings.find((x) => x.code === 'SD207');
    expect(f).toMatchObject({ kind: 'ipoibStuck', engine: 2 });
    expect(f?.text).toMatch(
      /hfi1_0 sdma2 IPoIB queue .*stuck: its subqueue stayed stopped past the netdev watchdog \(1 s\); 1 timeout\(s\), no_desc 1: it waits for SDMA descriptors, on the engine's wait list/,
    );
  });

  it("the bulk service's engines are idle, not stalled, and the service is said (SD403, a note)", async () => {
    const h = await health(stall, {
      portCounters: port({ xmitData: (t) => t * 1000 }),
      settings: { ...SETTINGS, useBulksvc: true, bulksvc: { bulksvc_num_sdma: '1' }, bulkServiceEngines: [1] },
    });
    expect(h.code).toBe(0);
    // Only notes: the service, and that waiters of a kind cannot be seen here.
    expect(h.codes.filter((c) => c !== 'SD401')).toEqual(['SD403']);
    expect(h.findings.find((f) => f.code === 'SD403')?.text).toMatch(
      /the bulk service carries verbs traffic \(use_bulksvc=Y; it owns sdma1, judged idle\)/,
    );
  });

  it('SDMA off in cap_mask is said (SD404, a note)', async () => {
    const h = await health(healthy, { settings: { ...SETTINGS, capMask: '0x4c09a08cb98', sdmaEnabled: false } });
    expect(h.code).toBe(0);
    expect(h.codes.filter((c) => c !== 'SD401')).toEqual(['SD404']);
  });
});
