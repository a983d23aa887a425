// The port's link and the unit's context beside the engines: engines, show, watch (text and JSON)
// against a scripted backend; a backend without link() or context shows nothing, never a guess.
import { describe, expect, it } from 'vitest';
import type { LinkState, UnitContext } from '../../src/backend.js';
import { runCli } from '../support/cli.js';
import { FakeBackend, type FakeOptions, type Script } from '../support/fake-backend.js';

const idle: Script = () => ({ dh: 500, dt: 500 });
const parked: Script = () => ({ dh: 500, dt: 500, state: 's20_Idle' });
const UP: LinkState = { state: 'ACTIVE', physState: 'LinkUp', rate: '100 Gb/sec (4X EDR)' };
const DOWN: LinkState = { state: 'DOWN', physState: 'Polling', rate: null };
const CONTEXT: UnitContext = {
  kernelRelease: '5.14.0-427.13.1.el9_4.x86_64',
  driverVersion: '10.14.0.0',
  driverSrcversion: 'A1B2C3D4E5F6',
  fwVer: '1.27.0',
  boardId: 'Intel Omni-Path Host Fabric Interface Adapter 100 Series',
  hwRev: '0x11',
  serial: null,
  boardVersion: null,
  pciLinkSpeed: '8.0 GT/s PCIe',
  pciLinkWidth: '16',
};

const run = (argv: string[], opts: FakeOptions = {}, script = idle) =>
  runCli(argv, {}, false, '', new FakeBackend(script, 4, 2048, opts));

describe('engines with the link and the context', () => {
  it('names the link in the unit header line', async () => {
    const r = await run(['engines'], { link: UP });
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(
      /^hfi1_0 \(0000:05:00\.0\) {2}link ACTIVE LinkUp 100 Gb\/sec \(4X EDR\) {2}wfr \(Omni-Path 100\) {2}driver upstream {2}ports 1 {2}engines 0-3 {2}descq_cnt/,
    );
  });

  it('shows the context in one or two compact lines under the header', async () => {
    const r = await run(['engines'], { context: CONTEXT });
    const [, l1, l2, l3] = r.stdout.split('\n');
    expect(l1).toBe('  driver 10.14.0.0 (srcversion A1B2C3D4E5F6)  firmware 1.27.0  kernel 5.14.0-427.13.1.el9_4.x86_64');
    expect(l2).toBe('  board Intel Omni-Path Host Fabric Interface Adapter 100 Series  hw rev 0x11  pci 8.0 GT/s PCIe x16');
    expect(l3).toMatch(/^engine\s+state/);
  });

  it('--json carries link and context at unit level', async () => {
    const j = JSON.parse((await run(['engines', '--json'], { link: DOWN, context: CONTEXT })).stdout);
    expect(j.units[0].link).toEqual({ state: 'DOWN', physState: 'Polling', rate: null });
    expect(j.units[0].context).toEqual(CONTEXT);
  });

  it('a backend without link() or context shows neither, and JSON says link null without a context key', async () => {
    const r = await run(['engines']);
    expect(r.stdout.split('\n')[0]).not.toContain('link');
    expect(r.stdout.split('\n')[1]).toMatch(/^engine\s+state/);
    const j = JSON.parse((await run(['engines', '--json'])).stdout);
    expect(j.units[0].link).toBeNull();
    expect(j.units[0]).not.toHaveProperty('context');
  });

  it('a link() that returns null or throws shows nothing', async () => {
    expect((await run(['engines'], { link: null })).stdout.split('\n')[0]).not.toContain('link');
    const throwing = new FakeBackend(idle);
    const unit = await throwing.unit(0);
    const b = { ...throwing, kind: throwing.kind, units: () => throwing.units(), close: () => throwing.close() };
    const r = await runCli(['engines', '--json'], {}, false, '', {
      ...b,
      unit: async () => ({
        ...unit,
        link: async () => {
          throw new Error('EIO');
        },
      }),
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).units[0].link).toBeNull();
  });
});

describe('show and watch with the link', () => {
  it('show names the link, and - when unknown; --json has link', async () => {
    expect((await run(['show', '1'], { link: UP })).stdout).toMatch(/^link\s+ACTIVE LinkUp 100 Gb\/sec \(4X EDR\)$/m);
    expect((await run(['show', '1'])).stdout).toMatch(/^link\s+-$/m);
    expect(JSON.parse((await run(['show', '1', '--json'], { link: DOWN })).stdout).link).toEqual(DOWN);
    expect(JSON.parse((await run(['show', '1', '--json'])).stdout).link).toBeNull();
  });

  it('watch NDJSON lines carry linkState per engine, following the link as it changes', async () => {
    const r = await run(['watch', '--json', '--count', '2', '--interval-ms', '500'], {
      link: (t) => (t < 500 ? DOWN : UP),
    });
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.linkState)).toEqual(['DOWN', 'DOWN', 'DOWN', 'DOWN', 'ACTIVE', 'ACTIVE', 'ACTIVE', 'ACTIVE']);
    const none = await run(['watch', '--json', '--count', '1']);
    expect(JSON.parse(none.stdout.split('\n')[0] ?? '').linkState).toBeNull();
  });

  it('the watch screen shows the link line of the unit', async () => {
    const r = await runCli(['watch', '--count', '1'], {}, true, '', new FakeBackend(parked, 4, 2048, { link: DOWN }));
    expect(r.stdout).toContain('hfi1_0 ');
    expect(r.stdout).toMatch(/link DOWN Polling/);
  });
});

describe('health names the link as the cause of idle engines', () => {
  const down: Script = () => ({ dh: 0, dt: 0, state: 's20_Idle', ctrl: 0n });

  it('a readable port that is down is named in the one WARNING line, explaining the idle engines', async () => {
    const r = await runCli(['health'], {}, false, '', new FakeBackend(down, 16, 2048, { link: DOWN }));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /^HFI1-SDMA WARNING - emulator: SD305 hfi1_0 has no ACTIVE port \(port 1 DOWN \(Polling\)\): SDMA stays disabled, nothing is sent; all 16 engine\(s\) idle in s20_Idle/,
    );
    expect(r.stdout.split('\n').filter((l) => l.startsWith('WARNING:'))).toHaveLength(1);
    expect(r.stdout).toMatch(/ noport=1;0; /);
  });

  it('an ACTIVE link does not get the blame; an unknown link is not named', async () => {
    const up = await runCli(['health'], {}, false, '', new FakeBackend(down, 4, 2048, { link: UP }));
    expect(up.stdout).toMatch(/hfi1_0 all 4 engines in s20_Idle, not running \(port 1 is ACTIVE, so the engines were stopped\)/);
    const unknown = await runCli(['health'], {}, false, '', new FakeBackend(down, 4, 2048, { link: null }));
    expect(unknown.stdout).toMatch(
      /hfi1_0 all 4 engines in s20_Idle, not running \(SDMA disabled: no port is ACTIVE, or the engines were stopped/,
    );
    expect(unknown.stdout).not.toMatch(/link DOWN|link ACTIVE/);
  });
});
