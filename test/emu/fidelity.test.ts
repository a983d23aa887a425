// The emulator against sdma.c: sdma_gethead uses the head as read unless SDMA_HEAD_CHECK is on, the idle re-read of
// HEAD is not clamped, and the software clean-up runs e40_SwCleaned inside its own head_lock section.
import { describe, expect, it } from 'vitest';
import { LogKind } from '../../src/emu/log.js';
import { engineInterrupt } from '../../src/emu/retire.js';
import { EVENT_NAMES } from '../../src/progress/state.js';
import { INT_IDLE, INT_PROGRESS, quietUnit, Recorder, txOf } from './support.js';

const USE_SDMA_HEAD = 1 << 6;
const SDMA_HEAD_CHECK = 1 << 17;

/** Engine 0 with 3 txreqs of 4 descriptors in the ring (slots 0-11), the chip paused at HEAD 4. */
function ringOf3(capMask: number) {
  const u = quietUnit({ capMask: 0x2 | capMask });
  const e = u.engineAt(0);
  const rec = new Recorder();
  for (let i = 0; i < 3; i++) expect(u.submit(0, rec.tx(txOf(4)))).toBe(0);
  e.chip.hwHead = 4;
  e.chip.headDma = 4;
  return { u, e, rec };
}

describe('sdma_gethead and the idle re-read', () => {
  it('without SDMA_HEAD_CHECK (the default) a head_dma beyond the tail is used as read', () => {
    const { u, e } = ringOf3(USE_SDMA_HEAD);
    e.chip.headDma = 20; // past descq_tail (12): a bad write-back
    engineInterrupt(e, INT_PROGRESS);
    expect(e.descqHead).toBe(20);
    expect(u.host.kernelLog).toEqual([]);
  });

  it('with SDMA_HEAD_CHECK it is logged, re-read from the CSR, and the CSR head used', () => {
    const { u, e } = ringOf3(USE_SDMA_HEAD | SDMA_HEAD_CHECK);
    e.chip.headDma = 20;
    engineInterrupt(e, INT_PROGRESS);
    expect(e.descqHead).toBe(4);
    expect(u.host.kernelLog.map((l) => l.replace(/^.*: /, ''))).toEqual([
      'SDMA(0) bad head (dma) hwhd=20 swhd=0 swtl=12 cnt=2048',
    ]);
  });

  it('with SDMA_HEAD_CHECK and a bad CSR too: logged twice, no progress', () => {
    const { u, e } = ringOf3(USE_SDMA_HEAD | SDMA_HEAD_CHECK);
    e.chip.headDma = 20;
    e.chip.hwHead = 30;
    engineInterrupt(e, INT_PROGRESS);
    expect(e.descqHead).toBe(0);
    expect(u.host.kernelLog).toHaveLength(2);
  });

  it('the idle re-read takes the HEAD CSR as read, even outside the window', () => {
    const { e } = ringOf3(USE_SDMA_HEAD);
    e.chip.headDma = 4; // in the window: the first read
    e.chip.hwHead = 16; // the CSR, past the tail
    engineInterrupt(e, INT_IDLE);
    expect(e.descqHead).toBe(16);
  });
});

describe('software clean-up', () => {
  it('runs e40_SwCleaned in the same head_lock write section: the sequence moves by 2 across both', () => {
    const u = quietUnit();
    const e = u.engineAt(1);
    const seqAt: { kind: number; a: number; seq: number }[] = [];
    const write = u.host.log.write.bind(u.host.log);
    u.host.log.write = (t, kind, engine, a, b, c) => {
      if (engine === 1) seqAt.push({ kind, a, seq: e.headSeq });
      write(t, kind, engine, a, b, c);
    };
    u.injectFault('engine-error:1@3:1');
    u.runUntilMs(5);
    expect(e.running()).toBe(true);
    const clean = seqAt.findIndex((r) => r.kind === LogKind.swCleanUp);
    expect(clean).toBeGreaterThanOrEqual(0);
    const e40 = seqAt.find((r, i) => i > clean && r.kind === LogKind.event && r.a === EVENT_NAMES.indexOf('e40_SwCleaned'));
    const at = seqAt[clean]?.seq ?? -1;
    expect(at % 2).toBe(1); // inside a write section
    expect(e40?.seq).toBe(at); // the same one
  });
});
