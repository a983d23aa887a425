// Randomized hostile port-side sources: in a good emulated tree (a two-port CN5000 under the Cornelis hfi1 with the
// bulk service on, an IPoIB queue the watchdog timed out, the txq trace events enabled), one of the files the port
// counters, the settings and the IPoIB reader use is mutated (mutate.ts) or replaced by an oddity. Opening the unit,
// its port counters, its waiters and the engines, doctor and waiters commands answer or fail with one of our errors;
// never a JS error; every warning names the file's tree; the text they print holds no control character a terminal
// would act on. And the parsers alone on random text never throw. A fixed-seed share in npm test; more under soak.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { closeSysroot, writeSysroot } from '../../src/emu/sysroot.js';
import { EmuUnit } from '../../src/emu/unit.js';
import { isHfi1SdmaError } from '../../src/errors.js';
import { openHwBackend } from '../../src/hw/index.js';
import { kmsgRecord, uptimeMs } from '../../src/hw/kmsg-tail.js';
import { parseBulkServiceEngines } from '../../src/hw/parse/hw-resources.js';
import { emptyPortCounters, fromPmaCounters } from '../../src/hw/parse/port-counters.js';
import { paramBool } from '../../src/hw/settings.js';
import { parseWatchdogLine } from '../../src/kmsg/ipoib.js';
import { parseKernelLog } from '../../src/kmsg/parse.js';
import { parseTxTraceLine } from '../../src/kmsg/trace-tx.js';
import { runCli } from '../support/cli.js';
import { fcParams } from '../support/runs.js';
import { applyMutation, expectOnlyOurErrors, type Mutation, mutation } from './mutate.js';
import { replaceWith, tempRoots } from './sources-tree.js';

const fresh = tempRoots();
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

const DEBUG = 'sys/kernel/debug/hfi1/hfi1_0';
const CLS = 'sys/class/infiniband/hfi1_0';
const PARAMS = 'sys/module/hfi1/parameters';
const NET = 'sys/class/net/ib0';
const TRACING = 'sys/kernel/tracing';
const FILES = [
  `${DEBUG}/portcounter_names`,
  `${DEBUG}/port1counters`,
  `${DEBUG}/port2counters`,
  `${CLS}/ports/1/hw_counters/TxWait`,
  `${CLS}/ports/1/counters/link_error_recovery`,
  `${CLS}/ports/2/counters/link_downed`,
  `${CLS}/ports/1/counters/port_xmit_data`,
  `${CLS}/hw_resources`,
  `${PARAMS}/use_bulksvc`,
  `${PARAMS}/bulksvc_num_sdma`,
  `${PARAMS}/cap_mask`,
  `${PARAMS}/num_vls`,
  'dev/kmsg',
  'proc/uptime',
  `${NET}/type`,
  `${NET}/queues/tx-1/tx_timeout`,
  `${TRACING}/trace`,
  `${TRACING}/events/hfi1_tx/hfi1_txq_stop/enable`,
] as const;

// One emulated host, rendered afresh into each case's tree.
const HOST = new EmuUnit({
  seed: 5,
  chip: 'jkr',
  driver: 'cornelis',
  ports: 2,
  engines: 3,
  descqCnt: 64,
  workload: 'mixed:ipoib=1,sl=1,gbps=2', // SL 1: VL 1's engine 1
  faults: ['ipoib-timeout@100:1'],
  params: ['use_bulksvc=Y', 'bulksvc_num_sdma=1', 'num_vls=2'],
});
HOST.runUntilMs(1300);

async function goodHost(root: string): Promise<void> {
  await writeSysroot(HOST, root);
  closeSysroot(HOST, root);
  mkdirSync(join(root, TRACING, 'events/hfi1_tx/hfi1_txq_stop'), { recursive: true });
  writeFileSync(join(root, TRACING, 'events/hfi1_tx/hfi1_txq_stop/enable'), '1\n');
  writeFileSync(
    join(root, TRACING, 'trace'),
    '# tracer: nop\n  kworker/1:1-77 [001] .... 1.000100: hfi1_txq_stop: [0000:05:00.0] txq ffff9a01 idx 1 sde ffff9b02:1 cpu 1 head 5 tail 9 flow 0 used 4 stops 2 no_desc 1 stopped 1\n',
  );
}

describe('a mutated port-side source: an answer or one of our errors, printed without control characters', () => {
  it('over random files and mutations', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...FILES), mutation, async (file, m: Mutation) => {
        const root = fresh();
        try {
          await goodHost(root);
          applyMutation(join(root, file), m);
          const b = await openHwBackend({ sysroot: root });
          try {
            for (const info of await b.units()) {
              for (const line of info.settings?.evidence ?? []) expect(typeof line).toBe('string');
              const u = await b.unit(info.unit);
              await expectOnlyOurErrors(root, async () => u.portCounters?.());
              await expectOnlyOurErrors(root, async () => u.waiters?.());
              for (const w of u.warnings?.() ?? []) expect(w.message).toContain(root);
            }
          } finally {
            await b.close();
          }
          for (const args of [['engines'], ['waiters'], ['doctor']]) {
            const r = await runCli(['--sysroot', root, ...args]);
            expect([0, 1, 2, 65, 66, 69, 74, 77], `${args}: ${r.code} ${r.stderr}`).toContain(r.code);
            expect(CONTROLS.test(r.stdout.replaceAll('\t', ' ')), `${args} stdout`).toBe(false);
            expect(CONTROLS.test(r.stderr.replaceAll('\t', ' ')), `${args} stderr`).toBe(false);
          }
        } finally {
          rmSync(root, { recursive: true, force: true }); // many trees under soak
        }
      }),
      fcParams(6, 400),
    );
  });

  it('the netdev device link replaced by an oddity: the IPoIB kind answers', async () => {
    for (const oddity of ['dangling', 'loop', 'dir', 'empty'] as const) {
      const root = fresh();
      await goodHost(root);
      replaceWith(join(root, NET, 'device'), oddity);
      const b = await openHwBackend({ sysroot: root });
      try {
        const s = await (await b.unit(0)).waiters?.();
        expect(s?.visibility.find((v) => v.kind === 'ipoib')).toBeDefined();
      } finally {
        await b.close();
        rmSync(root, { recursive: true, force: true });
      }
    }
  });
});

describe('the port-side parsers on random text never throw anything but our errors', () => {
  const text = fc.oneof(
    fc.string({ maxLength: 300 }),
    fc.constantFrom(
      'timeout txq 00000000aabbccdd q 2 stopped 1 stops 4 no_desc 1 ring_full 0',
      'NETDEV WATCHDOG: ib0 (hfi1): transmit queue 3 timed out 99999999999999999999 ms',
      'hfi1 0000:05:00.0 ib0: NETDEV WATCHDOG: CPU: 3: transmit queue 2 timed out 5120 ms',
      '6,1234,5000000,-;hfi1 0000:05:00.0: hfi1_0: sde (____ptrval____) engine 5',
      '  x-1 [001] .... 1.0: hfi1_txq_stop: [0000:05:00.0] txq 1 idx 1 sde 2:1 cpu 1 head 5 tail 9 flow 0 used 4 stops 2 no_desc 1 stopped 1',
      'bulksvc.sde 12-15',
      '255\n',
    ),
  );
  const mangled = fc
    .tuple(text, fc.nat(), fc.string({ maxLength: 8 }))
    .map(([t, at, s]) => t.slice(0, at % (t.length + 1)) + s + t.slice(at % (t.length + 1)));

  it('line parsers, the kmsg record and uptime, the settings and PortCounters parsers', () => {
    fc.assert(
      fc.property(mangled, (t) => {
        parseWatchdogLine(t);
        parseTxTraceLine(t);
        kmsgRecord(t);
        uptimeMs(t);
        paramBool(t);
        for (const f of [
          () => parseBulkServiceEngines(t, '/x/hw_resources'),
          () => fromPmaCounters(emptyPortCounters(1), new Map([['link_downed', t]]), '/x/counters'),
        ]) {
          try {
            f();
          } catch (e) {
            expect(isHfi1SdmaError(e), String(e)).toBe(true);
          }
        }
        const log = parseKernelLog(`[    1.000000] hfi1 0000:05:00.0: hfi1_0: ${t}\n[    2.000000] ${t}\n`);
        expect(log.events.length).toBeLessThanOrEqual(4);
      }),
      fcParams(300, 20_000),
    );
  });
});
