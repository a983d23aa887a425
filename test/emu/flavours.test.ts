// The emulator on every host it models: upstream hfi1 on WFR, the Cornelis hfi1 on WFR or JKR, hfi2 on JKR or WFR,
// with one or two ports and an engine window 8-15. The rendered files are checked against patterns written from the
// drivers' format strings (sdma_seqfile_dump_sde, sdma_seqfile_dump_cpu_list, vl_show, hw_resources; msix.c
// vector names), not from the emulator's renderer.
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { ChipKind, DriverBuild } from '../../src/backend.js';
import { emuUnitFromOptions } from '../../src/emu/index.js';
import { invariantViolations } from '../../src/emu/invariants.js';
import { closeSysroot, writeSysroot } from '../../src/emu/sysroot.js';
import { EmuUnit } from '../../src/emu/unit.js';
import { Hfi1SdmaError } from '../../src/errors.js';
import { buildTx, isTxFailure } from '../../src/progress/txreq.js';
import { removeTrees } from '../support/temp.js';
import { quietUnit, Recorder, txOf } from './support.js';

interface Combo {
  chip: ChipKind;
  driver: DriverBuild;
  ports: number;
  firstEngine: number;
}

const COMBOS: Combo[] = [
  { chip: 'wfr', driver: 'upstream', ports: 1, firstEngine: 0 },
  { chip: 'wfr', driver: 'cornelis', ports: 1, firstEngine: 8 },
  { chip: 'jkr', driver: 'cornelis', ports: 2, firstEngine: 8 },
  { chip: 'jkr', driver: 'cornelis', ports: 1, firstEngine: 0 },
  { chip: 'jkr', driver: 'hfi2', ports: 2, firstEngine: 8 },
  { chip: 'jkr', driver: 'hfi2', ports: 1, firstEngine: 0 },
  { chip: 'wfr', driver: 'hfi2', ports: 1, firstEngine: 8 },
];

// The descriptor and AHG lines, from the drivers' format strings.
const OLD_DESC = /^\tdesc\[(\d+)\]: flags:[I-][H-][F-][L-] addr:0x[0-9a-f]{16} gen:\d+ len:\d+ bytes$/;
const OLD_AHG = /^\t\tahgidx: \d+ ahgmode: \d+$/;
const NEW_DESC =
  /^\tdesc\[(\d+)\]: flags:[I-][H-][F-][L-] addr:0x[0-9a-f]{16} gen:\d+ len:(\d+) d0:0x([0-9a-f]{16}) d1:0x([0-9a-f]{16})$/;
const NEW_AHG = /^\t\taidx:\d+ amode:\d+ alen:\d+$/;
const SDE_HEADER = /^SDE (\d+) CPU -?\d+ STE (\S+) C (0x[0-9a-f]+) .* SLC (0x[0-9a-f]+)$/;
// hfi2 sdma_cpu_list: "cpu%3lu: pidx %d:  vl%d: [ sdma%2d, ...]", later port lines of a CPU indented by 8 spaces.
const CPU_LIST_FIRST = /^cpu[ \d]{3}: pidx \d+:( {2}vl\d+: \[ sdma[ \d]\d(, sdma[ \d]\d)* \])+$/;
const CPU_LIST_NEXT = /^ {8}pidx \d+:( {2}vl\d+: \[ sdma[ \d]\d(, sdma[ \d]\d)* \])+$/;
const HW_RESOURCES_SDE = /^sde {4}(\d+)-(\d+)$/m;
const IRQ_NAME = / (hfi[12])_(\d+) sdma(\d+)$/;

/** A cornelis txreq of `numDesc` 64-byte descriptors with pad_sdma_desc `pad`. */
function padded(numDesc: number, pad: number) {
  const t = buildTx({
    tlen: 64 * numDesc,
    fragments: Array.from({ length: numDesc }, (_, i) => ({ kind: i === 0 ? ('single' as const) : ('page' as const), len: 64 })),
    options: { driver: 'cornelis', padSdmaDesc: pad },
  });
  if (isTxFailure(t)) throw new Error(t.message);
  return t;
}

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'hfi1-emu-flavour-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  removeTrees(dirs.splice(0));
});

function label(c: Combo): string {
  return `${c.chip} × ${c.driver}, ${c.ports} port(s), engines ${c.firstEngine}-15`;
}

/** The emulated host of build `c` (mixed workload), run to `atMs` (with `faults`) and rendered under `dir`. */
async function rendered(c: Combo, faults: string[] = [], atMs = 5, dir = tempDir()) {
  const u = new EmuUnit({ seed: 11, workload: 'mixed', descqCnt: 256, engines: 16 - c.firstEngine, ...c, faults });
  u.runUntilMs(atMs);
  await writeSysroot(u, dir);
  closeSysroot(u, dir);
  return { u, dir };
}

// One run and tree per build, without faults, read by every test that only reads it; removed when the file ends.
const trees = new Map<string, ReturnType<typeof rendered>>();
const treeDirs: string[] = [];
function built(c: Combo): ReturnType<typeof rendered> {
  let tree = trees.get(label(c));
  if (!tree) {
    const dir = mkdtempSync(join(tmpdir(), 'hfi1-emu-flavour-'));
    treeDirs.push(dir);
    tree = rendered(c, [], 5, dir);
    trees.set(label(c), tree);
  }
  return tree;
}
afterAll(() => {
  removeTrees(treeDirs);
});

describe.each(COMBOS)('the emulated host: %s', (c) => {
  it(`${label(c)}: runs with every invariant holding and describes itself`, async () => {
    const { u } = await built(c);
    const module = c.driver === 'hfi2' ? 'hfi2' : 'hfi1';
    expect(invariantViolations(u)).toEqual([]);
    expect(u.info.name).toBe(`${module}_0`);
    expect(u.info.engineIds).toEqual(Array.from({ length: 16 - c.firstEngine }, (_, i) => c.firstEngine + i));
    expect(u.info.engines).toBe(16 - c.firstEngine);
    expect(u.info.flavour).toMatchObject({ module, chip: c.chip, driver: c.driver, ports: c.ports });
    expect(u.info.flavour.evidence.join('\n')).toContain(`the emulator (--chip ${c.chip} --driver ${c.driver}`);
    const samples = await u.sample();
    expect(samples.map((s) => s.engine)).toEqual(u.info.engineIds);
    expect(samples.every((s) => s.state === 's99_Running')).toBe(true);
    // A healthy running engine: 0x9 on WFR; the threshold bit (0x19) on JKR under cornelis/hfi2 in an AMD host.
    const ctrl = c.chip === 'jkr' ? 0x19n : 0x9n;
    expect(samples.map((s) => s.csr?.ctrl)).toEqual(samples.map(() => ctrl));
  });

  it(`${label(c)}: renders the names, the window, vl, sdes lines, counters and interrupts of its build`, async () => {
    const { u, dir } = await built(c);
    const module = c.driver === 'hfi2' ? 'hfi2' : 'hfi1';
    const cls = join(dir, 'sys/class/infiniband', `${module}_0`);
    const dbg = join(dir, 'sys/kernel/debug', module, `${module}_0`);
    const pci = join(dir, 'sys/bus/pci/devices/0000:05:00.0');
    const window = u.info.engineIds;
    const inWindow = (e: number) => e >= c.firstEngine && e <= 15;

    expect(readdirSync(join(dir, 'sys/class/infiniband'))).toEqual([`${module}_0`]);
    const sdmaDirs = readdirSync(cls)
      .filter((n) => /^sdma\d+$/.test(n))
      .map((n) => Number(n.slice(4)))
      .sort((a, b) => a - b);
    expect(sdmaDirs).toEqual(window);
    expect(readFileSync(join(pci, 'vendor'), 'utf8')).toBe(c.chip === 'jkr' ? '0x434e\n' : '0x8086\n');
    expect(readFileSync(join(pci, 'device'), 'utf8')).toBe(c.chip === 'jkr' ? '0x0001\n' : '0x24f0\n');
    if (c.chip === 'jkr') {
      expect(readFileSync(join(pci, 'subsystem_device'), 'utf8')).toBe(c.ports === 2 ? '0x0002\n' : '0x0003\n');
    }
    expect(readFileSync(join(cls, 'board_id'), 'utf8')).toBe(`${u.info.context?.boardId}\n`);
    expect(readFileSync(join(pci, 'current_link_speed'), 'utf8')).toBe(`${u.info.context?.pciLinkSpeed}\n`);
    if (!(c.chip === 'wfr' && c.driver === 'upstream')) {
      expect(readlinkSync(join(pci, 'driver'))).toBe(`../../../bus/pci/drivers/${module}`);
    }
    const ports = readdirSync(join(cls, 'ports')).sort();
    expect(ports).toEqual(c.ports === 2 ? ['1', '2'] : ['1']);
    expect(readFileSync(join(cls, `ports/${c.ports}/state`), 'utf8')).toBe('4: ACTIVE\n');

    // vl: the Cornelis hfi1 and hfi2 one VL per port joined by commas, no newline; upstream hfi1 "%d\n".
    const vl = readFileSync(join(cls, `sdma${c.firstEngine}`, 'vl'), 'utf8');
    if (c.driver !== 'upstream') expect(vl).toMatch(c.ports === 2 ? /^\d+,\d+$/ : /^\d+$/);
    else expect(vl).toMatch(/^\d+\n$/);

    // hw_resources (the Cornelis hfi1 and hfi2): the engine window, last engine inclusive.
    if (c.driver !== 'upstream') {
      const hw = readFileSync(join(cls, 'hw_resources'), 'utf8');
      expect(hw).toMatch(/^pfunit \d+\nsi_idx \d+\nnumvfs \d+\n/);
      expect(HW_RESOURCES_SDE.exec(hw)?.slice(1).map(Number)).toEqual([c.firstEngine, 15]);
    } else expect(readdirSync(cls)).not.toContain('hw_resources');

    // sdes: one record per engine of the window, absolute SDE numbers; the build's descriptor/AHG lines only.
    const sdes = readFileSync(join(dbg, 'sdes'), 'utf8').split('\n').slice(0, -1);
    const headers = sdes.map((l) => SDE_HEADER.exec(l)).filter((m) => m !== null);
    expect(headers.map((m) => Number(m[1]))).toEqual(window);
    if (c.chip === 'jkr') expect(new Set(headers.map((m) => m[4]))).toEqual(new Set(['0x0']));
    const body = sdes.filter((l) => !l.startsWith('SDE '));
    expect(body.length).toBeGreaterThan(0);
    const [desc, ahg] = c.driver === 'upstream' ? [OLD_DESC, OLD_AHG] : [NEW_DESC, NEW_AHG];
    for (const line of body) expect(desc.test(line) || ahg.test(line), JSON.stringify(line)).toBe(true);
    expect(body.some((l) => ahg.test(l))).toBe(true);

    // counters: the 16 engines of the chip, 0 outside the window.
    const names = readFileSync(join(dbg, 'counter_names'), 'utf8').split('\n').slice(0, -1);
    const counters = readFileSync(join(dbg, 'counters'));
    for (let e = 0; e < 16; e++) expect(names).toContain(`SDEDscFdCn${e},32`);
    const fetched = (e: number) => counters.readBigUInt64LE(names.indexOf(`SDEDscFdCn${e},32`) * 8);
    for (let e = 0; e < 16; e++) {
      if (inWindow(e)) expect(fetched(e)).toBeGreaterThan(0n);
      else expect(fetched(e)).toBe(0n);
    }
    for (let p = 1; p <= 2; p++) {
      const present = readdirSync(dbg).includes(`port${p}counters`);
      if (!(c.chip === 'wfr' && c.driver === 'upstream')) expect(present).toBe(p <= c.ports);
    }

    // /proc/interrupts: "<module>_<unit> sdma<E>" with absolute E.
    const irqs = readFileSync(join(dir, 'proc/interrupts'), 'utf8')
      .split('\n')
      .map((l) => IRQ_NAME.exec(l))
      .filter((m) => m !== null);
    expect(irqs.map((m) => m[1])).toEqual(window.map(() => module));
    expect(irqs.map((m) => Number(m[3]))).toEqual(window);

    // Module parameters per build.
    const params = readdirSync(join(dir, 'sys/module', module, 'parameters'));
    expect(params).toContain('sdma_descq_cnt');
    const extra = [
      'pad_sdma_desc',
      'sdma_align',
      'sdma_threshold',
      'sdma_single_descriptor',
      'enable_jkr_sdma_mem_init',
      'jkr_sdma_credits_limit',
    ];
    for (const p of extra) expect(params.includes(p), p).toBe(c.driver !== 'upstream');

    // sdma_cpu_list: the Cornelis hfi1 and hfi2 lines carry pidx, one per port per CPU.
    const cpuList = readFileSync(join(dbg, 'sdma_cpu_list'), 'utf8');
    if (c.driver !== 'upstream') {
      const lines = cpuList.split('\n').slice(0, -1);
      expect(lines.length).toBe(window.length * c.ports);
      for (const [i, line] of lines.entries()) {
        expect(line).toMatch(i % c.ports === 0 ? CPU_LIST_FIRST : CPU_LIST_NEXT);
      }
    } else expect(cpuList).toBe('');
  });
});

describe('new sdes lines carry the raw qwords in the chip layout', () => {
  it('JKR: FIRST, LAST and the length sit in qw1 (bits 31, 30, 29:16), the address in qw0', async () => {
    const { dir } = await built({ chip: 'jkr', driver: 'hfi2', ports: 1, firstEngine: 0 });
    const lines = readFileSync(join(dir, 'sys/kernel/debug/hfi2/hfi2_0/sdes'), 'utf8').split('\n');
    let seen = 0;
    for (const line of lines) {
      const m = NEW_DESC.exec(line);
      if (!m) continue;
      const d0 = BigInt(`0x${m[3]}`);
      const d1 = BigInt(`0x${m[4]}`);
      expect(Number((d1 >> 16n) & 0x3fffn)).toBe(Number(m[2]));
      expect(
        line.includes('flags:--F') || line.includes('flags:-HF') || line.includes('flags:I-F') || line.includes('flags:IHF'),
      ).toBe(((d1 >> 31n) & 1n) === 1n);
      expect(line).toContain(`addr:0x${d0.toString(16).padStart(16, '0')}`);
      seen++;
    }
    expect(seen).toBeGreaterThan(0);
  });
});

describe('driver builds: pad descriptors, 256-byte alignment and the progress schedule', () => {
  it("a txreq's ring slots are num_desc + num_pad (pad_sdma_desc 32 on JKR in an AMD host, none upstream)", () => {
    for (const [opts, pad] of [
      [{ chip: 'jkr', driver: 'hfi2', firstEngine: 8, engines: 8 }, 32],
      [{ chip: 'wfr', driver: 'cornelis', driverSettings: { padSdmaDesc: 8 } }, 8],
      [{ chip: 'wfr', driver: 'upstream' }, 0],
    ] as const) {
      const u = quietUnit(opts);
      const e = u.engineAt(u.info.engineIds[0] as number);
      const rec = new Recorder();
      const tx = buildTx({
        tlen: 64 * 3,
        fragments: [0, 1, 2].map((i) => ({ kind: i === 0 ? ('single' as const) : ('page' as const), len: 64 })),
        options: opts.driver === 'upstream' ? {} : { driver: opts.driver, padSdmaDesc: pad },
      });
      if (isTxFailure(tx)) throw new Error(tx.message);
      const slots = pad === 0 ? 3 : Math.ceil(3 / pad) * pad;
      expect(tx.numDesc + tx.numPad).toBe(slots);
      const before = e.descqTail;
      expect(u.submit(e.idx, rec.tx(tx))).toBe(0);
      expect(e.descqTail - before).toBe(slots);
      expect(e.freecnt()).toBe(e.descqCnt - 1 - slots);
      u.resume();
      u.advance(1);
      expect(rec.done.map((d) => d.status)).toEqual([0]);
      expect(invariantViolations(u)).toEqual([]);
    }
  });

  it('sdma_send_txreq admits num_desc + num_pad against desc_avail: a request whose pads do not fit waits', () => {
    const u = quietUnit({ chip: 'wfr', driver: 'cornelis', driverSettings: { padSdmaDesc: 32 }, descqCnt: 64 });
    const rec = new Recorder();
    expect(u.submit(0, rec.tx(padded(2, 32)))).toBe(0); // 2 descriptors + 30 pads: 32 slots of 63
    expect(u.engineAt(0).descqTail).toBe(32);
    expect(u.submit(0, rec.tx(padded(2, 32)))).toBe(-16); // 2 would fit in the 31 left, 32 do not: -EBUSY
    expect(u.engineAt(0).descqFullCount).toBe(1);
  });

  it('a one-descriptor request is charged its pads but none is written (_submit_tx pads before the last of two or more)', () => {
    const u = quietUnit({ chip: 'wfr', driver: 'cornelis', driverSettings: { padSdmaDesc: 32 }, descqCnt: 64 });
    const e = u.engineAt(0);
    const rec = new Recorder();
    expect(u.submit(0, rec.tx(padded(1, 32)))).toBe(0);
    expect(e.descqTail).toBe(1);
    expect(e.descAvail).toBe(63 - 32);
    // The cached desc_avail is short of 32; sdma_check_progress re-reads the free count (62) and the request goes in.
    expect(u.submit(0, rec.tx(padded(1, 32)))).toBe(0);
    expect(e.descqTail).toBe(2);
    expect(e.descqFullCount).toBe(0);
  });

  it('sdma_send_txlist pads the batch once per tail update: 8 packets of 3 descriptors take 32 slots (pad 32)', async () => {
    const u = quietUnit({ chip: 'wfr', driver: 'cornelis', driverSettings: { padSdmaDesc: 32 } });
    const rec = new Recorder();
    const list = Array.from({ length: 8 }, () => rec.tx(padded(3, 32)));
    expect(u.submitList(0, list)).toEqual({ ret: 0, count: 8 });
    expect(u.engineAt(0).descqTail).toBe(32); // 24 descriptors + 8 pads, not 8 × 32
    const flags = (await u.ring(0)).descriptors.map((d) => (d.len === 0 && d.addr === 0n ? 'pad' : d.flags));
    expect(flags.slice(0, 3)).toEqual(['--F-', '----', '-H-L']);
    expect(flags.slice(21)).toEqual(['--F-', '----', ...new Array(8).fill('pad'), '-H-L']);
  });

  it('sdma_send_txlist admits num_desc against desc_avail rounded down to the pad, and pads the last packet that fits', () => {
    const u = quietUnit({ chip: 'wfr', driver: 'cornelis', driverSettings: { padSdmaDesc: 32 }, descqCnt: 64 });
    const rec = new Recorder();
    const list = Array.from({ length: 11 }, () => rec.tx(padded(3, 32)));
    // desc_avail 63 rounds down to 32: ten packets (30) and 2 pads; the eleventh would need 3 + 29 of the 31 free.
    expect(u.submitList(0, list)).toEqual({ ret: -16, count: 10 });
    expect(u.engineAt(0).descqTail).toBe(32);
    expect(list).toHaveLength(1);
  });

  it('sdma_align 2 splits workload fragments at 256-byte boundaries on cornelis/hfi2 (not upstream)', async () => {
    const count = async (u: EmuUnit) => {
      let crossing = 0;
      let total = 0;
      for (const id of u.info.engineIds) {
        for (const d of (await u.ring(id)).descriptors) {
          const addr = Number(d.addr);
          if (d.len === 0) continue;
          total++;
          // A piece that starts off a 256-byte boundary must end at one (or stay inside one block).
          if (addr % 256 !== 0 && Math.floor(addr / 256) !== Math.floor((addr + d.len - 1) / 256) && (addr + d.len) % 256 !== 0)
            crossing++;
        }
      }
      return { crossing, total };
    };
    const up = new EmuUnit({ seed: 4, workload: 'psm', engines: 2 });
    const jkr = new EmuUnit({ seed: 4, workload: 'psm', engines: 2, chip: 'jkr', driver: 'hfi2' });
    up.runUntilMs(5);
    jkr.runUntilMs(5);
    const a = await count(up);
    const b = await count(jkr);
    expect(a.total).toBeGreaterThan(0);
    expect(a.crossing).toBeGreaterThan(0);
    expect(b.total).toBeGreaterThan(0);
    expect(b.crossing).toBe(0);
  });

  it('the progress schedule fires at in flight ≥ descq_cnt/8 − 1 upstream and ≥ descq_cnt/8 on cornelis/hfi2', () => {
    for (const [driver, fires] of [
      ['upstream', 255],
      ['cornelis', 256],
      ['hfi2', 256],
    ] as const) {
      const u = quietUnit({ chip: 'wfr', driver });
      const e = u.engineAt(0);
      const rec = new Recorder();
      for (let i = 0; i < fires - 1; i++) expect(u.submit(0, rec.tx(txOf(1)))).toBe(0);
      expect((e.descqTail - e.descqHead) >>> 0).toBe(fires - 1);
      expect(e.progressSchedule(), `${driver} at ${fires - 1}`).toBe(false);
      expect(u.submit(0, rec.tx(txOf(1)))).toBe(0);
      expect(e.progressSchedule(), `${driver} at ${fires}`).toBe(true);
    }
  });
});

describe('an engine window 8-15', () => {
  it('a fault aimed at engine 8 stops engine 8 (never engine 0), and an engine outside the window is refused', async () => {
    const u = new EmuUnit({
      seed: 2,
      workload: 'qp',
      chip: 'jkr',
      driver: 'hfi2',
      firstEngine: 8,
      engines: 8,
      faults: ['stop-fetch@5:8'],
    });
    u.runUntilMs(5);
    u.runUntilMs(10);
    const window = [8, 9, 10, 11, 12, 13, 14, 15];
    const before = (await u.sample(window)).map((s) => s.csr?.hwHead);
    u.runUntilMs(15);
    const after = (await u.sample(window)).map((s) => s.csr?.hwHead);
    expect(after[0]).toBe(before[0]);
    expect(after.slice(1).some((h, i) => h !== before[i + 1])).toBe(true);
    expect(u.events(['fault']).map((r) => r.engine)).toEqual([8]);
    expect(u.engineAt(8).chip.stopFetch).toBe(true);
    expect(() => u.engineAt(3)).toThrow(/hfi2_0 has no engine 3: engines are 8-15/);
    expect(() => new EmuUnit({ chip: 'jkr', driver: 'hfi2', firstEngine: 8, engines: 8, faults: ['stop-fetch@5:3'] })).toThrow(
      /engine 3 does not exist \(the unit has engines 8-15\)/,
    );
  });

  it('the JKR BAR image is 128 MiB with engine 8 at 0x1A00000 + 0x2000·8 (TAIL at +0x20) and SEND_DMA_CFG_MEMORY', async () => {
    const u = new EmuUnit({ seed: 2, workload: 'qp', chip: 'jkr', driver: 'hfi2', firstEngine: 8, engines: 8 });
    u.runUntilMs(10);
    u.pause();
    const dir = tempDir();
    await writeSysroot(u, dir);
    closeSysroot(u, dir);
    const bar = join(dir, 'sys/bus/pci/devices/0000:05:00.0/resource0');
    expect(statSync(bar).size).toBe(128 * 1024 * 1024);
    expect(statSync(bar).blocks * 512).toBeLessThan(1 << 20);
    const fh = await open(bar, 'r');
    const q = async (off: number) => {
      const b = Buffer.alloc(8);
      await fh.read(b, 0, 8, off);
      return b.readBigUInt64LE();
    };
    try {
      const e8 = u.engineAt(8);
      const base = 0x1a00000 + 0x2000 * 8;
      expect(e8.chip.hwTail).toBeGreaterThan(0);
      expect(await q(base + 0x20)).toBe(BigInt(e8.chip.hwTail));
      expect(await q(base + 0x28)).toBe(BigInt(e8.chip.hwHead));
      expect(await q(base)).toBe(0x19n);
      expect(await q(base + 0x38)).toBe(32n); // PRIORITY_THLD = sdma_threshold
      expect(await q(0x1b00b00 + 8 * 8)).toBe(BigInt(e8.chip.memory));
      expect(await q(0x1b00018)).toBe(8n);
      expect(await q(0x1b00028)).toBe(401408n);
      // Nothing at engine 0's block: it is not the unit's.
      expect(await q(0x1a00000 + 0x20)).toBe(0n);
      // The WFR location of engine 8's TAIL holds nothing on JKR.
      expect(await q(0x1a00000 + 0x100 * 8 + 0x20)).toBe(0n);
    } finally {
      await fh.close();
    }
  });

  it("an engine error's dump in the hfi2 kernel log: hfi2_0 prefix, used = the real in-flight count, d0/d1 lines", async () => {
    const { u, dir } = await rendered({ chip: 'jkr', driver: 'hfi2', ports: 2, firstEngine: 8 }, ['engine-error:1@10:10'], 15);
    // /dev/kmsg records (continuation lines aside): dd_dev_err's priority 3, the tab escaped (msg_add_ext_text).
    const kmsg = readFileSync(join(dir, 'dev/kmsg'), 'utf8')
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith(' '));
    expect(kmsg.every((l) => l.startsWith('3,'))).toBe(true);
    const text = kmsg.map((l) => l.slice(l.indexOf(';') + 1));
    expect(text.every((l) => l.startsWith('hfi2 0000:05:00.0: hfi2_0: '))).toBe(true);
    const dump = text
      .map((l) => /SDMA \((\d+)\) descq_head (\d+), descq_tail (\d+), used (\d+), avail (\d+), FLE (\d)/.exec(l))
      .find((m) => m !== null);
    expect(dump).toBeDefined();
    const [eng, head, tail, used, avail] = (dump as RegExpExecArray).slice(1, 6).map(Number) as number[];
    expect(eng).toBe(10);
    expect(used).toBe(((tail as number) - (head as number) + 256) % 256);
    expect((used as number) + (avail as number)).toBe(255);
    expect(text.some((l) => /\[desc \d+\] SDMA desc\[\d+\]: .* d0:0x[0-9a-f]{16} d1:0x[0-9a-f]{16}$/.test(l))).toBe(true);
    expect(text.some((l) => /\[desc \d+\]\\x09aidx:\d+ amode:\d+ alen:\d+$/.test(l))).toBe(true);
    expect(u.info.name).toBe('hfi2_0');
  });

  it('an engine-error dump prints every descriptor head to tail: upstream three-line records, Cornelis one tag per dump', () => {
    const dump = (driver: DriverBuild) => {
      const u = new EmuUnit({ seed: 3, workload: 'line-rate', chip: 'wfr', driver, engines: 2, faults: ['engine-error:1@4:1'] });
      u.runUntilMs(5);
      return u.host.kernelLog.map((l) => l.slice(l.indexOf(': hfi1_0: ') + 10));
    };
    const up = dump('upstream');
    const head = up.findIndex((l) => /^SDMA \(1\) descq_head: \d+ descq_tail: \d+ freecnt: \d+ FLE \d$/.test(l));
    const [h, t] = (/descq_head: (\d+) descq_tail: (\d+)/.exec(up[head] ?? '') ?? []).slice(1).map(Number) as number[];
    const n = ((t as number) - (h as number) + 2048) % 2048;
    expect(n).toBeGreaterThan(16);
    const records = up
      .slice(head + 1)
      .filter((l) => /^SDMA sdmadesc\[\d+\]: flags:[I-][H-][F-][L-] addr:0x[0-9a-f]{16} gen:\d len:\d+ bytes$/.test(l));
    expect(records).toHaveLength(n);
    expect(up[head + 2]).toMatch(/^\tdesc0:0x[0-9a-f]{16} desc1 0x[0-9a-f]{16}$/);
    expect(up.some((l) => /^\taidx: \d+ amode: \d+ alen: \d+$/.test(l))).toBe(true);

    const cn = dump('cornelis');
    const hdr = cn.findIndex((l) =>
      /^SDMA \(1\) descq_head \d+, descq_tail \d+, used \d+, avail \d+, FLE \d, descriptor print prefix "\[desc 0\]"$/.test(l),
    );
    expect(hdr).toBeGreaterThanOrEqual(0);
    const used = Number(/used (\d+)/.exec(cn[hdr] ?? '')?.[1]);
    const tagged = cn.slice(hdr + 1).filter((l) => l.startsWith('[desc '));
    expect(tagged.filter((l) => / SDMA desc\[\d+\]: /.test(l))).toHaveLength(used);
    expect(new Set(tagged.map((l) => /^\[desc (\d+)\]/.exec(l)?.[1]))).toEqual(new Set(['0']));
  });

  it('a lost wake-up opened on engine 9 of the window is reported on engine 9, waiter and invariant alike', async () => {
    const u = new EmuUnit({
      seed: 1,
      workload: 'mixed',
      chip: 'jkr',
      driver: 'hfi2',
      firstEngine: 8,
      engines: 8,
      faults: ['lost-wakeup:qp@5:9'],
    });
    u.runUntilMs(30);
    expect(u.totals().lostWakeups).toBe(1);
    expect(invariantViolations(u)).toEqual([
      // The need is the txreq's num_desc (iowait_get_all_desc), without its pads.
      expect.stringMatching(/^lost wake-up on engine 9: QP 0x[0-9a-f]+ sleeps .* needing \d+ descriptor/),
    ]);
    const qps = (await u.waiters()).waiters.filter((w) => w.kind === 'qp');
    expect(qps.map((w) => w.engine)).toEqual([9]);
  });

  it('the Cornelis hfi1 and hfi2 log nothing for a correctable-only engine error; upstream logs it', () => {
    const logged = (driver: DriverBuild) => {
      const chip = driver === 'upstream' ? 'wfr' : 'jkr';
      const firstEngine = driver === 'upstream' ? 0 : 8;
      const u = new EmuUnit({
        seed: 1,
        workload: 'idle',
        chip,
        driver,
        firstEngine,
        engines: 16 - firstEngine,
        faults: ['engine-error:19@5:9'],
      });
      u.runUntilMs(10);
      expect(u.events(['engineError']).filter((r) => r.engine === 9 && r.a === 0x80000)).toHaveLength(1);
      return u.host.kernelLog.filter((l) => l.includes('SDMA (9) engine error: 0x80000'));
    };
    expect(logged('hfi2')).toEqual([]);
    expect(logged('cornelis')).toEqual([]);
    expect(logged('upstream')).toHaveLength(1);
  });

  it('a PSM writer of an hfi2 unit holds anon_inode:hfi2-sdma and blocks in hfi2_user_sdma_process_request', async () => {
    const u = new EmuUnit({ seed: 1, workload: 'psm:load=4', chip: 'jkr', driver: 'hfi2', firstEngine: 8, engines: 8 });
    const dir = tempDir();
    let blocked = '';
    for (let t = 1; t <= 40 && blocked === ''; t++) {
      u.runUntilMs(t);
      await writeSysroot(u, dir);
      for (const pid of readdirSync(join(dir, 'proc')).filter((n) => /^\d+$/.test(n))) {
        expect(readlinkSync(join(dir, 'proc', pid, 'fd/11'))).toBe('anon_inode:hfi2-sdma');
        if (readFileSync(join(dir, 'proc', pid, 'wchan'), 'utf8') !== '0') blocked = pid;
      }
    }
    closeSysroot(u, dir);
    expect(blocked).not.toBe('');
    expect(readFileSync(join(dir, 'proc', blocked, 'wchan'), 'utf8')).toBe('hfi2_user_sdma_process_request');
    expect(readFileSync(join(dir, 'proc', blocked, 'stack'), 'utf8')).toMatch(/^\[<0>\] hfi2_user_sdma_process_request\+/);
  });
});

describe('options', () => {
  const base = { seed: 1, engines: undefined, descqCnt: undefined, workload: undefined, atMs: undefined, fault: [] };
  const usage = (f: () => unknown, re: RegExp) => {
    try {
      f();
    } catch (err) {
      expect(err).toBeInstanceOf(Hfi1SdmaError);
      expect((err as Hfi1SdmaError).code).toBe('E_USAGE');
      expect((err as Error).message).toMatch(re);
      return;
    }
    throw new Error('expected a usage error');
  };

  it('refuse impossible combinations, naming them', () => {
    usage(() => emuUnitFromOptions({ ...base, chip: 'jkr', driver: 'upstream' }), /upstream hfi1 does not drive the CN5000/);
    usage(() => emuUnitFromOptions({ ...base, chip: 'jkr' }), /--chip jkr --driver upstream/);
    usage(() => emuUnitFromOptions({ ...base, driver: 'hfi2', firstEngine: 12, engines: 8 }), /window 12-19 does not fit/);
    usage(
      () => emuUnitFromOptions({ ...base, driver: 'upstream', firstEngine: 8, engines: 8 }),
      /upstream hfi1 numbers its engines from 0/,
    );
    usage(() => emuUnitFromOptions({ ...base, driver: 'cornelis', ports: 2 }), /--ports 2 --chip wfr/);
    usage(() => emuUnitFromOptions({ ...base, ports: 3 }), /--ports must be 1 or 2/);
    usage(() => emuUnitFromOptions({ ...base, chip: 'xyz' as ChipKind }), /--chip must be wfr or jkr/);
    usage(
      () => emuUnitFromOptions({ ...base, chip: 'jkr', driver: 'hfi2', firstEngine: 8, engines: 8, fault: ['stop-fetch@5:2'] }),
      /the unit has engines 8-15/,
    );
  });

  it('build the unit the options name: hfi2_0 on JKR with engines 8-15; a single number N means engines 0..N−1', () => {
    const u = emuUnitFromOptions({
      ...base,
      chip: 'jkr',
      driver: 'hfi2',
      ports: 2,
      firstEngine: 8,
      engines: 8,
      fault: ['stop-fetch@5:8'],
    });
    expect(u.info.name).toBe('hfi2_0');
    expect(u.info.engineIds).toEqual([8, 9, 10, 11, 12, 13, 14, 15]);
    expect(u.info.flavour.evidence).toEqual(['the emulator (--chip jkr --driver hfi2 --ports 2)']);
    expect(u.faults.map((f) => f.engine)).toEqual([8]);
    const v = emuUnitFromOptions({ ...base, engines: 4 });
    expect(v.info.engineIds).toEqual([0, 1, 2, 3]);
    expect(v.info.flavour).toMatchObject({ module: 'hfi1', chip: 'wfr', driver: 'upstream', ports: 1 });
  });
});

describe('the port of each chip', () => {
  it('a CN5000 port shows 400 Gb/s, an Omni-Path 100 port 100 Gb/s', async () => {
    const jkr = new EmuUnit({ seed: 2, engines: 1, chip: 'jkr', driver: 'hfi2' });
    const wfr = new EmuUnit({ seed: 2, engines: 1 });
    expect((await jkr.link()).rate).toBe('400 Gb/sec (4X NDR)');
    expect((await wfr.link()).rate).toBe('100 Gb/sec (4X EDR)');
  });
});
