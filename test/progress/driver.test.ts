import { describe, expect, it } from 'vitest';
import { decode } from '../../src/progress/descriptor.js';
import {
  alignSplit,
  DRIVER_NAMES,
  defaultDriverSettings,
  freeCountFor,
  inProcessFor,
  numPadFor,
  progressScheduleFiresFor,
  type SdmaAlign,
  scheduleInFlight,
} from '../../src/progress/driver.js';
import { fitReport, freeCount, inFlight } from '../../src/progress/ring.js';
import { buildTx, isTxFailure, type TxReq, txDescriptors, txRingSlots } from '../../src/progress/txreq.js';
import { fc, test } from '../support/prop.js';
import { fcParams } from '../support/runs.js';

const driver = fc.constantFrom(...DRIVER_NAMES);
const descqCnt = fc.constantFrom(64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768);
// A consistent ring: head anywhere in u32, in flight ≤ descq_cnt − 1.
const ring = descqCnt.chain((cnt) =>
  fc.record({
    cnt: fc.constant(cnt),
    head: fc.integer({ min: 0, max: 0xffff_ffff }),
    flight: fc.integer({ min: 0, max: cnt - 1 }),
  }),
);
const tailOf = (r: { head: number; flight: number }) => (r.head + r.flight) >>> 0;

describe('in-process count per driver build (sdma_descq_inprocess, sdma.h)', () => {
  it('worked example, 2048 ring: in flight 255 fires upstream (in-process 256) and not on cornelis/hfi2 (255)', () => {
    expect(inProcessFor('upstream', 2048, 0, 255)).toBe(256);
    expect(inProcessFor('cornelis', 2048, 0, 255)).toBe(255);
    expect(inProcessFor('hfi2', 2048, 0, 255)).toBe(255);
    expect(progressScheduleFiresFor('upstream', 2048, 0, 255)).toBe(true);
    expect(progressScheduleFiresFor('hfi2', 2048, 0, 255)).toBe(false);
    expect(progressScheduleFiresFor('cornelis', 2048, 0, 255)).toBe(false);
    expect(progressScheduleFiresFor('hfi2', 2048, 0, 256)).toBe(true);
    expect(scheduleInFlight('upstream', 2048)).toBe(255);
    expect(scheduleInFlight('hfi2', 2048)).toBe(256);
  });

  it('counts an empty ring as 1 upstream and 0 on cornelis/hfi2, across the u32 wrap too', () => {
    expect(inProcessFor('upstream', 2048, 0xffff_fff0, 0xffff_fff0)).toBe(1);
    expect(inProcessFor('hfi2', 2048, 0xffff_fff0, 0xffff_fff0)).toBe(0);
    expect(inProcessFor('hfi2', 64, 0xffff_fff0, 0x10)).toBe(32);
    expect(inProcessFor('upstream', 64, 0xffff_fff0, 0x10)).toBe(33);
  });

  test.prop([ring, driver], fcParams(2000, 200_000))(
    'in-process is in flight + 1 upstream and in flight elsewhere; the free count is the same for all',
    (r, d) => {
      const tail = tailOf(r);
      expect(inProcessFor(d, r.cnt, r.head, tail)).toBe(d === 'upstream' ? r.flight + 1 : r.flight);
      expect(freeCountFor(d, r.cnt, r.head, tail)).toBe(freeCount(r.cnt, r.head, tail));
      expect(freeCountFor(d, r.cnt, r.head, tail)).toBe(r.cnt - 1 - r.flight);
    },
  );

  test.prop([ring, driver], fcParams(2000, 200_000))('the schedule fires exactly from scheduleInFlight in flight', (r, d) => {
    const fires = progressScheduleFiresFor(d, r.cnt, r.head, tailOf(r));
    expect(fires).toBe(r.flight >= scheduleInFlight(d, r.cnt));
  });

  test.prop([ring, driver], fcParams(1000, 100_000))('fitReport carries the driver and its in-process count', (r, d) => {
    const f = fitReport(r.cnt, r.head, tailOf(r), 1, d);
    expect(f.driver).toBe(d);
    expect(f.inProcess).toBe(inProcessFor(d, r.cnt, r.head, tailOf(r)));
    expect(f.inFlight).toBe(inFlight(r.head, tailOf(r)));
  });
});

describe('pad descriptors (sdma_desc_pad_count, sdma.h; room checks use num_desc + num_pad)', () => {
  it('rounds num_desc up to a multiple of pad_sdma_desc on cornelis/hfi2, never upstream', () => {
    expect(numPadFor('hfi2', 3, 32)).toBe(29);
    expect(numPadFor('cornelis', 32, 32)).toBe(0);
    expect(numPadFor('hfi2', 33, 32)).toBe(31);
    expect(numPadFor('hfi2', 5, 4)).toBe(3);
    expect(numPadFor('hfi2', 5, 0)).toBe(0);
    expect(numPadFor('upstream', 3, 32)).toBe(0);
    expect(() => numPadFor('hfi2', 3, 5)).toThrow(RangeError);
  });

  it('counts the pad on the txreq path: free 7 holds 3 + 1 (pad 4) but not 3 + 5 (pad 8)', () => {
    const ok = fitReport(2048, 10000, 12040, 3, 'hfi2', 4);
    expect(ok).toMatchObject({ free: 7, padSdmaDesc: 4, numPad: 1, path: 'txreq', fits: true, headroom: 3 });
    const short = fitReport(2048, 10000, 12040, 3, 'hfi2', 8);
    expect(short).toMatchObject({ numPad: 5, fits: false, headroom: -1, canEverFit: true });
    expect(fitReport(64, 0, 0, 33, 'hfi2', 32).canEverFit).toBe(false);
    expect(fitReport(2048, 10000, 12040, 3, 'upstream', 8)).toMatchObject({ padSdmaDesc: 0, numPad: 0, headroom: 4 });
  });

  it('admits num_desc against the free count rounded down to the pad on the txlist path', () => {
    // free 7: round_down(7, 4) = 4 takes 3; round_down(7, 8) = 0 takes nothing, though the txreq path is short by 1.
    expect(fitReport(2048, 10000, 12040, 3, 'hfi2', 4, 'txlist')).toMatchObject({ fits: true, headroom: 1 });
    expect(fitReport(2048, 10000, 12040, 3, 'hfi2', 8, 'txlist')).toMatchObject({ fits: false, headroom: -3 });
    expect(fitReport(64, 0, 0, 33, 'cornelis', 32, 'txlist').canEverFit).toBe(false); // 33 > round_down(63, 32)
    expect(fitReport(64, 0, 0, 32, 'cornelis', 32, 'txlist').canEverFit).toBe(true);
  });

  it('defaults pad/align/threshold to 32/2/32 only on a JKR chip in an AMD host under cornelis/hfi2', () => {
    expect(defaultDriverSettings('hfi2', 'jkr', true)).toEqual({ sdmaThreshold: 32, padSdmaDesc: 32, sdmaAlign: 2 });
    expect(defaultDriverSettings('cornelis', 'jkr', true)).toEqual({ sdmaThreshold: 32, padSdmaDesc: 32, sdmaAlign: 2 });
    const none = { sdmaThreshold: 0, padSdmaDesc: 0, sdmaAlign: 0 };
    expect(defaultDriverSettings('hfi2', 'jkr', false)).toEqual(none);
    expect(defaultDriverSettings('hfi2', 'wfr', true)).toEqual(none);
    expect(defaultDriverSettings('upstream', 'jkr', true)).toEqual(none);
  });
});

describe('256-byte alignment splitting (make_tx_sdma_desc, sdma.h)', () => {
  it('splits 1000 bytes at 0x1010 per mode', () => {
    expect(alignSplit(0x1010, 1000, 0)).toEqual([1000]);
    expect(alignSplit(0x1010, 1000, 1)).toEqual([240, 256, 256, 248]);
    expect(alignSplit(0x1010, 1000, 2)).toEqual([240, 512, 248]);
    expect(alignSplit(0x1010, 1000, 3)).toEqual([752, 248]);
  });

  it('leaves a fragment whole when there is nothing to split', () => {
    expect(alignSplit(0x1010, 16, 3)).toEqual([16]); // inside one 256-byte block
    expect(alignSplit(0x1010, 0xf0, 3)).toEqual([240]); // ends on a boundary
    expect(alignSplit(0x1000, 512, 2)).toEqual([512]);
    expect(alignSplit(0x1000, 512, 1)).toEqual([256, 256]);
  });

  const mode = fc.constantFrom<SdmaAlign>(0, 1, 2, 3);
  test.prop([fc.integer({ min: 0, max: 2 ** 40 }), fc.integer({ min: 1, max: 16383 }), mode], fcParams(500, 200_000))(
    'pieces are positive, sum to the fragment, and every piece after the first starts 256-aligned (modes 1, 2)',
    (addr, len, m) => {
      const pieces = alignSplit(addr, len, m);
      expect(pieces.reduce((a, b) => a + b, 0)).toBe(len);
      expect(pieces.every((p) => p > 0)).toBe(true);
      let a = addr;
      pieces.forEach((p, i) => {
        if (i > 0 && m !== 3 && m !== 0) expect(a % 256).toBe(0);
        if (m === 1) expect(Math.floor(a / 256)).toBe(Math.floor((a + p - 1) / 256)); // no piece crosses a boundary
        a += p;
      });
      if (m === 3 && pieces.length === 2) expect((addr + (pieces[0] as number)) % 256).toBe(0);
      expect(pieces.length).toBeLessThanOrEqual(m === 0 ? 1 : m === 3 ? 2 : m === 2 ? 3 : Math.ceil(len / 256) + 1);
    },
  );
});

describe('a txreq per driver build (struct sdma_txreq: num_desc, num_pad)', () => {
  const spec = (options: object, len = 1000, addr = 0x1010) =>
    buildTx({ tlen: len, fragments: [{ kind: 'page', len, addr }], options });

  it('upstream ignores alignment and pad settings: one descriptor, no pad', () => {
    const tx = spec({ sdmaAlign: 1, padSdmaDesc: 8 }) as TxReq;
    expect(isTxFailure(tx)).toBe(false);
    expect(tx).toMatchObject({ numDesc: 1, numPad: 0 });
  });

  it('hfi2 with sdma_align 1 and pad 8: four descriptors (240, 256, 256, 248) and four pads', () => {
    const tx = spec({ driver: 'hfi2', sdmaAlign: 1, padSdmaDesc: 8 }) as TxReq;
    expect(tx).toMatchObject({ numDesc: 4, numPad: 4, closed: true });
    expect(txRingSlots(tx)).toBe(8);
    const d = txDescriptors(tx).map((q) => decode(q.qw0, q.qw1));
    expect(d.map((x) => x.len)).toEqual([240, 256, 256, 248]);
    expect(d.map((x) => x.addr)).toEqual([0x1010, 0x1100, 0x1200, 0x1300]);
    expect(d.map((x) => x.first)).toEqual([true, false, false, false]);
    expect(d.map((x) => x.last)).toEqual([false, false, false, true]);
  });

  it('cornelis with sdma_align 2: head, aligned middle, tail; no pad when pad_sdma_desc is 0', () => {
    const tx = spec({ driver: 'cornelis', sdmaAlign: 2 }) as TxReq;
    expect(tx).toMatchObject({ numDesc: 3, numPad: 0 });
  });

  it('grows past the six embedded descriptors when a page splits into 17', () => {
    const tx = spec({ driver: 'hfi2', sdmaAlign: 1 }, 4096) as TxReq;
    expect(tx.numDesc).toBe(17);
    expect(txDescriptors(tx).reduce((a, q) => a + decode(q.qw0, q.qw1).len, 0)).toBe(4096);
  });

  it('refuses with ENOMEM a split that would pass the descriptor limit', () => {
    const r = spec({ driver: 'hfi2', sdmaAlign: 1 }, 16380, 0x10);
    expect(isTxFailure(r) && r.error).toBe('ENOMEM');
  });

  it('keeps the upstream default unchanged: numPad 0 on a plain txreq', () => {
    const tx = buildTx({ tlen: 61, fragments: [{ kind: 'page', len: 61 }] }) as TxReq;
    expect(tx).toMatchObject({ numDesc: 2, numPad: 0, padded: true });
  });
});
