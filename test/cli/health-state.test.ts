// health --state: the observation carried between runs (Nagios runs a check every minute or five, and one
// 2 s run cannot gather the turnover a verdict needs), and every bad state (missing directory, a directory of
// another user, a corrupt file, another host's, a stale one, a link) is a note and never a wrong verdict.
import { chmodSync, chownSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend.js';
import { newMonitorTracks } from '../../src/monitor/monitor.js';
import { decodeState, encodeState, STATE_VERSION } from '../../src/monitor/state.js';
import { defaultStatePath } from '../../src/monitor/state-file.js';
import { runCli } from '../support/cli.js';
import { FakeBackend, type Script } from '../support/fake-backend.js';
import { tempDirs } from '../support/temp.js';
import { qpWaiter } from '../support/waiters.js';

const tmp = tempDirs('health-state-');

/** This host's boot id, as the state is keyed (null where /proc does not show one). */
function bootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return null;
  }
}

// Engines 0 and 1 busy and nearly full (no room for a waiter): a QP printed on idle engine 3 is only probably
// stranded, whatever the number of runs. Engine 2 is stuck with work in flight.
const saturated: Script = (e, t) =>
  e < 2 ? { dh: t + e, dt: t + e + 2000 } : e === 2 ? { dh: 7, dt: 307, fetched: 7 } : { dh: 500 };
const probableQp = { ...qpWaiter({ qpn: 0x1a, engine: 3 }), source: 'qp_stats' as const };

function host(): FakeBackend {
  return new FakeBackend(saturated, 4, 2048, { kind: 'hw', waiters: { at: () => [probableQp] } });
}

/** One Nagios run at the backend's current time, then 20 s until the next one. */
async function run(b: FakeBackend, args: string[]) {
  const r = await runCli(['health', '-c', 'stalled=off', '-w', 'notrunning=off', ...args], {}, false, '', b);
  b.advanceMs(20_000);
  return r;
}

describe('health --state', () => {
  it('a probable strand that persists across runs turns WARNING, its age spanning the runs; without a state it stays a note', async () => {
    const state = join(tmp(), 'health.state');
    const b = host();
    const r1 = await run(b, ['--state', state]);
    expect(r1.code, r1.stdout).toBe(0);
    expect(r1.stdout).toMatch(/^SD205 hfi1_0 sdma3 QP 0x1a RTS probably stranded \(lost-wakeup\) for ≥ 2\.0 s/m);
    const r2 = await run(b, ['--state', state]);
    expect(r2.code, r2.stdout).toBe(0);
    const r3 = await run(b, ['--state', state]);
    expect(r3.code, r3.stdout).toBe(1);
    // Seen since the first run, 2 s of watching plus two 20 s gaps and 2 s more: at least 44 s.
    expect(r3.stdout).toMatch(
      /^HFI1-SDMA WARNING - SD202 hfi1_0 sdma3 QP 0x1a RTS probably stranded \(lost-wakeup\) for ≥ 4[4-9]\.\d s/m,
    );
    const fresh = host();
    for (let i = 0; i < 3; i++) expect((await run(fresh, ['--state', 'none'])).code).toBe(0);
  });

  it('a stall seen across runs is one stall whose age spans them', async () => {
    const state = join(tmp(), 'health.state');
    const b = new FakeBackend(saturated, 4, 2048, { kind: 'hw' });
    await runCli(['health', '--state', state], {}, false, '', b);
    b.advanceMs(60_000);
    const r = await runCli(['health', '--state', state], {}, false, '', b);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/SD101 hfi1_0 sdma2 stalled \(chip-not-fetching\) for ≥ 1 min 0[34] s/);
  });

  it('the state file is the monitor’s tracks, mode 0600, readable back', async () => {
    const state = join(tmp(), 'health.state');
    await run(host(), ['--state', state]);
    const d = decodeState(readFileSync(state, 'utf8'));
    // Five samples 500 ms apart, and two more --strand-ms/2 apart while the QP's verdict was being confirmed.
    expect('state' in d && d.state.tracks.index).toBe(7);
    expect('state' in d && [...d.state.tracks.strands.keys()]).toEqual(['hfi1_0']);
  });

  const bad: [string, (dir: string) => string, RegExp][] = [
    [
      'a directory that does not exist',
      (d) => join(d, 'nope', 'health.state'),
      /state not saved: the directory .*nope does not exist/,
    ],
    [
      'a corrupt file',
      (d) => {
        writeFileSync(join(d, 'health.state'), '{"version": 1, "key": ');
        return join(d, 'health.state');
      },
      /state .*health\.state: corrupt \(not valid JSON/,
    ],
    [
      'another host’s state',
      (d) => {
        const key = { host: 'node99', bootId: null, sysroot: '/elsewhere', units: {} };
        writeFileSync(
          join(d, 'health.state'),
          encodeState({ version: STATE_VERSION, key, savedAtMs: Date.now(), tracks: newMonitorTracks() }),
        );
        return join(d, 'health.state');
      },
      /it was saved for node99 reading \/elsewhere: ignored/,
    ],
    [
      'a stale state',
      (d) => {
        const key = { host: hostname(), bootId: bootId(), sysroot: '/', units: {} };
        writeFileSync(
          join(d, 'health.state'),
          encodeState({ version: STATE_VERSION, key, savedAtMs: Date.now() - 3_600_000, tracks: newMonitorTracks() }),
        );
        return join(d, 'health.state');
      },
      /it was saved 60 min ago \(stale beyond 15 min\): ignored/,
    ],
    [
      'a state file that is a link',
      (d) => {
        writeFileSync(join(d, 'elsewhere'), 'x');
        symlinkSync(join(d, 'elsewhere'), join(d, 'health.state'));
        return join(d, 'health.state');
      },
      /health\.state: a symbolic link, never followed: ignored/,
    ],
    [
      'a directory anyone may write',
      (d) => {
        const open = join(d, 'open');
        mkdirSync(open);
        chmodSync(open, 0o777);
        return join(open, 'health.state');
      },
      /state not saved: .*open is writable by other users/,
    ],
  ];
  for (const [what, make, note] of bad) {
    it(`${what}: a note, and the verdict of a run without a state`, async () => {
      const path = make(tmp());
      const r = await run(host(), ['--state', path]);
      const plain = await run(host(), ['--state', 'none']);
      expect(r.stdout).toMatch(note);
      expect(r.code).toBe(plain.code);
      expect(r.stdout.split('\n')[0]).toBe(plain.stdout.split('\n')[0]);
    });
  }

  it.skipIf(process.getuid?.() !== 0)(
    'a directory of another user: not saved, said so (runs only as root, who can make one)',
    async () => {
      const d = join(tmp(), 'theirs');
      mkdirSync(d);
      chownSync(d, 65534, 65534);
      // Root refuses it too: its owner could swap it for a link between the check and the write.
      const r = await runCli(['health', '--state', join(d, 'health.state')], {}, false, '', host() as Backend);
      expect(r.stdout).toMatch(/state not saved: .*theirs belongs to uid 65534, not this user/);
    },
  );

  it('has a documented default: /run/hfi1-sdma as root, the runtime directory or /tmp/hfi1-sdma-UID otherwise', () => {
    const e = { env: {}, tmpdir: '/tmp' };
    expect(defaultStatePath('health', '/', { ...e, uid: 0 })).toBe('/run/hfi1-sdma/health.state');
    expect(defaultStatePath('health', '/', { ...e, uid: 1000 })).toBe('/tmp/hfi1-sdma-1000/health.state');
    expect(defaultStatePath('health', '/', { uid: 1000, env: { XDG_RUNTIME_DIR: '/run/user/1000' }, tmpdir: '/tmp' })).toBe(
      '/run/user/1000/hfi1-sdma/health.state',
    );
    expect(defaultStatePath('health', '/srv/tree', { ...e, uid: 0 })).toMatch(/^\/run\/hfi1-sdma\/health-[0-9a-f]{8}\.state$/);
  });
});
