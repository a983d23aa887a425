// Per-port links of the emulated adapter: both ports of a CN5000 rendered and reported, ports not in use, link faults
// by port (an engine idles only when every port it serves is down), and the fault halt-stuck.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { emuUnitFromOptions } from '../../src/emu/index.js';
import { invariantViolations } from '../../src/emu/invariants.js';
import { closeSysroot, writeSysroot } from '../../src/emu/sysroot.js';
import { vlText } from '../../src/emu/sysroot-flavour.js';
import { EmuUnit, type EmuUnitOptions } from '../../src/emu/unit.js';
import { Hfi1SdmaError } from '../../src/errors.js';
import { SEND_DMA_STATUS_ENG_HALTED_BIT } from '../../src/progress/constants.js';
import { tempDirs } from '../support/temp.js';

const tempDir = tempDirs('hfi1-emu-ports-');
const CN5000: EmuUnitOptions = { seed: 4, chip: 'jkr', driver: 'hfi2', ports: 2, firstEngine: 8, engines: 8, workload: 'qp' };

async function portFiles(u: EmuUnit): Promise<string[]> {
  const dir = tempDir();
  await writeSysroot(u, dir);
  closeSysroot(u, dir);
  const cls = join(dir, 'sys/class/infiniband', u.info.name, 'ports');
  return [1, 2].flatMap((p) => ['state', 'phys_state'].map((f) => readFileSync(join(cls, String(p), f), 'utf8')));
}

const states = (u: EmuUnit) => [...new Set(u.engines.map((e) => e.state))];

describe('the ports of a two-port CN5000', () => {
  it('are both ACTIVE by default: ports/1 and ports/2 in the tree, links() per port, link() port 1', async () => {
    const u = new EmuUnit(CN5000);
    u.runUntilMs(5);
    expect(await u.links()).toEqual([
      { port: 1, state: 'ACTIVE', physState: 'LinkUp', rate: '400 Gb/sec (4X NDR)' },
      { port: 2, state: 'ACTIVE', physState: 'LinkUp', rate: '400 Gb/sec (4X NDR)' },
    ]);
    expect(await u.link()).toEqual({ state: 'ACTIVE', physState: 'LinkUp', rate: '400 Gb/sec (4X NDR)' });
    expect(await portFiles(u)).toEqual(['4: ACTIVE\n', '5: LinkUp\n', '4: ACTIVE\n', '5: LinkUp\n']);
  });

  it('with --active-ports 2, port 1 stays DOWN and Disabled, the engines run, and link() shows port 2', async () => {
    const u = emuUnitFromOptions({
      seed: 4,
      engines: 8,
      firstEngine: 8,
      chip: 'jkr',
      driver: 'hfi2',
      ports: 2,
      activePorts: [2],
      descqCnt: undefined,
      workload: 'qp',
      atMs: undefined,
      fault: [],
    });
    u.runUntilMs(5);
    expect((await u.links()).map((l) => [l.port, l.state, l.physState])).toEqual([
      [1, 'DOWN', 'Disabled'],
      [2, 'ACTIVE', 'LinkUp'],
    ]);
    expect((await u.link()).state).toBe('ACTIVE');
    expect(states(u)).toEqual(['s99_Running']);
    expect(await portFiles(u)).toEqual(['1: DOWN\n', '3: Disabled\n', '4: ACTIVE\n', '5: LinkUp\n']);
    expect(u.info.flavour.evidence.join(' ')).toMatch(/--active-ports 2/);
  });

  it('one port down while the other is ACTIVE leaves every engine running and sending', async () => {
    const u = new EmuUnit({ ...CN5000, faults: ['link-down@5:1'] });
    u.runUntilMs(6);
    const before = u.totals().descriptors;
    u.runUntilMs(12);
    expect((await u.links()).map((l) => l.state)).toEqual(['DOWN', 'ACTIVE']);
    expect((await u.links())[0]?.physState).toBe('Polling');
    expect(states(u)).toEqual(['s99_Running']);
    expect(u.totals().descriptors).toBeGreaterThan(before);
    expect(u.events(['fault']).map((r) => [r.engine, r.c])).toEqual([[-1, 1]]);
    expect(invariantViolations(u)).toEqual([]);
  });

  it('the last port in use going down idles every engine (e85 … s20_Idle); either port coming back runs them', async () => {
    const u = new EmuUnit({ ...CN5000, activePorts: [2], faults: ['link-down@5:2', 'link-up@10:1'] });
    u.runUntilMs(9);
    expect((await u.links()).map((l) => l.state)).toEqual(['DOWN', 'DOWN']);
    expect(states(u)).toEqual(['s20_Idle']);
    u.runUntilMs(12);
    expect((await u.links()).map((l) => l.state)).toEqual(['ACTIVE', 'DOWN']);
    expect(states(u)).toEqual(['s99_Running']);
    expect(invariantViolations(u)).toEqual([]);
  });

  it('a link fault names a port: a port the adapter lacks is a usage error naming its ports', () => {
    const refused = (opts: EmuUnitOptions, fault: string) => {
      try {
        new EmuUnit({ ...opts, faults: [fault] });
      } catch (e) {
        return e instanceof Hfi1SdmaError ? e.message : String(e);
      }
      return 'accepted';
    };
    expect(refused(CN5000, 'link-down@5:3')).toMatch(/port 3 does not exist \(the adapter has ports 1-2; link-down takes a PORT/);
    expect(refused({ seed: 1 }, 'link-up@5:2')).toMatch(/port 2 does not exist \(the adapter has port 1;/);
    expect(refused(CN5000, 'link-down@5:2')).toBe('accepted');
    expect(() => new EmuUnit({ ...CN5000, activePorts: [3] })).toThrow(
      /--active-ports: there is no port 3; the adapter has ports 1-2/,
    );
    expect(() => new EmuUnit({ ...CN5000, activePorts: [] })).toThrow(/--active-ports names no port/);
  });

  it("vl lists the engine's VL per port, 255 where a port's map does not use it", () => {
    const u = new EmuUnit(CN5000);
    const p2 = u.host.ports[1];
    if (!p2) throw new Error('no port 2');
    expect(vlText(u, 0)).toBe('0,0');
    Object.assign(p2, { vlMap: { ...p2.vlMap, engineToVl: p2.vlMap.engineToVl.map(() => -1) } });
    expect(vlText(u, 0)).toBe('0,255');
  });
});

describe('fault halt-stuck', () => {
  it('leaves the engine in s50_HwHaltWait, STATUS halted, SDmaHaltErr latched in ENG_ERR_STATUS, for good', async () => {
    const u = new EmuUnit({ seed: 2, engines: 4, workload: 'qp', faults: ['halt-stuck@5:1'] });
    for (const ms of [10, 120]) {
      u.runUntilMs(ms);
      const [s0, s1] = await u.sample([0, 1]);
      expect(s1?.state).toBe('s50_HwHaltWait');
      expect(((s1?.csr?.status ?? 0n) >> BigInt(SEND_DMA_STATUS_ENG_HALTED_BIT)) & 1n).toBe(1n);
      expect(s1?.csr?.errStatus).toBe(0x40n);
      expect(s0?.state).toBe('s99_Running');
    }
    expect(invariantViolations(u)).toEqual([]);
  });
});
