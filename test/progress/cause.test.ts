// The cause class of a stall from its ports: a link lost or retraining is the link's; XmitWait rising while the port
// sends next to nothing is the fabric's; an ACTIVE port with flat XmitWait, or one still sending, leaves the host.
import { describe, expect, it } from 'vitest';
import { FABRIC_SEND_RATIO, type PortSpan, stallCause } from '../../src/progress/cause.js';

const active = (over: Partial<PortSpan> = {}): PortSpan => ({
  port: 1,
  state: 'ACTIVE',
  hadLink: true,
  mapsEngine: true,
  xmitWait: 0n,
  xmitData: 0n,
  linkDowned: 0n,
  linkErrorRecovery: 0n,
  ...over,
});

describe('stallCause', () => {
  it('an ACTIVE port with XmitWait flat: the host, the engine itself stopped', () => {
    expect(stallCause([active()])).toMatchObject({ cause: 'host', port: 1, why: expect.stringMatching(/XmitWait flat/) });
  });

  it('XmitWait rising while the port sends nothing: the fabric, naming the port', () => {
    const c = stallCause([active({ port: 2, xmitWait: 50_000n })]);
    expect(c).toMatchObject({ cause: 'fabric', port: 2 });
    expect(c?.why).toMatch(/XmitWait \+50000 flit times while it sent nothing: the far end returns no credits/);
  });

  it('the fabric only while the port sends at most one flit per FABRIC_SEND_RATIO waited; beyond, credits arrive', () => {
    const wait = 10_000n;
    expect(stallCause([active({ xmitWait: wait, xmitData: wait / FABRIC_SEND_RATIO })])?.cause).toBe('fabric');
    // A saturated healthy link waits now and then while it sends: the stalled engine is the host's.
    const busy = stallCause([active({ xmitWait: wait, xmitData: wait / FABRIC_SEND_RATIO + 1n })]);
    expect(busy).toMatchObject({ cause: 'host', why: expect.stringMatching(/credits arrive/) });
  });

  it('a port that lost its link, or whose LinkDowned or LinkErrorRecovery rose, is the link', () => {
    expect(stallCause([active({ state: 'DOWN' })])).toMatchObject({ cause: 'link', why: 'port 1 lost its link (DOWN now)' });
    expect(stallCause([active({ linkDowned: 1n })])?.why).toMatch(/LinkDowned \+1 during the stall/);
    expect(stallCause([active({ linkErrorRecovery: 3n })])?.why).toMatch(/LinkErrorRecovery \+3/);
    // The link wins over a rising XmitWait: a retraining link holds credits too.
    expect(stallCause([active({ xmitWait: 9_999n, linkErrorRecovery: 1n })])?.cause).toBe('link');
  });

  it('a port never up (an unused port of a two-port adapter) is no link loss', () => {
    expect(stallCause([active({ port: 1, state: 'DOWN', hadLink: false }), active({ port: 2 })])).toMatchObject({
      cause: 'host',
      port: 2,
    });
  });

  it('only the ports whose VL map uses the engine count', () => {
    const other = active({ port: 1, xmitWait: 1_000_000n, mapsEngine: false });
    expect(stallCause([other, active({ port: 2 })])).toMatchObject({ cause: 'host', port: 2 });
    expect(stallCause([other])).toBeNull();
  });

  it('unknown counters give no judgement rather than a guess', () => {
    expect(stallCause([active({ xmitWait: null, xmitData: null })])).toBeNull();
    expect(stallCause([])).toBeNull();
    // A fabric judgement needs XmitData too.
    expect(stallCause([active({ xmitWait: 5n, xmitData: null })])?.cause).not.toBe('fabric');
  });
});
