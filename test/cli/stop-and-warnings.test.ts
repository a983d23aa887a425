// Long-running commands end on SIGINT/SIGTERM (the loop stops, the backend is closed); source
// warnings are said once each; a tear in one engine's ring leaves the header commands working.
import { EventEmitter } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import type { SourceWarning } from '../../src/backend.js';
import { installExitHandlers } from '../../src/cleanup.js';
import { Hfi1SdmaError } from '../../src/errors.js';
import { runCli } from '../support/cli.js';
import { FakeBackend, type Script } from '../support/fake-backend.js';

const proc = Object.assign(new EventEmitter(), { exit: vi.fn() });
installExitHandlers(proc as unknown as NodeJS.Process);

const busy: Script = (e, t) => ({ dh: t + e, dt: t + e + 40 });

// In this order, even under --sequence.shuffle: the second test relies on the stop the first one requested.
describe('stopping on a signal', { shuffle: false }, () => {
  it('watch without --count ends at SIGTERM, closes the backend and exits 0', async () => {
    const b = new FakeBackend((e, t) => {
      if (t === 3000 && e === 0) proc.emit('SIGTERM');
      return busy(e, t);
    });
    const r = await runCli(['watch', '--json', '--interval-ms', '1000'], {}, false, '', b);
    expect(r.code).toBe(0);
    expect(b.nowMs).toBe(3000);
    expect(b.closed).toBe(1);
    expect(proc.exit).not.toHaveBeenCalled();
  });

  it('health interrupted is UNKNOWN and closes the backend (a stop already requested holds)', async () => {
    const b = new FakeBackend(busy);
    const r = await runCli(['health'], {}, false, '', b);
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/^HFI1-SDMA UNKNOWN - emulator: interrupted/);
    expect(b.closed).toBe(1);
  });
});

describe('source warnings', () => {
  const warnings: SourceWarning[] = [
    {
      source: 'sdes',
      path: '/sys/kernel/debug/hfi1/hfi1_0/sdes',
      key: 'sdes:trailing-field',
      message: 'unknown field XYZ ignored',
    },
    { source: 'sdes', path: '/sys/kernel/debug/hfi1/hfi1_0/sdes', key: 'sdes:torn', message: 'record of engine 3 torn' },
  ];

  it('engines prints each distinct warning once on stderr and still exits 0', async () => {
    const r = await runCli(
      ['engines'],
      {},
      false,
      '',
      new FakeBackend(busy, 4, 2048, { warnings: [...warnings, warnings[0] as SourceWarning] }),
    );
    expect(r.code).toBe(0);
    expect(r.stderr.trim().split('\n')).toEqual([
      'hfi1-sdma: warning: /sys/kernel/debug/hfi1/hfi1_0/sdes: unknown field XYZ ignored',
      'hfi1-sdma: warning: /sys/kernel/debug/hfi1/hfi1_0/sdes: record of engine 3 torn',
    ]);
  });

  it('a torn ring fails only ring; the header commands keep working', async () => {
    const b = new FakeBackend(busy, 4, 2048, { warnings });
    const unit = b.unit.bind(b);
    b.unit = async (n) => ({
      ...(await unit(n)),
      ring: async () => {
        throw new Hfi1SdmaError('E_PARSE', 'sdes:120:1: record of engine 3 cut inside its descriptors');
      },
    });
    expect((await runCli(['engines'], {}, false, '', b)).code).toBe(0);
    expect((await runCli(['show', '3'], {}, false, '', b)).code).toBe(0);
    const ring = await runCli(['ring', '3'], {}, false, '', b);
    expect(ring.code).toBe(65);
    expect(ring.stderr).toMatch(/record of engine 3 cut/);
  });
});
