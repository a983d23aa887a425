// sdes from a newer driver, torn by a concurrent read, or listing more engines than the chip has;
// and a gone device. The known part is used and the rest is said; what cannot be known is null.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openHwBackend } from '../../src/hw/index.js';
import { engineReg } from '../../src/hw/regs.js';
import { ALL_ONES_64, SEND_DMA_ENGINES, SEND_DMA_STATUS } from '../../src/progress/constants.js';
import { writeBarImage } from '../hw/bar-image.js';
import { fixture } from '../hw/fixtures.js';
import { cli, emptyRecord, goodBar, goodTree, tempRoots } from './sources-tree.js';

const fresh = tempRoots();
const UPSTREAM = fixture('sdes/upstream.txt');

describe('a header field this version does not know (a newer driver)', () => {
  const newer = UPSTREAM.replace(/^(SDE .*)$/gm, '$1 QW 0x5 PAD 7');

  it('engines: exit 0, the known fields used, one warning naming file:line and the extra text', async () => {
    const t = goodTree(fresh(), { sdes: newer });
    const r = await cli(t.root, ['engines', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const engines = JSON.parse(r.stdout).units[0].engines;
    expect(engines.map((e: { state: string }) => e.state)).toEqual(['s99_Running', 's99_Running']);
    expect(engines[0].swTail).toBe(3);
    const lines = r.stderr.split('\n').filter((l) => l.includes('after SLC'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`${t.sdes}:1: header fields after SLC`);
    expect(lines[0]).toContain('"QW 0x5 PAD 7", in 2 headers');
  });

  it('ring works on it too', async () => {
    const t = goodTree(fresh(), { sdes: newer });
    const r = await cli(t.root, ['ring', '0', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).descriptors).toHaveLength(3);
  });

  it('text after SLC that is not labelled fields is still malformed: 65 naming file:line:column', async () => {
    const t = goodTree(fresh(), { sdes: UPSTREAM.replace(/^(SDE 0 .*)$/m, '$1 !!') });
    const r = await cli(t.root, ['engines']);
    expect(r.code).toBe(65);
    expect(r.stderr).toMatch(new RegExp(`${t.sdes}:1:\\d+: unexpected text after SLC`));
  });
});

describe('a torn sdes: the last record cut inside its descriptor lines', () => {
  // Engine 1 is engine 0's record again (3 descriptors), cut after its first descriptor line.
  const rec0 = UPSTREAM.split('\n').slice(0, 6).join('\n');
  const rec1 = rec0.replace(/^SDE 0 CPU 3/, 'SDE 1 CPU 5').split('\n');
  const atLineEnd = `${rec0}\n${rec1.slice(0, 3).join('\n')}\n`; // header, desc[0], its AHG line
  const midLine = `${rec0}\n${rec1.slice(0, 4).join('\n').slice(0, -10)}`;

  it.each([
    ['at a line end', atLineEnd],
    ['inside a line', midLine],
  ])('cut %s: engines uses both headers and says the ring of engine 1 is cut', async (_where, text) => {
    const t = goodTree(fresh(), { sdes: text });
    const r = await cli(t.root, ['engines', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const [e0, e1] = JSON.parse(r.stdout).units[0].engines;
    expect(e0.state).toBe('s99_Running');
    expect(e1).toMatchObject({ state: 's99_Running', swTail: 3, swHead: 0, cpu: 5 });
    expect(r.stderr).toContain(`${t.sdes}:`);
    expect(r.stderr).toContain('the record of engine 1 is cut inside its descriptors');
  });

  it('ring of the cut engine: 65 naming file:line; ring of the whole one: 0', async () => {
    const t = goodTree(fresh(), { sdes: atLineEnd });
    const cut = await cli(t.root, ['ring', '1']);
    expect(cut.code).toBe(65);
    expect(cut.stderr).toMatch(new RegExp(`${t.sdes}:10:1: engine 1: 1 of 3 descriptor lines`));
    expect((await cli(t.root, ['ring', '0'])).code).toBe(0);
  });

  it('a record cut inside its header line with the BAR readable: that engine from the BAR, said on stderr', async () => {
    const t = goodTree(fresh(), { sdes: `${rec0}\n${(rec1[0] as string).slice(0, 40)}`, bar: goodBar });
    const r = await cli(t.root, ['engines', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const [e0, e1] = JSON.parse(r.stdout).units[0].engines;
    expect(e0.sources).toContain('sdes');
    expect(e1.sources).not.toContain('sdes');
    expect(e1.sources).toContain('bar');
    expect(e1.state).toBeNull();
    expect(r.stderr).toContain(`${t.sdes}:7:`);
    expect(r.stderr).toContain('engine 1 comes from the BAR and the counters instead');
  });
});

describe('more engines than the chip has (16)', () => {
  it('17 sdma<N> directories: 65 naming the 17th', async () => {
    const t = goodTree(fresh(), { engines: 17 });
    const r = await cli(t.root, ['engines']);
    expect(r.code).toBe(65);
    expect(r.stderr).toContain(`${join(t.cls, 'sdma16')}: 17 sdma<N> directories, but the chip has 16 SDMA engines`);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  const seventeen = Array.from({ length: 17 }, (_, e) => emptyRecord(e)).join('');

  it.each([['engines'], ['ring', '0']])('17 sdes records, no BAR: `%s` exits 65 naming file:line', async (...args) => {
    const t = goodTree(fresh(), { engines: 16, sdes: seventeen });
    const r = await cli(t.root, args);
    expect(r.code).toBe(65);
    expect(r.stderr).toContain(`${t.sdes}:17:1: a record for a 17th engine, but the chip has 16 SDMA engines`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('17 sdes records and no sdma<N> directories, the BAR readable: the BAR stands in, the fault is named', async () => {
    const t = goodTree(fresh(), { engines: 0, sdes: seventeen, bar: goodBar });
    const r = await cli(t.root, ['engines', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).units[0].engines).toHaveLength(16);
    expect(r.stderr).toContain(`${t.sdes}:17:1: a record for a 17th engine`);
  });
});

describe('a gone device: no state, no all-ones values', () => {
  it('engines whose registers read all-ones have state null and no CSRs', async () => {
    const t = goodTree(fresh(), {
      sdes: fixture('sdes/device-gone.txt') + UPSTREAM.split('\n').slice(6).join('\n'),
      bar: (p) =>
        writeBarImage(
          p,
          new Map([
            [SEND_DMA_ENGINES, ALL_ONES_64],
            [engineReg(SEND_DMA_STATUS, 0), ALL_ONES_64],
          ]),
        ),
    });
    const b = await openHwBackend({ sysroot: t.root });
    try {
      for (const s of await (await b.unit(0)).sample()) {
        expect(s).toMatchObject({ gone: true, state: null, csr: null });
        expect(JSON.stringify(s, (_k, v) => (typeof v === 'bigint' ? v.toString(16) : v))).not.toContain('ffffffffffffffff');
      }
    } finally {
      await b.close();
    }
  });

  it('the sdes alone (no BAR) showing all-ones registers: gone, state null', async () => {
    const t = goodTree(fresh(), { sdes: fixture('sdes/device-gone.txt') + UPSTREAM.split('\n').slice(6).join('\n') });
    writeFileSync(t.interrupts, fixture('proc/interrupts'));
    const b = await openHwBackend({ sysroot: t.root });
    try {
      const [s0, s1] = await (await b.unit(0)).sample();
      expect(s0).toMatchObject({ gone: true, state: null, csr: null });
      expect(s0?.sw?.descqTail).toBe(9); // kernel memory, not a register: still true
      expect(s1).toMatchObject({ gone: false, state: 's99_Running' });
    } finally {
      await b.close();
    }
  });
});
