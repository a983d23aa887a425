// `doctor`: which hfi1 sources are readable here and, for each that is not, why and the fix; then the named checks
// of the known breakage (doctor-checks.ts), each PASS, WARN, FAIL or SKIP with its evidence. Exit 1 when one fails
// (no unit found is one), 0 otherwise.

import { join } from 'node:path';
import type { EngineSample, SourceName, SourceStatus, UnitInfo } from '../backend.js';
import { hwFsFor, readTextOrNull } from '../hw/fsio.js';
import { type HostFacts, hostFacts } from '../hw/host.js';
import { readHostName } from '../hw/host-name.js';
import { type DescqCntCheck, findHfiPciDevices, inspectUnits, unknownChipUnits } from '../hw/index.js';
import { sysrootOf } from './backend-select.js';
import type { CliContext, CommandSpec } from './context.js';
import {
  aerCheck,
  capMaskCheck,
  type DoctorCheck,
  irqAffinityCheck,
  kernelFixesCheck,
  mmapCheck,
  registersCheck,
} from './doctor-checks.js';
import { type FlavourJson, flavourJson, flavourPhrase } from './flavour.js';
import { settingsLine } from './port-view.js';
import { documentStamp } from './stamp.js';

/** `doctor --json`. */
export interface DoctorJson {
  sysroot: string;
  host: HostFacts;
  /** Omni-Path HFIs on the PCI bus without an hfi1 unit (driver not bound). */
  unboundPci: string[];
  units: (UnitInfo & FlavourJson & { descqCntCheck: DescqCntCheck })[];
  /** Advice: units left out (a PCI id of no known chip), and what to do when nothing is found. */
  advice: string[];
  /** The named checks, in order. */
  checks: DoctorCheck[];
  /** How many checks gave each status. */
  summary: Record<DoctorCheck['status'], number>;
}

const LABEL: Record<SourceName, string> = {
  sdes: 'debugfs sdes',
  counters: 'debugfs counters',
  hwCounters: 'sysfs hw_counters',
  interrupts: '/proc/interrupts',
  bar: 'BAR (resource0)',
  sysfs: 'sysfs sdma<N>',
  model: 'emulator model',
  qpStats: 'debugfs qp_stats (QP waiters)',
  procPsm: '/proc (PSM writers)',
  trace: 'trace events (hfi1_tx/hfi2_tx)',
  portCounters: 'port counters (debugfs, sysfs)',
  kmsg: '/dev/kmsg (IPoIB timeouts)',
};

/** Gather everything doctor reports. */
export async function doctorReport(sysroot: string): Promise<DoctorJson> {
  const units = await inspectUnits(sysroot);
  const bound = new Set(units.map((u) => u.info.pci));
  const unboundPci = (await findHfiPciDevices(sysroot)).filter((bdf) => !bound.has(bdf));
  const advice: string[] = [];
  const hex4 = (n: number) => n.toString(16).padStart(4, '0');
  for (const u of await unknownChipUnits(sysroot)) {
    advice.push(
      `${u.name} is left out: ${u.vendorFile} and device read ${hex4(u.id.vendor)}:${hex4(u.id.device)}, no chip this program knows (8086:24f0, 8086:24f1, 434e:0001); if those files are garbled, check the tree`,
    );
  }
  if (units.length === 0) {
    const where = sysroot === '/' ? '/sys/class/infiniband' : `${sysroot}/sys/class/infiniband`;
    advice.push(`no hfi1 or hfi2 unit found under ${where}`);
    if (unboundPci.length > 0) {
      advice.push(
        `an Omni-Path HFI is on the PCI bus (${unboundPci.join(', ')}) but the hfi1 driver is not bound: load it with 'modprobe hfi1' and check dmesg`,
      );
    }
    advice.push("the emulator needs no hardware: try 'hfi1-sdma --backend emu engines'");
  }
  const infos = units.map((u) => u.info);
  const checks = await runChecks(sysroot, infos, unboundPci);
  const summary = { PASS: 0, WARN: 0, FAIL: 0, SKIP: 0 };
  for (const c of checks) summary[c.status] += 1;
  return {
    sysroot,
    host: await hostFacts(sysroot),
    unboundPci,
    units: units.map((u) => ({ ...u.info, ...flavourJson(u.info), descqCntCheck: u.descqCnt })),
    advice,
    checks,
    summary,
  };
}

/** One sample of every unit that can be sampled here: each engine's IRQ CPU (`hfi1_0/3` → the sdes CPU) and its registers. */
async function sampleUnits(sysroot: string): Promise<{ cpus: Map<string, number | null>; samples: Map<string, EngineSample[]> }> {
  const cpus = new Map<string, number | null>();
  const samples = new Map<string, EngineSample[]>();
  try {
    const { openHwBackend } = await import('../hw/index.js');
    const b = await openHwBackend({ sysroot });
    try {
      for (const info of await b.units()) {
        try {
          const got = await (await b.unit(info.name)).sample();
          samples.set(info.name, got);
          for (const s of got) cpus.set(`${info.name}/${s.engine}`, s.cpu);
        } catch {
          // a unit that cannot be sampled has no CPUs to compare and no registers to check
        }
      }
    } finally {
      await b.close();
    }
  } catch {
    // no unit readable here
  }
  return { cpus, samples };
}

/** The named checks. */
async function runChecks(sysroot: string, units: readonly UnitInfo[], unboundPci: readonly string[]): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  if (units.length === 0) {
    checks.push({
      name: 'units',
      status: 'FAIL',
      evidence: [
        `no hfi1 or hfi2 unit under ${join(sysroot, 'sys/class/infiniband')}`,
        ...unboundPci.map((p) => `an Omni-Path HFI at ${p} has no driver bound`),
      ],
      fix: unboundPci.length
        ? "load the driver ('modprobe hfi1', or hfi2) and check dmesg"
        : 'check that the adapter is seated and the driver installed',
    });
  } else {
    checks.push({
      name: 'units',
      status: 'PASS',
      evidence: units.map((u) => `${u.name} (${u.pci || 'PCI address unknown'}): ${flavourPhrase(u)}`),
      fix: null,
    });
  }
  for (const u of units) {
    // Trace events are read only when someone enabled them: not having them is no fault.
    const missing = u.sources.filter((x) => !x.readable && x.source !== 'trace');
    checks.push({
      name: `sources:${u.name}`,
      status: missing.length === 0 ? 'PASS' : 'WARN',
      evidence:
        missing.length === 0
          ? ['every source is readable']
          : missing.map((x) => `${LABEL[x.source] ?? x.source}: ${x.reason ?? 'not readable'}`),
      fix: missing.find((x) => x.fix)?.fix ?? (missing.length ? 'run as root, with debugfs mounted' : null),
    });
  }
  const sampled = await sampleUnits(sysroot);
  if (units.length > 0) checks.push(registersCheck(units, sampled.samples));
  // Under a sysroot every read stays inside it, as the units' own.
  const fs = hwFsFor(sysroot);
  const release = await readTextOrNull(fs, join(sysroot, 'proc/sys/kernel/osrelease'), 4096).catch(() => null);
  const r = release?.trim() || null;
  checks.push(
    kernelFixesCheck(r),
    mmapCheck(r, units),
    await capMaskCheck(sysroot, units, fs),
    await aerCheck(sysroot, units, fs),
  );
  checks.push(await irqAffinityCheck(sysroot, units, sampled.cpus, fs));
  return checks;
}

function yesNo(v: boolean | null, yes: string, no: string): string {
  return v === null ? 'unknown' : v ? yes : no;
}

/** The width of the source column: the longest label. */
const LABEL_WIDTH = Math.max(...Object.values(LABEL).map((l) => l.length));

function sourceLines(s: SourceStatus, ok: (t: string) => string, bad: (t: string) => string): string[] {
  const name = (LABEL[s.source] ?? s.source).padEnd(LABEL_WIDTH);
  if (s.readable) return [`  ${name}  ${ok('readable')}      ${s.path ?? ''}`];
  const lines = [`  ${name}  ${bad('not readable')}  ${s.reason ?? ''}`];
  if (s.path) lines.push(`  ${''.padEnd(LABEL_WIDTH)}    path: ${s.path}`);
  if (s.fix) lines.push(`  ${''.padEnd(LABEL_WIDTH)}    fix:  ${s.fix}`);
  return lines;
}

function render(r: DoctorJson, ctx: CliContext): string {
  const ok = (t: string) => ctx.paint('green', t);
  const bad = (t: string) => ctx.paint('yellow', t);
  const out: string[] = [];
  out.push(`sysroot           ${r.sysroot}`);
  out.push(`running as root   ${yesNo(r.host.root, 'yes', 'no (debugfs and resource0 need root)')}`);
  out.push(`debugfs mounted   ${yesNo(r.host.debugfsMounted, 'yes', 'no (mount -t debugfs none /sys/kernel/debug)')}`);
  out.push(`kernel lockdown   ${r.host.lockdown ?? 'unknown'}`);
  out.push(`iomem=relaxed     ${yesNo(r.host.iomemRelaxed, 'yes', 'no')}`);
  for (const u of r.units) {
    const c = u.descqCntCheck;
    const check = c.allOnes
      ? '; LEN_GEN reads all-ones (the device is gone)'
      : c.agree === null
        ? ''
        : c.agree
          ? '; LEN_GEN agrees'
          : `; LEN_GEN says ${c.fromLenGen}`;
    out.push('');
    out.push(`${u.name} (${u.pci || 'PCI address unknown'}): ${u.engines} engines, ring ${u.descqCnt} descriptors${check}`);
    out.push(`  ${u.flavour.module}  ${flavourPhrase(u)}`);
    for (const line of u.flavour.evidence) out.push(`  evidence: ${line}`);
    const settings = settingsLine(u.settings);
    if (settings) out.push(settings.trimEnd());
    for (const line of u.settings?.evidence ?? []) out.push(`  setting:  ${line}`);
    for (const s of u.sources) out.push(...sourceLines(s, ok, bad));
    const missing = u.sources.filter((s) => !s.readable).map((s) => LABEL[s.source] ?? s.source);
    if (!u.sources.some((s) => s.source === 'sdes' && s.readable)) {
      out.push('  without debugfs sdes: no state, software head/tail or ring; samples show what the other sources give');
    } else if (missing.length === 0) out.push('  every source is readable');
  }
  if (r.advice.length > 0) out.push('', ...r.advice);
  out.push('', 'checks:');
  const mark = (st: DoctorCheck['status']) =>
    st === 'PASS' ? ok('PASS') : st === 'FAIL' ? ctx.paint(['bold', 'red'], 'FAIL') : st === 'WARN' ? bad('WARN') : 'SKIP';
  for (const c of r.checks) {
    out.push(`  ${mark(c.status)}  ${c.name}`);
    for (const e of c.evidence) out.push(`        ${e}`);
    if (c.fix) out.push(`        fix: ${c.fix}`);
  }
  const sm = r.summary;
  out.push('', `${sm.PASS} passed, ${sm.WARN} warned, ${sm.FAIL} failed, ${sm.SKIP} skipped`);
  return `${out.join('\n')}\n`;
}

export const doctorCommand: CommandSpec = {
  command: 'doctor',
  describe: 'which sources are readable here, and for each that is not, why and what to do',
  builder: (y) =>
    y.epilogue(
      'Exit 1 when a check fails (no unit found is one), 0 otherwise; --json gives every check with its evidence and fix.',
    ),
  async run(_args, ctx: CliContext) {
    const sysroot = sysrootOf(ctx.global);
    const r = await doctorReport(sysroot);
    if (ctx.global.json) {
      // doctor's `host` holds the host's facts: the stamp's host name goes in it, as `name`.
      const { host, time, toolVersion } = documentStamp(null, ctx);
      const name = sysroot === '/' ? host : await readHostName(hwFsFor(sysroot), sysroot);
      ctx.io.stdout(`${JSON.stringify({ time, toolVersion, ...r, host: { name, ...r.host } }, null, 2)}\n`);
    } else ctx.io.stdout(render(r, ctx));
    return r.summary.FAIL > 0 ? 1 : 0;
  },
};
