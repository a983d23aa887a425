// The flavour options (--chip, --driver, --ports, --engines N|A-B), engine arguments on an engine window, and the
// flavour in the commands' text and JSON, on a scripted unit whose engines are 8..15 (an SR-IOV window).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend.js';
import type { GlobalOptions } from '../../src/cli/context.js';
import { parseEnginesArg } from '../../src/cli/flavour-options.js';
import type { Io } from '../../src/cli/io.js';
import { main } from '../../src/cli/main.js';
import { engineWindow } from '../../src/cli/units.js';
import { isHfi1SdmaError } from '../../src/errors.js';
import { runCli } from '../support/cli.js';
import { FakeBackend, type Script } from '../support/fake-backend.js';

const WINDOW = [8, 9, 10, 11, 12, 13, 14, 15];
// Every engine moves; engine 12 keeps 300 descriptors in flight and never retires them.
const script: Script = (e, t) => {
  if (e === 12) return { dh: 1000, dt: 1300, fetched: 1000 };
  const d = Math.floor(t / 10) * 10 + e;
  return { dh: d, dt: d + 20, fetched: d };
};
const hfi2 = () =>
  new FakeBackend(script, 8, 2048, {
    engineIds: WINDOW,
    flavour: {
      module: 'hfi2',
      chip: 'jkr',
      driver: 'hfi2',
      ports: 2,
      evidence: ['module hfi2: device/driver links to hfi2', 'chip jkr: PCI id 434e:0001'],
    },
  });
const run = (argv: string[], backend: Backend = hfi2()) => runCli(argv, {}, false, '', backend);

/** The global options main() hands the backend for `argv`. */
async function globalsOf(argv: string[]): Promise<GlobalOptions> {
  let seen: GlobalOptions | undefined;
  const io: Io = {
    stdout: () => {},
    stderr: () => {},
    env: {},
    isTTY: false,
    columns: 100,
    sleep: async () => {},
    readStdin: async () => '',
  };
  const code = await main([...argv, 'engines'], io, {
    openBackend: async (g) => {
      seen = g;
      return hfi2();
    },
  });
  expect(code).toBe(0);
  if (!seen) throw new Error('no backend was opened');
  return seen;
}

describe('--engines N | A-B', () => {
  it('N is engines 0..N-1; A-B the absolute window A..B inclusive', () => {
    expect(parseEnginesArg('4')).toEqual({ engines: 4, firstEngine: 0 });
    expect(parseEnginesArg('16')).toEqual({ engines: 16, firstEngine: 0 });
    expect(parseEnginesArg('8-15')).toEqual({ engines: 8, firstEngine: 8 });
    expect(parseEnginesArg('5-5')).toEqual({ engines: 1, firstEngine: 5 });
    expect(parseEnginesArg(' 0-15 ')).toEqual({ engines: 16, firstEngine: 0 });
  });

  it.each(['0', '17', '9-3', '8-16', 'x', '3-', '-3', '1.5', '0x10', '8 - 15'])(
    '%j is a usage error naming both forms',
    (raw) => {
      let err: unknown;
      try {
        parseEnginesArg(raw);
      } catch (e) {
        err = e;
      }
      expect(isHfi1SdmaError(err) && err.code).toBe('E_USAGE');
      expect((err as Error).message).toMatch(
        /^--engines .*N \(engines 0 to N-1, N from 1 to 16\) or A-B \(engines A to B inclusive/,
      );
    },
  );

  it('reaches the emulator options with the chip, driver and ports', async () => {
    const g = await globalsOf([
      '--backend',
      'emu',
      '--engines',
      '8-15',
      '--chip',
      'jkr',
      '--driver',
      'hfi2',
      '--ports',
      '2',
      '--active-ports',
      '2',
    ]);
    expect(g).toMatchObject({ engines: 8, firstEngine: 8, chip: 'jkr', driver: 'hfi2', ports: 2, activePorts: [2] });
    expect(await globalsOf(['--engines', '4'])).toMatchObject({ engines: 4, firstEngine: 0 });
    const none = await globalsOf([]);
    expect([none.engines, none.firstEngine, none.chip, none.driver, none.ports]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it.each([
    [['--engines', '8-16'], /^hfi1-sdma: --engines 8-16: expected N .* or A-B/],
    [['--chip', 'fxr'], /^hfi1-sdma: --chip must be one of wfr, jkr, got "fxr"/],
    [['--driver', 'intel'], /^hfi1-sdma: --driver must be one of upstream, cornelis, hfi2, got "intel"/],
    [['--ports', '3'], /^hfi1-sdma: --ports must be 1 or 2/],
    [['--active-ports', '2'], /^hfi1-sdma: --active-ports: there is no port 2; the adapter has port 1$/m],
    [
      ['--chip', 'jkr', '--driver', 'hfi2', '--ports', '2', '--active-ports', '1,x'],
      /^hfi1-sdma: --active-ports expects port numbers/,
    ],
    [
      ['--chip', 'jkr', '--driver', 'hfi2', '--ports', '2', '--fault', 'link-down@5:3'],
      /port 3 does not exist \(the adapter has ports 1-2; link-down takes a PORT/,
    ],
    [['--chip', 'jkr', '--chip', 'wfr'], /^hfi1-sdma: --chip was given 2 times \(jkr, wfr\); give it once/],
  ])('%j exits 64 naming the flag', async (argv, message) => {
    const r = await runCli([...argv, '--backend', 'emu', 'engines']);
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
  });
});

describe('engine arguments on a window 8..15', () => {
  it('names a window and its gaps', () => {
    expect(engineWindow(WINDOW)).toBe('8-15');
    expect(engineWindow([0, 1, 2, 3, 8, 9, 10, 11])).toBe('0-3,8-11');
    expect(engineWindow([5])).toBe('5');
    expect(engineWindow([])).toBe('none');
  });

  it.each([[['show']], [['ring']], [['progress', '--num-desc', '1']], [['waiters']]])(
    '%j 3 is E_NO_ENGINE (66) naming the window',
    async (cmd) => {
      const r = await run([...cmd, '3']);
      expect(r.code).toBe(66);
      expect(r.stderr).toMatch(/hfi2_0 has engines 8-15; there is no engine 3/);
    },
  );

  it('fit 3 too; fit 12 reads engine 12 itself, as hfi2 counts', async () => {
    const bad = await run(['fit', '3', '--num-desc', '1']);
    expect(bad.code).toBe(66);
    expect(bad.stderr).toMatch(/hfi2_0 has engines 8-15; there is no engine 3/);
    const r = await run(['fit', '12', '--num-desc', '1', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ driver: 'hfi2', inFlight: 300, inProcess: 300 });
    const t = await run(['fit', '12', '--num-desc', '1']);
    expect(t.stdout).toMatch(/engine\s+hfi2_0 sdma12/);
    expect(t.stdout).toMatch(/driver\s+hfi2 \(in-process = in flight\)\s+\(from hfi2_0; --driver to choose\)/);
    const given = await run(['--driver', 'upstream', 'fit', '12', '--num-desc', '1', '--json']);
    expect(JSON.parse(given.stdout)).toMatchObject({ driver: 'upstream', inProcess: 301 });
  });

  it('show 8 shows engine 8, with the flavour', async () => {
    const r = await run(['show', '8']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/engine\s+hfi2_0 sdma8 /);
    expect(r.stdout).toMatch(/unit\s+hfi2\s+jkr \(CN5000\)\s+driver hfi2\s+ports 2\s+engines 8-15/);
    const j = JSON.parse((await run(['show', '12', '--json'])).stdout);
    expect(j).toMatchObject({ engine: 12, module: 'hfi2', chip: 'jkr', driver: 'hfi2', ports: 2, engineIds: WINDOW });
  });
});

describe('the flavour in engines, watch and health', () => {
  it('engines: the header names chip, driver, ports and the window; rows and JSON use absolute indexes', async () => {
    const r = await run(['engines']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(
      /^hfi2_0 \(0000:05:00\.0\)\s+jkr \(CN5000\)\s+driver hfi2\s+ports 2\s+engines 8-15\s+descq_cnt 2048/,
    );
    const rows = r.stdout.split('\n').filter((l) => l.startsWith('hfi2_0/'));
    expect(rows.map((l) => l.split(/\s+/)[0])).toEqual(WINDOW.map((e) => `hfi2_0/${e}`));
    const j = JSON.parse((await run(['engines', '--json'])).stdout);
    expect(j.units[0]).toMatchObject({
      name: 'hfi2_0',
      module: 'hfi2',
      chip: 'jkr',
      driver: 'hfi2',
      ports: 2,
      engineIds: WINDOW,
    });
    expect(j.units[0].engines.map((e: { engine: number }) => e.engine)).toEqual(WINDOW);
  });

  it('the upstream default reads as wfr (Omni-Path 100), driver upstream, engines 0-3', async () => {
    const r = await run(['engines'], new FakeBackend(script, 4));
    expect(r.stdout.split('\n')[0]).toMatch(/^hfi1_0 .*wfr \(Omni-Path 100\)\s+driver upstream\s+ports 1\s+engines 0-3\s/);
  });

  it('watch labels engines by absolute index', async () => {
    const r = await run(['watch', '--json', '--count', '1']);
    expect(r.code).toBe(0);
    const lines = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l: { engine: number }) => l.engine)).toEqual(WINDOW);
  });

  it('health names the stuck engine as sdma12, never by its position', async () => {
    const r = await run(['health', '--stall-ms', '100']);
    expect(r.stdout).toMatch(/hfi2_0 sdma12 /);
    expect(r.stdout).not.toMatch(/sdma4 /);
  });
});

describe('decode and fit defaults', () => {
  it('decode without --chip takes the unit’s chip and says so; --chip wins', async () => {
    const r = await run(['decode', '0x100000', '0xc0400005']);
    expect(r.stdout).toMatch(/chip\s+jkr \(Cornelis CN5000\)\s+\(from hfi2_0; --chip to choose\)/);
    expect(r.stdout).toMatch(/BYTE_COUNT\s+64 bytes\s+\(qw1 bits 29:16\)/);
    const w = await run(['--chip', 'wfr', 'decode', '0x100000', '0xc0400005', '--json']);
    expect(JSON.parse(w.stdout)).toMatchObject({ chip: 'wfr', len: 0 });
    const t = await run(['--chip', 'wfr', 'decode', '0x100000', '0xc0400005']);
    expect(t.stdout).toMatch(/chip\s+wfr \(Intel Omni-Path 100\)\s+\(--chip\)/);
  });

  it('fit on explicit numbers keeps upstream and says why; --driver picks another build', async () => {
    const ring = ['fit', '--descq-cnt', '2048', '--head', '0', '--tail', '255', '--num-desc', '1'];
    const r = await run(ring);
    expect(r.stdout).toMatch(
      /driver\s+upstream \(in-process = in flight \+ 1\)\s+\(default: explicit numbers; --driver to choose\)/,
    );
    const h = await run(['--driver', 'cornelis', ...ring, '--json']);
    expect(JSON.parse(h.stdout)).toMatchObject({ driver: 'cornelis', inProcess: 255 });
  });
});

describe('completion of the flavour options', () => {
  it('completes --chip, --driver and --ports values by name', async () => {
    const { valueCompletions } = await import('../../src/cli/completion.js');
    expect(await valueCompletions(['hfi1-sdma', '--chip', ''])).toEqual(['wfr', 'jkr']);
    expect(await valueCompletions(['hfi1-sdma', '--driver', 'c'])).toEqual(['cornelis']);
    expect(await valueCompletions(['hfi1-sdma', '--ports', ''])).toEqual(['1', '2']);
    expect(await valueCompletions(['hfi1-sdma', '--active-ports', '1'])).toEqual(['1', '1,2']);
  });
});

describe('doctor shows the flavour and its evidence', () => {
  it('one flavour line per unit, then every evidence line of doctor --json', async () => {
    const work = mkdtempSync(join(tmpdir(), 'hfi1-sdma-doctor-flavour-'));
    try {
      const root = join(work, 'host');
      expect((await runCli(['emu', 'write', '--sysroot', root])).code).toBe(0);
      const j = JSON.parse((await runCli(['--sysroot', root, '--json', 'doctor'])).stdout);
      const u = j.units[0];
      expect(u).toMatchObject({ module: u.flavour.module, chip: u.flavour.chip, driver: u.flavour.driver });
      expect(u.engineIds).toHaveLength(u.engines);
      const text = (await runCli(['--sysroot', root, 'doctor'])).stdout;
      const window = `${u.engineIds[0]}-${u.engineIds.at(-1)}`;
      expect(text).toContain(`\n  ${u.module}  ${u.chip} (`);
      expect(text).toMatch(new RegExp(`driver ${u.driver}  ports ${u.ports}  engines ${window}\n`));
      for (const line of u.flavour.evidence as string[]) expect(text).toContain(`  evidence: ${line}\n`);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});
