// The emulated host's files against the formats and rules of the kernel that prints them, on each flavour (WFR with
// upstream hfi1, a CN5000 with the Cornelis hfi1, a two-port CN5000 with hfi2) and under the faults that change them.
// Expectations are written from the kernel's format strings and rules, not from the emulator's renderers.
import { closeSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kmsgText } from '../../src/emu/kmsg.js';
import { closeSysroot, writeSysroot } from '../../src/emu/sysroot.js';
import { EmuUnit, type EmuUnitOptions } from '../../src/emu/unit.js';
import { tempDirs } from '../support/temp.js';

const tempDir = tempDirs('hfi1-kernel-files-');

const FLAVOURS = [
  { name: 'WFR upstream', opts: { chip: 'wfr', driver: 'upstream' } },
  { name: 'JKR Cornelis', opts: { chip: 'jkr', driver: 'cornelis' } },
  { name: 'JKR hfi2 two-port', opts: { chip: 'jkr', driver: 'hfi2', ports: 2 } },
] as const satisfies readonly { name: string; opts: EmuUnitOptions }[];

/** Render a unit at `atMs` and return a reader of its tree's files (relative paths). */
async function rendered(opts: EmuUnitOptions, atMs: number) {
  const u = new EmuUnit({ seed: 7, ...opts });
  u.runUntilMs(atMs);
  const dir = tempDir();
  await writeSysroot(u, dir);
  closeSysroot(u, dir);
  const cls = join('sys/class/infiniband', u.info.name);
  const dbg = join('sys/kernel/debug', u.flavour.module, u.info.name);
  return {
    u,
    dir,
    cls,
    dbg,
    read: (rel: string) => readFileSync(join(dir, rel), 'utf8'),
    list: (rel: string) => readdirSync(join(dir, rel)),
  };
}

/** One /dev/kmsg record as devkmsg_read returns it: `pri,seq,usec,flags;text` and its ` KEY=value` lines. */
interface KmsgRecord {
  pri: number;
  seq: number;
  usec: number;
  text: string;
  dict: string[];
}

/** Split a /dev/kmsg file into records; every line must be a record or a dictionary line after one. */
/** The 64-bit register at `offset` of a BAR image (the image is 64 or 128 MiB: only its 8 bytes are read). */
function barWord(file: string, offset: number): bigint {
  const fd = openSync(file, 'r');
  try {
    const b = Buffer.alloc(8);
    expect(readSync(fd, b, 0, 8, offset)).toBe(8);
    return b.readBigUInt64LE(0);
  } finally {
    closeSync(fd);
  }
}

function kmsgRecords(file: string): KmsgRecord[] {
  const out: KmsgRecord[] = [];
  for (const line of file.split('\n').slice(0, -1)) {
    if (line.startsWith(' ')) {
      const last = out[out.length - 1];
      if (!last) throw new Error(`a dictionary line before any record: ${line}`);
      last.dict.push(line.slice(1));
      continue;
    }
    const m = /^(\d+),(\d+),(\d+),-;(.*)$/.exec(line);
    if (!m) throw new Error(`not a /dev/kmsg record: ${JSON.stringify(line)}`);
    out.push({ pri: Number(m[1]), seq: Number(m[2]), usec: Number(m[3]), text: m[4] as string, dict: [] });
  }
  return out;
}

/** msg_add_ext_text's rule: no byte below ' ', none from DEL up and no backslash except as the start of `\xNN`. */
function escapedAsKmsg(text: string): boolean {
  return /^[ -~]*$/.test(text) && !/\\(?!x[0-9a-f]{2})/.test(text);
}

describe.each(FLAVOURS)('$name: the kernel log as /dev/kmsg returns it', ({ opts }) => {
  it('each record: the line’s printk level, text escaped, the PCI dictionary after a device’s line; link lines in chip.c’s order', async () => {
    const port = 'ports' in opts ? 2 : 1;
    const u = new EmuUnit({
      seed: 7,
      ...opts,
      engines: 4,
      descqCnt: 256,
      workload: 'mixed:gbps=0.2',
      faults: ['engine-error:1@3:1', `link-flap@4:${port}`],
    });
    u.runUntilMs(205);
    // What the tree's dev/kmsg holds (sysroot.ts writes kmsgText of the unit's log).
    const records = kmsgRecords(kmsgText(u.host));
    expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i));
    const mod = u.flavour.module;
    for (const r of records) {
      expect(escapedAsKmsg(r.text), r.text).toBe(true);
      // dev_printk on the PCI function: SUBSYSTEM then DEVICE (msg_add_dict_text, dev_printk_info).
      expect(r.text.startsWith(`${mod} 0000:05:00.0: `) ? r.dict : []).toEqual(
        r.text.startsWith(`${mod} 0000:05:00.0: `) ? ['SUBSYSTEM=pci', 'DEVICE=+pci:0000:05:00.0'] : [],
      );
    }
    const msg = (r: KmsgRecord) => r.text.replace(/^\S+ \S+: \S+: /, '');
    // dd_dev_err: the engine error and its dump, whose tabs are escaped.
    const err = records.filter((r) => /^SDMA \(1\) engine error: 0x2 state /.test(msg(r)));
    expect(err).toHaveLength(1);
    const dump = records.filter((r) => /SDMA \(1\) descq_head|desc\[|sdmadesc|desc0|aidx/.test(r.text));
    expect(dump.length).toBeGreaterThan(2);
    expect(dump.every((r) => r.pri === 3)).toBe(true);
    expect(dump.some((r) => r.text.includes('\\x09'))).toBe(true);
    // dd_dev_info: the link lines (handle_8051_interrupt, goto_offline, handle_link_down, set_link_state).
    const link = records.filter((r) => /8051: |state changed to |Link down reason/.test(r.text));
    expect(link.every((r) => r.pri === 6)).toBe(true);
    expect(link.map(msg)).toEqual([
      '8051: Link down',
      'physical state changed to PHYS_OFFLINE (0x9), phy 0x90',
      'logical state changed to PORT_DOWN (0x1)',
      'Link down reason: Unexpected link down',
      'physical state changed to PHYS_POLL (0x2), phy 0x20',
      '8051: Link up',
      'physical state changed to PHYS_LINKUP (0x5), phy 0x50',
      'logical state changed to PORT_INIT (0x2)',
      'logical state changed to PORT_ARMED (0x3)',
      'logical state changed to PORT_ACTIVE (0x4)',
    ]);
    // The port's prefix: the unit's on one port, `<unit>.<pidx>` on two (hfi2's ppd_dev_info).
    const prefix = port === 2 ? `${mod} 0000:05:00.0: ${mod}_0.1: ` : `${mod} 0000:05:00.0: ${mod}_0: `;
    expect(link.every((r) => r.text.startsWith(prefix))).toBe(true);
  });
});

describe('engine errors the Cornelis builds do not log', () => {
  it.each(['upstream', 'cornelis', 'hfi2'] as const)(
    '%s: SDmaHaltErr with a correctable bit (0x100040) is logged by upstream only (sdma_engine_error)',
    (driver) => {
      const u = new EmuUnit({
        seed: 3,
        chip: driver === 'upstream' ? 'wfr' : 'jkr',
        driver,
        engines: 3,
        workload: 'idle',
        faults: ['engine-error:6@2:2', 'engine-error:20@2:2'],
      });
      u.runUntilMs(3);
      const logged = u.host.kernelLog.filter((l) => l.includes('engine error'));
      expect(logged).toEqual(driver === 'upstream' ? [expect.stringMatching(/SDMA \(2\) engine error: 0x100040 state /)] : []);
    },
  );
});

/** /proc/interrupts line as show_interrupts prints it: `%*d: `, `%10u ` per CPU, ` %8s`, ` %*lu`, `-%-8s`, `  %s` (prec 3). */
function interruptLine(irq: number, counts: number[], chip: string, hwirq: number, name: string): string {
  const pad = (s: string | number, n: number) => String(s).padStart(n);
  return `${pad(irq, 3)}: ${counts.map((c) => `${pad(c, 10)} `).join('')} ${pad(chip, 8)} ${pad(hwirq, 3)}-edge      ${name}`;
}

describe.each(FLAVOURS)('$name: sysfs, debugfs and procfs as the kernel prints them', ({ opts }) => {
  const tree = rendered({ ...opts, workload: 'mixed:ipoib=2,gbps=0.5', descqCnt: 256 }, 3);

  it('device counters: all 460 of dev_cntrs in order, hw_counters adding DRIVER_* and lifespan; port hw_counters: portcounter_names and lifespan', async () => {
    const t = await tree;
    const names = t.read(join(t.dbg, 'counter_names')).split('\n').slice(0, -1);
    expect(names).toHaveLength(460);
    expect(names.slice(0, 3)).toEqual(['RcvOverflow,32', 'RxLenErr,32', 'RxShrErr,32']);
    expect(names).toContain('Cce LATriggered');
    // CNTR_SDMA: one per engine of the chip (16), CNTR_VL: VL 0-7 and 15 (init_cntrs, vl_from_idx).
    expect(names.filter((n) => /^SDEDscFdCn\d+,32$/.test(n))).toHaveLength(16);
    expect(names.filter((n) => /^DcRxFlitVl\d+$/.test(n)).map((n) => Number(n.slice(10)))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 15]);
    expect(readFileSync(join(t.dir, t.dbg, 'counters')).length).toBe(460 * 8);
    const driver = ['KernIntr', 'ErrorIntr', 'Tx_Errs', 'Rcv_Errs', 'HW_Errs', 'NoPIOBufs', 'CtxtsOpen', 'RcvLen_Errs'];
    const hw = t.list(join(t.cls, 'hw_counters'));
    expect(hw.sort()).toEqual(
      [...names, ...[...driver, 'EgrBufFull', 'EgrHdrFull'].map((n) => `DRIVER_${n}`), 'lifespan'].sort(),
    );
    expect(t.read(join(t.cls, 'hw_counters/lifespan'))).toBe('10\n');
    expect(Number(t.read(join(t.cls, 'hw_counters/DRIVER_KernIntr')))).toBeGreaterThan(0);
    const portNames = t.read(join(t.dbg, 'portcounter_names')).split('\n').slice(0, -1);
    for (const p of t.u.host.ports) {
      expect(t.list(join(t.cls, `ports/${p.port}/hw_counters`)).sort()).toEqual([...portNames, 'lifespan'].sort());
    }
    expect(portNames.filter((n) => n.startsWith('TxFlitVL'))).toHaveLength(9);
  });

  it('/proc/interrupts: show_interrupts columns, the MSI-X vectors in the 5.14 IR-PCI-MSI domain with their hwirq', async () => {
    const t = await tree;
    const lines = t.read('proc/interrupts').split('\n').slice(0, -1);
    expect(lines[0]).toBe(`${' '.repeat(11)}${Array.from({ length: 16 }, (_, j) => `CPU${j}`.padEnd(11)).join('')}`);
    const zeros = new Array<number>(16).fill(0);
    expect(lines[1]).toBe(interruptLine(0, zeros, 'IO-APIC', 2, 'timer'));
    const mod = t.u.flavour.module;
    expect(lines[2]).toBe(interruptLine(150, zeros, 'IR-PCI-MSI', 0x500 << 11, `${mod}_0`));
    t.u.engines.forEach((e, i) => {
      const counts = zeros.map((_, cpu) => (cpu === e.cpu ? (t.u.vectorCounts[i] ?? 0) : 0));
      expect(lines[3 + i]).toBe(interruptLine(151 + i, counts, 'IR-PCI-MSI', (0x500 << 11) + i + 1, `${mod}_0 sdma${e.idx}`));
    });
  });

  it('hw_rev and boardversion are the CCE_REVISION the BAR holds (hfi1_init_dd, hw_rev_show)', async () => {
    const t = await tree;
    const rev = barWord(join(t.dir, 'sys/bus/pci/devices/0000:05:00.0/resource0'), 0);
    const minor = Number(rev & 0xffn);
    const major = Number((rev >> 8n) & 0xffn);
    expect(major).toBeGreaterThan(0);
    expect(t.read(join(t.cls, 'hw_rev'))).toBe(`${minor.toString(16)}\n`);
    expect(t.read(join(t.cls, 'boardversion'))).toBe(
      `ChipABI 3.0, ChipRev ${major}.${minor}, SW Compat ${Number((rev >> 24n) & 0xffn)}\n`,
    );
    if (t.u.flavour.chip.name === 'wfr') expect(t.read(join(t.cls, 'hw_rev'))).toBe('11\n'); // B1, PCI revision 0x11
  });

  it('qp_stats prints qp->pmtu in bytes; rdma res qp gives a user QP its pdn between path-mig-state and pid', async () => {
    const t = await tree;
    const mtu = t
      .read(join(t.dbg, 'qp_stats'))
      .split('\n')
      .slice(0, -1)
      .map((l) => [/ (SMI|GSI|RC) /.exec(l)?.[1], /MTU (\d+) /.exec(l)?.[1]]);
    expect(mtu.length).toBeGreaterThan(2);
    for (const [type, m] of mtu) expect(m).toBe(type === 'RC' ? '4096' : '0');
    const qps = JSON.parse(t.read('.hfi1-sdma/rdma-res-qp.json')) as Record<string, unknown>[];
    for (const q of qps) {
      const keys = Object.keys(q);
      if (q.comm === 'ib_core') expect(keys).not.toContain('pdn');
      else expect(keys.slice(keys.indexOf('path-mig-state'), keys.indexOf('pid') + 1)).toEqual(['path-mig-state', 'pdn', 'pid']);
    }
    expect(qps.some((q) => typeof q.pdn === 'number')).toBe(true);
  });

  it('hw_resources (Cornelis builds): the device ranges, then each port’s receive contexts, as many as the RcvHdrOvr counters', async () => {
    const t = await tree;
    if (t.u.flavour.driver === 'upstream') {
      expect(() => t.read(join(t.cls, 'hw_resources'))).toThrow(/ENOENT/);
      return;
    }
    const text = t.read(join(t.cls, 'hw_resources'));
    const hfi2 = t.u.flavour.driver === 'hfi2';
    const port = (p: number) =>
      hfi2
        ? new RegExp(
            `^p${p}\\.rctxt    (\\d+)-(\\d+)\\np${p}\\.firstdyn (\\d+)\\np${p}\\.nkrcvq   (\\d+)\\np${p}\\.nnetdev  (\\d+)\\np${p}\\.nuctxts  (\\d+)\\np${p}\\.rcvary   (\\d+)$`,
            'm',
          )
        : new RegExp(
            `^p${p}\\.rctxt        (\\d+)-(\\d+)\\np${p}\\.firstbulksvc (\\d+)\\np${p}\\.firstdyn     (\\d+)\\np${p}\\.nkrcvq    (\\d+)\\np${p}\\.nbulksvc  (\\d+)\\np${p}\\.nnetdev   (\\d+)\\np${p}\\.nuctxts   (\\d+)\\np${p}\\.rcvary    (\\d+)$`,
            'm',
          );
    expect(text).toMatch(
      /^pfunit 0\nsi_idx 0\nnumvfs 0\nsctxt {2}\d+-\d+\nrctxt {2}\d+-\d+\nsde {4}0-15\nrcvary \d+-\d+\npio {4}\d+-\d+\n/,
    );
    let used = 0;
    for (let p = 0; p < t.u.flavour.ports; p++) {
      const m = port(p).exec(text);
      expect(m, `port ${p}`).not.toBeNull();
      const n = (m as RegExpExecArray).slice(1).map(Number);
      const [first, last] = n as [number, number];
      const counts = hfi2 ? [n[3], n[4], n[5]] : [n[4], n[5], n[6], n[7]];
      expect(last - first + 1).toBe(counts.reduce((a, b) => (a ?? 0) + (b ?? 0), 0));
      used += last - first + 1;
    }
    const ovr = t
      .read(join(t.dbg, 'portcounter_names'))
      .split('\n')
      .filter((l) => l.startsWith('RcvHdrOvr'));
    expect(ovr).toHaveLength(used);
  });
});

describe.each(FLAVOURS)('$name: the accelerated-IPoIB netdev hfi1 makes', ({ opts }) => {
  // 4 engines, 2 VLs: VL 0 maps engines 0 and 1, so queue q of SL 0 sends on engine q & 1 (sdma_select_engine_sc).
  const tree = rendered(
    { ...opts, engines: 4, numVls: 2, descqCnt: 256, workload: 'ipoib:gbps=0.2', faults: ['ipoib-timeout@2:1'] },
    3010,
  );

  it('num_sdma transmit queues per port’s netdev; each queue on the engine sdma_select_engine_sc gives it', async () => {
    const t = await tree;
    const ports = t.u.host.ports.length;
    for (let p = 0; p < ports; p++) {
      const net = join('sys/class/net', `ib${p}`);
      expect(t.list(join(net, 'queues')).sort()).toEqual(['tx-0', 'tx-1', 'tx-2', 'tx-3']);
      expect(t.read(join(net, 'dev_port'))).toBe(`${p}\n`);
      expect(t.read(join(net, 'tx_queue_len'))).toBe('1024\n');
    }
    const queues = t.u.senders.filter((s) => s.ipoib);
    expect(queues.map((s) => [s.ipoib?.txq, s.engine.idx])).toEqual([
      [0, 0],
      [1, 1],
      [2, 0],
      [3, 1],
    ]);
  });

  it('the watchdog: the 5.14 WARN_ONCE the first time, the driver’s block each time, with the queue’s own values', async () => {
    const t = await tree;
    const records = kmsgRecords(t.read('dev/kmsg'));
    const cut = records.filter((r) => r.text === '------------[ cut here ]------------');
    expect(cut).toHaveLength(1);
    expect(cut[0]?.pri).toBe(4);
    const warn = records.filter((r) => r.text.startsWith('NETDEV WATCHDOG: '));
    expect(warn.map((r) => [r.pri, r.text])).toEqual([
      [6, `NETDEV WATCHDOG: ib0 (${t.u.flavour.module}): transmit queue 1 timed out`],
    ]);
    expect(records.some((r) => /^WARNING: CPU: \d+ PID: \d+ at net\/sched\/sch_generic\.c:\d+ dev_watchdog\+/.test(r.text))).toBe(
      true,
    );
    // hfi1_ipoib_tx_timeout, all dd_dev_info: one block per timeout, two by 3 s.
    const block = records.filter((r) => / (hfi[12])_0: /.test(r.text) && r.pri === 6).map((r) => r.text.replace(/^.*_0: /, ''));
    const starts = block.filter((l) => l.startsWith('timeout txq '));
    expect(starts).toHaveLength(2);
    expect(starts[0]).toMatch(/^timeout txq [0-9a-f]{16} q 1 stopped 1 stops 1 no_desc 1 ring_full 0$/);
    expect(block).toContain('flow 1'); // tx_queue 1 | SC 0 << 8 (union hfi1_ipoib_flow)
    expect(block).toContain('tx_queue_len 1024 max_items 2048'); // roundup_pow_of_two(tx_queue_len + 1)
    const sent = block.map((l) => /^sent (\d+) completed (\d+) used (\d+)$/.exec(l)).find((m) => m);
    const ht = block.map((l) => /^head (\d+) tail (\d+)$/.exec(l)).find((m) => m);
    const [s, c, used] = (sent as RegExpExecArray).slice(1).map(Number) as [number, number, number];
    expect(s - c).toBe(used);
    // head advances on completion, tail on send (hfi1_ipoib_poll_tx_ring, hfi1_ipoib_send_dma_single).
    expect((ht as RegExpExecArray).slice(1).map(Number)).toEqual([c % 2048, s % 2048]);
    expect(block.filter((l) => /^sde [0-9a-f]{16} engine 1$/.test(l))).toHaveLength(2);
    expect(t.read('sys/class/net/ib0/queues/tx-1/tx_timeout')).toBe('2\n');
    expect(t.read('sys/class/net/ib0/queues/tx-0/tx_timeout')).toBe('0\n');
  });
});

describe('the Cornelis hfi1 bulk service as the driver sets it up (hfi1_alloc_devdata, hfi1_bulksvc_loan_resources)', () => {
  it('never on a WFR: every engine keeps its VL, no bulksvc.sde, nothing logged', async () => {
    const t = await rendered({ chip: 'wfr', driver: 'cornelis', workload: 'idle', params: ['use_bulksvc=Y'] }, 1);
    expect(t.read('sys/module/hfi1/parameters/use_bulksvc')).toBe('Y\n');
    expect(t.read(join(t.cls, 'hw_resources'))).not.toMatch(/bulksvc\.sde/);
    expect(t.u.info.engineIds.map((e) => t.read(join(t.cls, `sdma${e}/vl`)))).not.toContain('255');
    expect(t.read('dev/kmsg')).toBe('');
  });

  it.each([1, 2])(
    'a %i-port CN5000: the last 4 engines, off the CPU maps; the probe’s lines (one port: not enough ports)',
    async (ports) => {
      const t = await rendered({ chip: 'jkr', driver: 'cornelis', ports, workload: 'idle', params: ['use_bulksvc=Y'] }, 1);
      expect(t.read(join(t.cls, 'hw_resources'))).toMatch(/\nbulksvc\.sde 12-15\n$/);
      // sdma_set_cpu_to_sde_map refuses an engine without a VL: its cpu_list is empty, sdma_cpu_list names it nowhere.
      for (const e of [12, 13, 14, 15]) expect(t.read(join(t.cls, `sdma${e}/cpu_list`))).toBe('empty\n');
      expect(t.read(join(t.cls, 'sdma11/cpu_list'))).toBe('11\n');
      expect(t.read(join(t.dbg, 'sdma_cpu_list'))).not.toMatch(/sdma1[2-5]/);
      const records = kmsgRecords(t.read('dev/kmsg'));
      expect(records.map((r) => [r.pri, r.text, r.dict.length])).toEqual([
        [6, 'hfi1 0000:05:00.0: hfi1_0: Bulksvc configured to run on CPU 0', 2],
        ...(ports === 1
          ? [
              [
                3,
                'hfi1 0000:05:00.0: hfi1_0: bulksvc.c:293:hfi1_bulksvc_loan_resources() Not enough ports to enable bulk service (1)',
                2,
              ],
            ]
          : []),
        [6, 'Bulksvc configured to be event driven', 0],
      ]);
    },
  );

  it('a setting the driver cannot take fails its probe: a usage error quoting the line it logs', () => {
    const unit = (params: string[]) => () => new EmuUnit({ chip: 'jkr', driver: 'cornelis', workload: 'idle', params });
    expect(unit(['use_bulksvc=Y', 'bulksvc_num_sdma=10'])).toThrow(
      /would fail the probe .*"bulksvc\.c:259:hfi1_bulksvc_loan_resources\(\) Not enough sdma engines\(16\) to cover VLs\(8\) and enable hfisvc \(10\)".*Give bulksvc_num_sdma from 1 to 8, or a smaller num_vls/,
    );
    expect(unit(['use_bulksvc=Y', 'bulksvc_num_sdma=0'])).toThrow(/"bulksvc requires 0 SDMA engines, but only 16 available"/);
    expect(unit(['use_bulksvc=Y', 'bulksvc_num_sdma=10', 'num_vls=6'])).not.toThrow();
  });
});
