// log on IPoIB and link lines: the driver's timeout block (hfi1 and hfi2 wordings, pointers hashed or not), the netdev
// watchdog's line in its three kernel wordings, the txq trace events with and without the engine, and the link lines
// under the unit's prefix or a port's (`hfi2_0.1:` is port 2), counted per port in the summary and in JSON.
import { describe, expect, it } from 'vitest';
import { painter } from '../../src/cli/io.js';
import { renderLog } from '../../src/cli/log.js';
import { linkEventsByPort, parseWatchdogLine } from '../../src/kmsg/ipoib.js';
import { type LogEvent, parseKernelLog } from '../../src/kmsg/parse.js';
import { parseTxTraceLine } from '../../src/kmsg/trace-tx.js';
import { fixture } from '../hw/fixtures.js';

const LOG = parseKernelLog(fixture('kmsg/ipoib-link.dmesg'));
const of = (kind: LogEvent['kind']) => LOG.events.filter((e) => e.kind === kind);

describe('the timeout block', () => {
  it('is one event with every line of the block, filed under its unit, with the engine it names', () => {
    const [hfi1, hfi2] = of('ipoib-timeout');
    expect(hfi1).toMatchObject({
      unit: 'hfi1_0',
      line: 4,
      txq: 2,
      engine: 5,
      stopped: true,
      stops: 4,
      noDesc: 1,
      ringFull: 0,
      flow: '0x3',
      sent: 100,
      completed: 90,
      used: 10,
      txQueueLen: 256,
      maxItems: 256,
      head: 12,
      tail: 22,
      waitQueued: true,
      txListEmpty: false,
    });
    // hfi2's, with the pointers printed hashed-out, and cut short after its engine.
    expect(hfi2).toMatchObject({ unit: 'hfi2_0', txq: 0, engine: 9, ringFull: 1 });
    expect(hfi2?.sent).toBeUndefined();
  });

  it('reads as a line an operator can act on', () => {
    const text = renderLog(LOG, painter(false));
    expect(text).toContain(
      'line 4 [100.000101]: hfi1_0 sdma5: IPoIB queue txq 2 timed out: stopped 1, stops 4, no_desc 1 (it waits for SDMA descriptors), ring_full 0; sent 100 completed 90 used 10, wait queued 1, tx_list not empty',
    );
  });
});

describe('the NETDEV WATCHDOG line', () => {
  it('in its three wordings: netdev_crit with the PCI address (v6.8 on), WARN with and without the time out', () => {
    expect(parseWatchdogLine('hfi1 0000:05:00.0 ib0: NETDEV WATCHDOG: CPU: 3: transmit queue 2 timed out 5120 ms')).toEqual({
      netdev: 'ib0',
      driver: 'hfi1',
      pci: '0000:05:00.0',
      cpu: 3,
      txq: 2,
      timedOutMs: 5120,
    });
    expect(parseWatchdogLine('NETDEV WATCHDOG: ib1 (hfi2): transmit queue 0 timed out 1000 ms')).toMatchObject({
      netdev: 'ib1',
      driver: 'hfi2',
      pci: null,
      timedOutMs: 1000,
    });
    expect(parseWatchdogLine('NETDEV WATCHDOG: ib0 (hfi1): transmit queue 3 timed out')).toMatchObject({
      txq: 3,
      timedOutMs: null,
    });
    // Another driver's netdev is not ours.
    expect(parseWatchdogLine('NETDEV WATCHDOG: eth0 (e1000e): transmit queue 0 timed out 5000 ms')).toBeNull();
  });

  it('is filed under the unit its PCI address names; without one, under the driver', () => {
    expect(of('netdev-watchdog').map((e) => [e.line, e.unit, e.txq])).toEqual([
      [3, 'hfi1_0', 2],
      [12, 'hfi2', 0],
      [15, 'hfi1', 3],
    ]);
  });
});

describe('txq trace events', () => {
  const newer =
    '  kworker/1:1-77 [001] .... 12.000100: hfi1_txq_stop: [0000:05:00.0] txq ffff9a01 idx 0 sde ffff9b02:4 cpu 1 head 5 tail 9 flow 0 used 4 stops 2 no_desc 1 stopped 1';
  const older =
    '  kworker/1:1-77 [001] .... 12.000200: hfi2_txq_wake: [0000:81:00.0] txq ffff9a01 idx 3 sde ffff9b02 head 5 tail 9 flow 0 used 0 stops 2 no_desc 1 stopped 0';

  it('give queue, engine (where printed), used, stops, no_desc and stopped', () => {
    expect(parseTxTraceLine(newer)).toMatchObject({
      kind: 'txq',
      module: 'hfi1',
      event: 'txq_stop',
      txq: 0,
      engine: 4,
      used: 4,
      stopped: true,
    });
    expect(parseTxTraceLine(older)).toMatchObject({
      kind: 'txq',
      module: 'hfi2',
      event: 'txq_wake',
      txq: 3,
      engine: null,
      stopped: false,
    });
    expect(parseTxTraceLine(newer.replace('stopped 1', 'stopped x'))).toBeNull();
  });
});

describe('link lines', () => {
  it("take the port from the line's prefix and count per port", () => {
    expect(of('link-down').map((e) => [e.unit, e.port])).toEqual([
      ['hfi2_0', 2],
      ['hfi1_0', 1],
    ]);
    expect(linkEventsByPort(LOG.events)).toEqual([
      expect.objectContaining({ unit: 'hfi2_0', port: 2, down: 1, up: 1, trainingFailures: 1 }),
      expect.objectContaining({ unit: 'hfi1_0', port: 1, down: 1, up: 1, trainingFailures: 1 }),
    ]);
    const text = renderLog(LOG, painter(false));
    expect(text).toContain('hfi2_0 port 2: 1 link down, 1 link up, 1 link training failure');
    expect(text).toContain('line 20 [401.000000]: hfi2_0: port 2: link training failed: Failed LNI(Polling)');
    expect(text).toContain('line 19 [400.000003]: hfi2_0: port 2: physical state now PHYS_POLL');
  });
});
