// The port files and the unit's context: the parsers, and src/hw reading them from a hand-built
// tree, from odd or malformed files, and from the emulator's rendered sysroot as the link drops.

import { mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { EmuUnit } from '../../src/emu/index.js';
import { writeSysroot } from '../../src/emu/sysroot.js';
import { ParseError } from '../../src/errors.js';
import { realFs } from '../../src/hw/fsio.js';
import { openHwBackend } from '../../src/hw/index.js';
import { identityValue, parsePortRate, parsePortState } from '../../src/hw/parse/link.js';
import { spawnSync } from '../support/spawn.js';
import { CONTEXT_FILES, writeTree } from './sysroot.js';

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'hw-link-'));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const PORT = 'sys/class/infiniband/hfi1_0/ports/1';

describe('port-state parsers', () => {
  it('take the name of the numbered form, and a bare name', () => {
    expect(parsePortState('4: ACTIVE\n', 'state')).toBe('ACTIVE');
    expect(parsePortState('1: DOWN\n', 'state')).toBe('DOWN');
    expect(parsePortState('5: LinkUp\n', 'phys_state')).toBe('LinkUp');
    expect(parsePortState('2: Polling\n', 'phys_state')).toBe('Polling');
    expect(parsePortState('ACTIVE\n', 'state')).toBe('ACTIVE');
  });

  it('name file, line and column for garbage, a torn line and a second line', () => {
    const at = (text: string) => {
      try {
        parsePortState(text, '/x/state');
      } catch (e) {
        expect(e).toBeInstanceOf(ParseError);
        const p = e as ParseError;
        return `${p.line}:${p.column}`;
      }
      return 'parsed';
    };
    expect(at('4 ACTIVE\n')).toBe('1:1');
    expect(at('4: \n')).toBe('1:4');
    expect(at('4: ACTIVE')).toBe('1:10'); // torn: no newline
    expect(at('4: ACTIVE\n5: LinkUp\n')).toBe('2:1');
    expect(at('\n')).toBe('1:1');
    expect(() => parsePortState('4: ACTI\u0000VE\n', '/x/state')).toThrow(/\/x\/state:1:4: expected a port state/);
  });

  it('rate keeps the line as printed and refuses anything else', () => {
    expect(parsePortRate('100 Gb/sec (4X EDR)\n', 'rate')).toBe('100 Gb/sec (4X EDR)');
    expect(parsePortRate('2.5 Gb/sec (1X SDR)\n', 'rate')).toBe('2.5 Gb/sec (1X SDR)');
    expect(() => parsePortRate('fast\n', '/x/rate')).toThrow(/\/x\/rate:1:1: expected a rate/);
    expect(() => parsePortRate('100 Gb/sec (4X EDR)', '/x/rate')).toThrow(/\/x\/rate:1:20:/);
  });

  it('never fail with anything but a ParseError (fixed seed)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (s) => {
        for (const parse of [parsePortState, parsePortRate]) {
          try {
            parse(s, 'f');
          } catch (e) {
            expect(e).toBeInstanceOf(ParseError);
          }
        }
      }),
      { seed: 14, numRuns: 300 },
    );
  });

  it('identity values are trimmed; empty, multi-line or binary ones are null', () => {
    expect(identityValue('1.27.0\n')).toBe('1.27.0');
    expect(identityValue('\n')).toBeNull();
    expect(identityValue('a\nb\n')).toBeNull();
    expect(identityValue('\u0001\u0002')).toBeNull();
  });
});

describe('src/hw reads the context and the link', () => {
  it('from a hand-built tree', async () => {
    const root = tmp();
    writeTree(root);
    const b = await openHwBackend({ sysroot: root });
    const u = await b.unit(0);
    const v = (rel: string) => (CONTEXT_FILES[rel] as string).trim();
    expect(u.info.context).toEqual({
      kernelRelease: v('proc/sys/kernel/osrelease'),
      driverVersion: v('sys/module/hfi1/version'),
      driverSrcversion: v('sys/module/hfi1/srcversion'),
      fwVer: '1.27.0',
      boardId: 'Intel Omni-Path Host Fabric Interface Adapter 100 Series',
      hwRev: '17',
      serial: '0x00631a8f',
      boardVersion: 'ChipABI 3.0, ChipRev 7.17, SW Compat 3',
      pciLinkSpeed: '8.0 GT/s PCIe',
      pciLinkWidth: '16',
    });
    expect(await u.link?.()).toEqual({ state: 'ACTIVE', physState: 'LinkUp', rate: '100 Gb/sec (4X EDR)' });
    expect(u.warnings?.()).toEqual([]);
    await b.close();
  });

  it('without any of the files: every field null, no link, no warning', async () => {
    const root = tmp();
    writeTree(root, { context: false });
    const b = await openHwBackend({ sysroot: root });
    const u = await b.unit(0);
    expect(Object.values(u.info.context ?? { x: 1 }).every((x) => x === null)).toBe(true);
    expect(await u.link?.()).toBeNull();
    expect(u.warnings?.()).toEqual([]);
    await b.close();
  });

  it('board_id failing with EINVAL (unknown board) is null, not an error', async () => {
    const root = tmp();
    writeTree(root);
    const fs = {
      ...realFs,
      readFile: async (p: string, cap?: number) => {
        if (p.endsWith('/board_id')) throw Object.assign(new Error('EINVAL: invalid argument, read'), { code: 'EINVAL' });
        return realFs.readFile(p, cap);
      },
    };
    const b = await openHwBackend({ sysroot: root, fs });
    const u = await b.unit(0);
    expect(u.info.context?.boardId).toBeNull();
    expect(u.info.context?.fwVer).toBe('1.27.0');
    expect(u.warnings?.()).toEqual([]);
    await b.close();
  });

  it('a malformed port file is null with a warning naming file:line:col; the others still read', async () => {
    const root = tmp();
    writeTree(root, { files: { [`${PORT}/state`]: 'four: ACTIVE\n' } });
    const b = await openHwBackend({ sysroot: root });
    const u = await b.unit(0);
    expect(await u.link?.()).toEqual({ state: null, physState: 'LinkUp', rate: '100 Gb/sec (4X EDR)' });
    const w = u.warnings?.() ?? [];
    expect(w).toHaveLength(1);
    expect(w[0]?.path).toBe(join(root, PORT, 'state'));
    expect(w[0]?.message).toContain(`${join(root, PORT, 'state')}:1:1: expected a port state`);
    expect(w[0]?.message).toContain("the link's state is left out");
    await b.close();
  });

  it('a FIFO in place of phys_state is left out with a warning, without blocking', async () => {
    const root = tmp();
    writeTree(root);
    const file = join(root, PORT, 'phys_state');
    unlinkSync(file);
    expect(spawnSync('mkfifo', [file]).status).toBe(0);
    const b = await openHwBackend({ sysroot: root });
    const u = await b.unit(0);
    expect(await u.link?.()).toEqual({ state: 'ACTIVE', physState: null, rate: '100 Gb/sec (4X EDR)' });
    expect(u.warnings?.().map((x) => x.key)).toEqual([`link:${file}`]);
    await b.close();
  });

  it("from the emulator's sysroot: the emulator's own context and link, and the link drop and return", async () => {
    const root = tmp();
    const emu = new EmuUnit({ seed: 3, engines: 4, faults: ['link-down@30', 'link-up@60'] });
    const hwNow = async () => {
      await writeSysroot(emu, root);
      const b = await openHwBackend({ sysroot: root });
      const u = await b.unit(0);
      const out = { context: u.info.context, link: await u.link?.(), states: (await u.sample()).map((s) => s.state) };
      await b.close();
      return out;
    };
    emu.runUntilMs(20);
    let seen = await hwNow();
    expect(seen.context).toEqual(emu.info.context);
    expect(seen.link).toEqual(await emu.link());
    expect(seen.link).toEqual({ state: 'ACTIVE', physState: 'LinkUp', rate: '100 Gb/sec (4X EDR)' });

    emu.runUntilMs(50);
    seen = await hwNow();
    expect(seen.link).toEqual({ state: 'DOWN', physState: 'Polling', rate: '100 Gb/sec (4X EDR)' });
    expect(seen.link).toEqual(await emu.link());
    expect(seen.states).toEqual(['s20_Idle', 's20_Idle', 's20_Idle', 's20_Idle']);
    expect((await import('node:fs')).readFileSync(join(root, PORT, 'state'), 'utf8')).toBe('1: DOWN\n');

    emu.runUntilMs(80);
    seen = await hwNow();
    expect(seen.link).toEqual({ state: 'ACTIVE', physState: 'LinkUp', rate: '100 Gb/sec (4X EDR)' });
    expect(seen.states).toEqual(['s99_Running', 's99_Running', 's99_Running', 's99_Running']);
  });

  it('the emulated port is INIT until it goes ACTIVE', async () => {
    const emu = new EmuUnit({ seed: 3, engines: 2, portActiveMs: 5 });
    emu.runUntilMs(1);
    expect((await emu.link()).state).toBe('INIT');
    emu.runUntilMs(6);
    expect((await emu.link()).state).toBe('ACTIVE');
  });
});
