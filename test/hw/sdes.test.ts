import { describe, expect, it } from 'vitest';
import { ParseError } from '../../src/errors.js';
import { parseSdes, recordDescriptors } from '../../src/hw/parse/sdes.js';
import { fixture, recordBoundaries } from './fixtures.js';

function parseError(f: () => unknown): ParseError {
  try {
    f();
  } catch (e) {
    if (e instanceof ParseError) return e;
    throw e;
  }
  throw new Error('expected a ParseError');
}

describe('parseSdes: upstream 23-field format (sdma_seqfile_dump_sde, sdma.c)', () => {
  const dump = parseSdes(fixture('sdes/upstream.txt'), { file: 'sdes' });

  it('reads both records and every header field', () => {
    expect(dump.torn).toBeNull();
    expect(dump.records).toHaveLength(2);
    const h = dump.records[0]?.header;
    expect(h).toMatchObject({ engine: 0, cpu: 3, state: 's99_Running', ctrl: 0x9n, status: 0n, swTail: 3, swHead: 0 });
    expect(h?.memory).toBe(0x1880000n);
    expect(h?.lenGen).toBe(0x40800n);
    expect(h?.reloadCnt).toBe(0xc9n);
    expect(h?.ahgBits).toBe(0xfffffffe00000000n);
    expect(h).toMatchObject({ txTail: 2, txHead: 0, descqTail: 3, descqHead: 0, flushListNonEmpty: false, descqFullCount: 0 });
    const h1 = dump.records[1]?.header;
    expect(h1?.lastStatus).toBe(0x100000000n);
    expect(h1?.memory).toBe(0x1880188n);
    expect(h1?.descqFullCount).toBe(2);
  });

  it('decodes the descriptors with their AHG lines', () => {
    const rec = dump.records[0];
    if (!rec) throw new Error('no record');
    const d = recordDescriptors(dump, rec);
    expect(d.map((x) => x.slot)).toEqual([0, 1, 2]);
    expect(d.map((x) => x.flags)).toEqual(['--F-', '-H-L', '-HFL']);
    expect(d[0]).toEqual({ slot: 0, flags: '--F-', addr: 0x1ff2a000n, gen: 0, len: 64, ahgIdx: 0, ahgMode: 0 });
    expect(d[1]?.ahgIdx).toBeUndefined();
    expect(d[1]?.len).toBe(4032);
    expect(dump.records[1]?.count).toBe(0);
  });
});

describe('parseSdes: variants', () => {
  it('accepts the 22-field staging header (no CPU)', () => {
    const d = parseSdes(fixture('sdes/staging-22.txt'));
    expect(d.records[0]?.header.cpu).toBeNull();
    expect(d.records[0]?.header.state).toBe('s99_Running');
    expect(d.records[0]?.count).toBe(1);
  });

  it('accepts the d0/d1 descriptor lines and aidx/amode/alen AHG lines', () => {
    const d = parseSdes(fixture('sdes/cornelis-d0d1.txt'));
    const rec = d.records[0];
    if (!rec) throw new Error('no record');
    const ring = recordDescriptors(d, rec);
    expect(ring[0]).toMatchObject({ slot: 0, flags: '--F-', gen: 1, len: 64, ahgIdx: 2, ahgMode: 1 });
    expect(ring[0]?.qw0).toBe((1n << 63n) | (64n << 48n) | 0x3000n);
    expect(ring[0]?.qw1).toBe((1n << 13n) | (2n << 8n) | (1n << 2n));
    expect(ring[1]?.qw1).toBe((1n << 2n) | 1n);
    expect(rec.header.descqTail).toBe(2050);
  });
});

describe('parseSdes: edges', () => {
  it('keeps all-ones CSRs of a device that is gone', () => {
    const h = parseSdes(fixture('sdes/device-gone.txt')).records[0]?.header;
    expect(h?.ctrl).toBe(0xffffffffffffffffn);
    expect(h?.status).toBe(0xffffffffffffffffn);
    expect(h?.checkSlid).toBe(0xffffffffffffffffn);
  });

  it('refuses an unknown state name, naming line and column', () => {
    const e = parseError(() => parseSdes(fixture('sdes/unknown-state.txt'), { file: 'x/sdes' }));
    expect(e.code).toBe('E_PARSE');
    expect(e.line).toBe(1);
    expect(e.column).toBe('SDE 0 CPU 2 STE '.length + 1);
    expect(e.message).toContain("unknown engine state 's70_Bogus'");
    expect(e.message).toContain('x/sdes:1:17');
  });

  it('lists a ring that wrapped past slot 0', () => {
    const d = parseSdes(fixture('sdes/wrapped.txt'));
    const rec = d.records[0];
    if (!rec) throw new Error('no record');
    expect(recordDescriptors(d, rec).map((x) => [x.slot, x.gen])).toEqual([
      [2046, 0],
      [2047, 0],
      [0, 1],
      [1, 1],
    ]);
  });

  it('reads a full 64-entry ring: 63 descriptors (descq_cnt − 1)', () => {
    const d = parseSdes(fixture('sdes/full-64.txt'), { descqCnt: 64 });
    expect(d.records[0]?.count).toBe(63);
    expect(d.descriptors.slot[0]).toBe(5);
    expect(d.descriptors.slot[62]).toBe(3);
  });

  it('refuses the 64-entry ring read as a 2048-entry one', () => {
    const e = parseError(() => parseSdes(fixture('sdes/full-64.txt'), { descqCnt: 2048 }));
    // slots 5 … 63 with their AHG lines fill lines 2–119; slot 0 comes where 64 is due
    expect(e.line).toBe(120);
    expect(e.message).toContain('expected slot 64');
  });

  it('reads an empty ring of a halted engine', () => {
    const d = parseSdes(fixture('sdes/empty-halted.txt'));
    expect(d.records[0]?.count).toBe(0);
    expect(d.records[0]?.header).toMatchObject({ state: 's50_HwHaltWait', errStatus: 0x42n, flushListNonEmpty: true });
  });

  it('reports a truncated last line as a torn record and keeps the complete ones', () => {
    const text = fixture('sdes/truncated.txt');
    const d = parseSdes(text);
    expect(d.records).toHaveLength(0);
    expect(d.torn?.engine).toBe(0);
    expect(d.torn?.error.line).toBe(4);
  });

  it('names line and column of a malformed descriptor line', () => {
    const text = fixture('sdes/upstream.txt').replace('gen:0 len:4032', 'gen:7 len:4032');
    const e = parseError(() => parseSdes(text, { file: 'sdes' }));
    expect(e.line).toBe(4);
    expect(e.column).toBe((text.split('\n')[3] as string).indexOf('gen:7') + 5);
    expect(e.message).toContain('gen must be 0 to 3');
  });

  it('refuses descriptors out of order and records out of engine order', () => {
    const t = fixture('sdes/upstream.txt');
    expect(parseError(() => parseSdes(t.replace('desc[1]', 'desc[5]'))).message).toContain('expected slot 1');
    expect(parseError(() => parseSdes(t.replace('SDE 1 ', 'SDE 2 '))).message).toContain('engine 1');
  });
});

describe('parseSdes: split at each record boundary and inside each record', () => {
  const text = fixture('sdes/upstream.txt') + fixture('sdes/wrapped.txt').replace('SDE 0 ', 'SDE 2 ');
  const bounds = recordBoundaries(text);

  it('a cut at a boundary gives exactly the records before it', () => {
    bounds.forEach((b, k) => {
      const d = parseSdes(text.slice(0, b));
      expect(d.torn).toBeNull();
      expect(d.records.map((r) => r.header.engine)).toEqual(Array.from({ length: k }, (_, i) => i));
    });
  });

  it('a cut anywhere inside record k keeps records 0..k−1 and reports k as torn', () => {
    for (let k = 0; k + 1 < bounds.length; k++) {
      const from = bounds[k] as number;
      const to = bounds[k + 1] as number;
      for (let cut = from + 1; cut < to; cut++) {
        const d = parseSdes(text.slice(0, cut));
        // AHG lines are optional (sdma_seqfile_dump_sde, sdma.c): a cut just before the record's last one, an AHG line, is a whole record
        if (/^\t\tahgidx: [0-9]+ ahgmode: [0-9]+\n$/.test(text.slice(cut, to))) {
          expect(d.records.length, `cut at ${cut}`).toBe(k + 1);
          expect(d.torn).toBeNull();
          continue;
        }
        expect(d.records.length, `cut at ${cut}`).toBe(k);
        expect(d.torn, `cut at ${cut}`).not.toBeNull();
        expect(d.torn?.line).toBe(text.slice(0, from).split('\n').length);
      }
    }
  });
});

describe('parseSdes: what a newer or a torn file still gives', () => {
  const up = fixture('sdes/upstream.txt');

  it('keeps labelled fields after SLC as extra, counts the headers that have them, uses the known ones', () => {
    const d = parseSdes(up.replace(/^(SDE 1 .*)$/m, '$1 QW 0x5'), { file: 'sdes' });
    expect(d.records).toHaveLength(2);
    expect(d.records[1]?.header).toMatchObject({ engine: 1, cpu: 5, extra: 'QW 0x5' });
    expect(d.records[0]?.header.extra).toBeUndefined();
    expect(d.trailing).toEqual({ line: 7, text: 'QW 0x5', count: 1 });
  });

  it('refuses text after SLC that is not labelled fields', () => {
    expect(parseError(() => parseSdes(up.replace(/^(SDE 0 .*)$/m, '$1 x'), { file: 'sdes' })).line).toBe(1);
  });

  it('keeps the header of a last record cut inside its descriptor lines', () => {
    const d = parseSdes(up.split('\n').slice(0, 3).join('\n'), { file: 'sdes' }); // header, desc[0], AHG; cut
    expect(d.records).toHaveLength(0);
    expect(d.torn?.header).toMatchObject({ engine: 0, swTail: 3 });
  });

  it('has no header for a record cut inside its header line', () => {
    const d = parseSdes(`${up.split('\n').slice(0, 6).join('\n')}\nSDE 1 CPU 5 STE s99_Run`, { file: 'sdes' });
    expect(d.records).toHaveLength(1);
    expect(d.torn).toMatchObject({ engine: null, header: null, line: 7 });
  });

  it('refuses a 17th record: the chip has 16 engines', () => {
    const line = up.split('\n')[6] as string;
    const text = Array.from({ length: 17 }, (_, e) => `${line.replace(/^SDE 1 /, `SDE ${e} `)}\n`).join('');
    const e = parseError(() => parseSdes(text, { file: 'sdes' }));
    expect(e.line).toBe(17);
    expect(e.message).toContain('the chip has 16 SDMA engines');
    expect(parseSdes(`${text.split('\n').slice(0, 16).join('\n')}\n`).records).toHaveLength(16);
  });
});
