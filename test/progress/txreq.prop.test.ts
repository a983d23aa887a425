import { describe, expect, it } from 'vitest';
import { SDMA_TXREQ_F_AHG_COPY, SDMA_TXREQ_F_URGENT, SDMA_TXREQ_F_USE_AHG } from '../../src/progress/constants.js';
import { decode } from '../../src/progress/descriptor.js';
import { buildTx, isTxFailure, type TxAddKind, type TxReq, txAdd, txDescriptors, txInit } from '../../src/progress/txreq.js';
import { fc, test } from '../support/prop.js';
import { fcParams } from '../support/runs.js';

function ok(tx: ReturnType<typeof buildTx>): TxReq {
  if (isTxFailure(tx)) throw new Error(`${tx.error}: ${tx.message}`);
  return tx;
}

describe('txreq init (sdma_txinit_ahg, sdma.h)', () => {
  it('refuses tlen 0 with ENODATA and above 16383 with EMSGSIZE', () => {
    expect(txInit(0, 0)).toMatchObject({ error: 'ENODATA' });
    expect(txInit(0, 16384)).toMatchObject({ error: 'EMSGSIZE' });
    expect(isTxFailure(txInit(0, 16383))).toBe(false);
  });

  it('uses 1, 2 or 3 AHG descriptors for 1, 2–5 and 6–9 update words', () => {
    const n = (k: number) => {
      const tx = txInit(SDMA_TXREQ_F_USE_AHG, 8, { kind: 'update', entry: 3, updates: Array(k).fill(0x8000_0000), hlen: 8 });
      if (isTxFailure(tx)) throw new Error(tx.message);
      return tx.numDesc;
    };
    expect([n(1), n(2), n(5), n(6), n(9)]).toEqual([1, 2, 2, 3, 3]);
    expect(txInit(SDMA_TXREQ_F_USE_AHG, 8, { kind: 'update', entry: 3, updates: Array(10).fill(0), hlen: 8 })).toMatchObject({
      error: 'EINVAL',
    });
    expect(txInit(SDMA_TXREQ_F_USE_AHG, 8, { kind: 'update', entry: 3, updates: [1], hlen: 4 })).toMatchObject({
      error: 'EINVAL',
    });
  });

  it('puts AHG index and mode in descriptor 0 (copy mode keeps it a data descriptor)', () => {
    const tx = ok(
      buildTx({
        flags: SDMA_TXREQ_F_AHG_COPY,
        tlen: 64,
        ahg: { kind: 'copy', entry: 7 },
        fragments: [{ kind: 'page', len: 64 }],
      }),
    );
    const [d0] = txDescriptors(tx);
    if (!d0) throw new Error('no descriptor');
    const d = decode(d0.qw0, d0.qw1);
    expect(tx.numDesc).toBe(1);
    expect(d).toMatchObject({ first: true, last: true, len: 64, ahgIdx: 7, ahgMode: 1 });
  });
});

describe('descriptor counting (sdma_txadd_page/kvaddr/daddr, sdma.h)', () => {
  it('closes with LAST and HEAD_TO_HOST by default, INT_REQ|HEAD_TO_HOST when URGENT, INT_REQ without idle timeout', () => {
    const last = (flags: number, idleTimeout: boolean) => {
      const tx = ok(buildTx({ flags, tlen: 8, fragments: [{ kind: 'page', len: 8 }], options: { idleTimeout } }));
      const ds = txDescriptors(tx);
      const l = ds[ds.length - 1];
      if (!l) throw new Error('no descriptor');
      return decode(l.qw0, l.qw1);
    };
    expect(last(0, true)).toMatchObject({ last: true, headToHost: true, intReq: false });
    expect(last(SDMA_TXREQ_F_URGENT, true)).toMatchObject({ headToHost: true, intReq: true });
    expect(last(0, false)).toMatchObject({ headToHost: false, intReq: true });
  });

  it('adds a 1–3 byte pad descriptor when the length is not a multiple of 4', () => {
    const tx = ok(buildTx({ tlen: 13, fragments: [{ kind: 'page', len: 13 }] }));
    expect(tx.numDesc).toBe(2);
    const ds = txDescriptors(tx).map((d) => decode(d.qw0, d.qw1));
    expect(ds.map((d) => [d.len, d.first, d.last])).toEqual([
      [13, true, false],
      [3, false, true],
    ]);
  });

  it('6 data descriptors + pad = 7 descriptors, the array extended rather than overflowed (2024 rule)', () => {
    const tx = ok(
      buildTx({ tlen: 6 * 10 + 1, fragments: [...Array(5).fill({ kind: 'page', len: 10 }), { kind: 'page', len: 11 }] }),
    );
    expect(tx.numDesc).toBe(7);
    expect(tx.padded).toBe(true);
    expect(tx.descLimit).toBe(63);
    expect(tx.words.length).toBe(64 * 4);
    const ds = txDescriptors(tx).map((d) => decode(d.qw0, d.qw1));
    expect(ds[6]).toMatchObject({ len: 3, last: true });
    expect(ds.filter((d) => d.last)).toHaveLength(1);
  });

  it('coalesces everything past 63 descriptors into one: 64 at most', () => {
    const frags = Array.from({ length: 70 }, () => ({ kind: 'page' as TxAddKind, len: 10 }));
    const tx = ok(buildTx({ tlen: 701, fragments: [...frags, { kind: 'page', len: 1 }] }));
    expect(tx.numDesc).toBe(64);
    const ds = txDescriptors(tx).map((d) => decode(d.qw0, d.qw1));
    // 63 data descriptors of 10 bytes, then the coalesced rest: 7×10 + 1 = 71, plus the packet pad 3 (701 → 704).
    expect(ds[63]).toMatchObject({ len: 74, last: true });
    expect(tx.packetLen).toBe(704);
  });

  it('63 data descriptors then the pad takes the 64th slot', () => {
    const tx = ok(
      buildTx({ tlen: 63 * 4 + 1, fragments: [...Array(62).fill({ kind: 'page', len: 4 }), { kind: 'page', len: 5 }] }),
    );
    expect(tx.numDesc).toBe(64);
    expect(tx.descLimit).toBe(64);
  });

  it('refuses to coalesce a pre-mapped (daddr) fragment with EINVAL', () => {
    const frags = Array.from({ length: 64 }, (_, i) => ({ kind: (i === 63 ? 'daddr' : 'page') as TxAddKind, len: 4 }));
    expect(buildTx({ tlen: 256, fragments: frags })).toMatchObject({ error: 'EINVAL' });
  });

  it('refuses a fragment longer than the bytes left, and adds to a closed tx', () => {
    const tx = txInit(0, 8);
    if (isTxFailure(tx)) throw new Error(tx.message);
    expect(txAdd(tx, 'page', 0, 9)).toMatchObject({ error: 'EINVAL' });
    expect(txAdd(tx, 'page', 0, 8)).toBeNull();
    expect(txAdd(tx, 'page', 0, 1)).toMatchObject({ error: 'EINVAL' });
  });
});

// A plain count: AHG descriptors + one per fragment + a pad, or 64 once more than 63 would be needed.
function referenceCount(ahgDescs: number, frags: { kind: TxAddKind }[], tlen: number): number | 'EINVAL' {
  const k = ahgDescs + frags.length;
  if (k <= 63) return k + (tlen % 4 !== 0 ? 1 : 0);
  if (frags.slice(63 - ahgDescs).some((f) => f.kind === 'daddr')) return 'EINVAL';
  return 64;
}

describe('descriptor counts match a plain count and never exceed 64', () => {
  const frag = fc.record({ kind: fc.constantFrom<TxAddKind>('page', 'single', 'daddr'), len: fc.integer({ min: 1, max: 200 }) });
  test.prop([fc.array(frag, { minLength: 1, maxLength: 80 }), fc.integer({ min: 0, max: 9 })], fcParams(1000, 100_000))(
    'random packets',
    (frags, nAhg) => {
      const tlen = frags.reduce((a, f) => a + f.len, 0);
      const ahg = nAhg > 0 ? { kind: 'update' as const, entry: 1, updates: Array(nAhg).fill(0x8000_0000), hlen: 16 } : undefined;
      const ahgDescs = nAhg === 0 ? 0 : nAhg === 1 ? 1 : nAhg <= 5 ? 2 : 3;
      const tx = buildTx({ flags: ahg ? SDMA_TXREQ_F_USE_AHG : 0, tlen, ahg, fragments: frags });
      const want = referenceCount(ahgDescs, frags, tlen);
      if (want === 'EINVAL') {
        expect(tx).toMatchObject({ error: 'EINVAL' });
        return;
      }
      const t = ok(tx);
      expect(t.numDesc).toBe(want);
      expect(t.numDesc).toBeLessThanOrEqual(64);
      const ds = txDescriptors(t).map((d) => decode(d.qw0, d.qw1));
      expect(ds[0]?.first).toBe(true);
      expect(ds.filter((d) => d.last)).toHaveLength(1);
      expect(ds[ds.length - 1]?.last).toBe(true);
      // Data bytes (descriptors after the AHG ones) cover the packet, pad included.
      const bytes = ds.slice(ahgDescs).reduce((a, d) => a + d.len, 0);
      expect(bytes).toBe(t.packetLen % 4 === 0 ? t.packetLen : t.packetLen + (4 - (t.packetLen % 4)));
    },
  );
});
