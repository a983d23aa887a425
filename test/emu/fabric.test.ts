// The port side of the emulator: counters per port (XmitWait in flit times, rising on a saturated link too), the
// faults fabric-stall (credits stop: heads freeze on the port's engines, XmitWait climbs at line rate), link-flap
// (down then up, LinkDowned +1, the driver's link lines), link-down by port, ipoib-timeout (the watchdog's line and
// the driver's timeout block, tx_timeout +1, DmaWait rising), the bulk service's parameters and engines, and the
// files a live host shows them in. Virtual time and fixed seeds only.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PortCounters } from '../../src/backend.js';
import { invariantViolations } from '../../src/emu/invariants.js';
import { LINK_FLAP_DOWN_MS } from '../../src/emu/link.js';
import { WATCHDOG_TIMEO_MS } from '../../src/emu/netdev.js';
import { closeSysroot, writeSysroot } from '../../src/emu/sysroot.js';
import { EmuUnit, type EmuUnitOptions } from '../../src/emu/unit.js';
import { isHfi1SdmaError } from '../../src/errors.js';
import { tempDirs } from '../support/temp.js';
import { TWO_PORT_CN5000 } from './support.js';

const tempDir = tempDirs('hfi1-emu-fabric-');
const CN5000: EmuUnitOptions = { ...TWO_PORT_CN5000, seed: 3 };

const counters = async (u: EmuUnit, port: number): Promise<PortCounters['values']> => {
  const c = (await u.portCounters()).find((p) => p.port === port);
  if (!c) throw new Error(`no port ${port}`);
  return c.values;
};
const heads = async (u: EmuUnit) => (await u.sample()).map((s) => s.csr?.hwHead ?? null);
const log = (u: EmuUnit) => u.host.kernelLog.join('\n');

async function tree(u: EmuUnit): Promise<string> {
  const dir = tempDir();
  await writeSysroot(u, dir);
  closeSysroot(u, dir);
  return dir;
}

describe('port counters', () => {
  it('count what each port sends; XmitWait rises on a saturated healthy link and stays flat on a light one', async () => {
    // mixed at half its load: the busiest engine offers 55% of its share of the link, under the 80% that waits.
    const light = new EmuUnit({ ...CN5000, ports: 1, chip: 'wfr', driver: 'upstream', workload: 'mixed:load=0.3' });
    light.runUntilMs(200);
    const a = await counters(light, 1);
    expect(a.xmitData).toBeGreaterThan(0n);
    expect(a.xmitPackets).toBeGreaterThan(0n);
    expect(a.xmitWait).toBe(0n);
    const full = new EmuUnit({ seed: 3, engines: 4, descqCnt: 256, workload: 'line-rate' });
    full.runUntilMs(100);
    const b = await counters(full, 1);
    full.runUntilMs(200);
    const c = await counters(full, 1);
    expect(c.xmitWait).toBeGreaterThan(b.xmitWait ?? 0n);
    // Far from "next to nothing": a saturated link waits a little for every flit it sends.
    expect((c.xmitData ?? 0n) - (b.xmitData ?? 0n)).toBeGreaterThan(((c.xmitWait ?? 0n) - (b.xmitWait ?? 0n)) / 100n);
  });

  it('are rendered in debugfs (names and values agree), in hw_counters and in the PortCounters view of each port', async () => {
    const u = new EmuUnit(CN5000);
    u.runUntilMs(100);
    const dir = await tree(u);
    const debug = join(dir, 'sys/kernel/debug/hfi1/hfi1_0');
    const names = readFileSync(join(debug, 'portcounter_names'), 'utf8').trim().split('\n');
    expect(names).toEqual(expect.arrayContaining(['TxWait', 'TxFlitVL0', 'XmitDscd,32', 'SwLinkDown,32', 'DmaWait']));
    for (const port of [1, 2]) {
      const values = readFileSync(join(debug, `port${port}counters`));
      expect(values.length).toBe(names.length * 8);
      const cls = join(dir, 'sys/class/infiniband/hfi1_0/ports', String(port));
      expect(readFileSync(join(cls, 'link_layer'), 'utf8')).toBe('InfiniBand\n');
      expect(Number(readFileSync(join(cls, 'counters/port_xmit_packets'), 'utf8'))).toBeGreaterThan(0);
      // hfi1 answers PortCounters' XmitWait with 0; the driver's own counter is where it is.
      expect(readFileSync(join(cls, 'counters/port_xmit_wait'), 'utf8')).toBe('0\n');
      expect(readFileSync(join(cls, 'hw_counters/TxWait'), 'utf8')).toMatch(/^\d+\n$/);
    }
  });
});

describe('fabric-stall@T:PORT', () => {
  it("freezes the heads of the port's engines while XmitWait climbs at line rate; the port stays ACTIVE", async () => {
    const u = new EmuUnit({ ...CN5000, ports: 1, chip: 'wfr', driver: 'upstream', faults: ['fabric-stall@100:1'] });
    u.runUntilMs(150);
    const h0 = await heads(u);
    const c0 = await counters(u, 1);
    u.runUntilMs(450);
    const h1 = await heads(u);
    const c1 = await counters(u, 1);
    expect(h1).toEqual(h0);
    expect(c1.xmitData).toBe(c0.xmitData);
    // 300 ms of waiting at the link's rate, in flit times: far more than anything sent.
    expect((c1.xmitWait ?? 0n) - (c0.xmitWait ?? 0n)).toBeGreaterThan(1_000_000n);
    expect((await u.links())[0]?.state).toBe('ACTIVE');
    expect(invariantViolations(u)).toEqual([]);
  });

  it('on port 1 of a two-port adapter leaves the engines that send on port 2 moving', async () => {
    const u = new EmuUnit({ ...CN5000, faults: ['fabric-stall@100:1'] });
    u.runUntilMs(150);
    const c0 = await counters(u, 2);
    u.runUntilMs(400);
    expect((await counters(u, 2)).xmitData).toBeGreaterThan(c0.xmitData ?? 0n);
  });
});

describe('link-flap@T:PORT and link-down@T:PORT', () => {
  it('link-flap takes port 2 down for a moment and back: LinkDowned +1, the link lines logged with the port', async () => {
    const u = new EmuUnit({ ...CN5000, faults: ['link-flap@100:2'] });
    u.runUntilMs(100 + LINK_FLAP_DOWN_MS / 2);
    expect((await u.links()).map((l) => l.state)).toEqual(['ACTIVE', 'DOWN']);
    u.runUntilMs(100 + LINK_FLAP_DOWN_MS * 3);
    expect((await u.links()).map((l) => l.state)).toEqual(['ACTIVE', 'ACTIVE']);
    expect((await counters(u, 2)).linkDowned).toBe(1n);
    expect((await counters(u, 1)).linkDowned).toBe(0n);
    expect(log(u)).toMatch(/hfi1_0\.1: 8051: Link down/);
    expect(log(u)).toMatch(/hfi1_0\.1: 8051: Link up/);
    expect(log(u)).not.toMatch(/hfi1_0\.0: 8051: Link down/);
  });

  it('link-down leaves port 2 down (polling, a failed LNI logged) and port 1 carrying traffic', async () => {
    const u = new EmuUnit({ ...CN5000, faults: ['link-down@100:2'] });
    u.runUntilMs(600);
    expect((await u.links()).map((l) => [l.state, l.physState])).toEqual([
      ['ACTIVE', 'LinkUp'],
      ['DOWN', 'Polling'],
    ]);
    expect((await counters(u, 2)).linkDowned).toBe(1n);
    expect(log(u)).toMatch(/hfi1_0\.1: Link error: Failed LNI/);
    const a = await counters(u, 1);
    u.runUntilMs(800);
    expect((await counters(u, 1)).xmitData).toBeGreaterThan(a.xmitData ?? 0n);
  });

  it('refuses a port the adapter does not have', () => {
    let err: unknown;
    try {
      new EmuUnit({ ...CN5000, ports: 1, chip: 'wfr', driver: 'upstream', faults: ['link-flap@100:2'] });
    } catch (e) {
      err = e;
    }
    expect(isHfi1SdmaError(err) && err.code).toBe('E_USAGE');
  });
});

describe('ipoib-timeout@T:E', () => {
  it("keeps engine 1's IPoIB queue stopped past the watchdog: its line and the driver's block, tx_timeout +1, DmaWait", async () => {
    const u = new EmuUnit({
      seed: 5,
      engines: 2,
      numVls: 1, // VL 0 maps both engines: queue q sends on engine q & 1 (sdma_select_engine_sc)
      descqCnt: 256,
      workload: 'mixed:ipoib=2,gbps=2',
      faults: ['ipoib-timeout@100:1'],
    });
    u.runUntilMs(100 + WATCHDOG_TIMEO_MS / 2);
    expect(log(u)).not.toMatch(/NETDEV WATCHDOG/);
    u.runUntilMs(100 + WATCHDOG_TIMEO_MS * 2 + 200);
    const text = log(u);
    // The 5.14 kernel's WARN_ONCE: once, at KERN_INFO inside the WARNING block (dev_watchdog, sch_generic.c).
    expect(text).toMatch(
      /------------\[ cut here \]------------\nNETDEV WATCHDOG: ib0 \(hfi1\): transmit queue 1 timed out\nWARNING: CPU: \d+ /,
    );
    expect(text).toMatch(/hfi1_0: timeout txq \S+ q 1 stopped 1 stops \d+ no_desc \d+ ring_full \d+/);
    expect(text).toMatch(/hfi1_0: sde \S+ engine 1/);
    expect(text).toMatch(/hfi1_0: wait queued 1/);
    expect((await counters(u, 1)).dmaWait).toBeGreaterThan(0n);
    const dir = await tree(u);
    const q = join(dir, 'sys/class/net/ib0/queues');
    expect(Number(readFileSync(join(q, 'tx-1/tx_timeout'), 'utf8'))).toBeGreaterThanOrEqual(1);
    expect(readFileSync(join(q, 'tx-0/tx_timeout'), 'utf8')).toBe('0\n');
    expect(readFileSync(join(dir, 'sys/class/net/ib0/type'), 'utf8')).toBe('32\n');
  });

  it('refuses an engine without an IPoIB queue, saying so', () => {
    expect(() => new EmuUnit({ seed: 5, engines: 2, workload: 'qp', faults: ['ipoib-timeout@100:1'] })).toThrow(
      /engine 1 has no IPoIB queue in workload "qp"/,
    );
  });
});

describe('--param: the bulk service and the settings that make idle normal', () => {
  it('use_bulksvc=Y (Cornelis hfi1) gives the last bulksvc_num_sdma engines to the bulk service: idle, in hw_resources', async () => {
    // PSM stays on SDMA; the bulk service's engines carry none of it.
    const u = new EmuUnit({
      seed: 2,
      chip: 'jkr',
      driver: 'cornelis',
      descqCnt: 256,
      workload: 'psm',
      params: ['use_bulksvc=Y'],
    });
    u.runUntilMs(50);
    const s = await u.sample();
    for (const e of [12, 13, 14, 15]) expect(s[e]?.counters?.descFetched).toBe(0n);
    for (const e of [0, 11]) expect(s[e]?.counters?.descFetched).toBeGreaterThan(0n);
    // Verbs messages over 2 KB leave SDMA altogether: at line rate every engine is idle.
    const verbs = new EmuUnit({ seed: 2, chip: 'jkr', driver: 'cornelis', workload: 'line-rate', params: ['use_bulksvc=Y'] });
    verbs.runUntilMs(50);
    expect((await verbs.sample()).map((x) => x.counters?.descFetched)).toEqual(new Array(16).fill(0n));
    expect(u.info.settings).toMatchObject({ useBulksvc: true, bulkServiceEngines: [12, 13, 14, 15] });
    const dir = await tree(u);
    expect(readFileSync(join(dir, 'sys/module/hfi1/parameters/use_bulksvc'), 'utf8')).toBe('Y\n');
    expect(readFileSync(join(dir, 'sys/class/infiniband/hfi1_0/hw_resources'), 'utf8')).toMatch(/bulksvc\.sde 12-15/);
  });

  it('is refused on upstream hfi1, which has no bulk service', () => {
    expect(() => new EmuUnit({ seed: 2, params: ['use_bulksvc=Y'] })).toThrow(/Cornelis hfi1 build only/);
  });

  it('cap_mask without the SDMA bit: settings say SDMA is off', () => {
    const u = new EmuUnit({ seed: 2, engines: 2, params: ['cap_mask=0x4c09a08cb98'] });
    expect(u.info.settings).toMatchObject({ sdmaEnabled: false, capMask: '0x4c09a08cb98' });
  });
});
