// `doctor`'s named checks of the known breakage, each PASS, WARN, FAIL or SKIP with the evidence read and the fix:
// units found, sources readable, registers that answer (all-ones is a gone device), the kernel release against the
// upstream SDMA fixes that matter to a read-only observer, vanilla kernels from 6.16 with the in-tree hfi1 (PSM2/OPX
// cannot map the device), cap_mask without SDMA, PCIe AER counts on the adapter, and SDMA interrupts moved away from
// the CPU the driver chose.
import { join } from 'node:path';
import type { EngineSample, UnitInfo } from '../backend.js';
import { type HwFs, readTextOrNull, realFs } from '../hw/fsio.js';
import { goneAction } from '../monitor/findings.js';

/** One check's answer. */
export interface DoctorCheck {
  name: string;
  status: 'PASS' | 'WARN' | 'FAIL' | 'SKIP';
  /** What was read, one line each. */
  evidence: string[];
  /** What to do, or null when nothing is to be done. */
  fix: string | null;
}

/** An upstream fix of the SDMA code that an observer of these engines should know is there, by release. */
export interface KernelFix {
  title: string;
  /** The first upstream release that has it. */
  since: [number, number];
  /** Why it matters here. */
  why: string;
}

/** The upstream fixes that matter to what this tool reports (first release as far as the sources say). */
export const KERNEL_FIXES: readonly KernelFix[] = [
  {
    title: 'IB/hfi1: Close PSM sdma_progress sleep window',
    since: [5, 2],
    why: 'without it a PSM writer can hang for good in the window the lost wake-up findings describe',
  },
  {
    title: 'IB/hfi1: Wakeup QPs orphaned on wait list after flush',
    since: [5, 2],
    why: 'without it QPs waiting on an engine that was flushed (a link down) stay queued after it runs again',
  },
  {
    title: 'IB/hfi1: Ensure pq is not left on waitlist',
    since: [5, 7],
    why: 'without it a PSM queue that timed out stays on the wait list (use after free)',
  },
  {
    title: 'IB/hfi1: Fix another case where pq is left on waitlist',
    since: [5, 8],
    why: 'as above, on another path',
  },
  {
    title: 'IB/hfi1: Fix bugs with non-PAGE_SIZE-end multi-iovec user SDMA requests (CVE-2023-52474)',
    since: [6, 4],
    why: 'a crafted PSM request could corrupt memory',
  },
  {
    title: 'IB/hfi1: Fix sdma.h tx->num_descs off-by-one error (CVE-2024-26766)',
    since: [6, 8],
    why: 'a request of the largest descriptor count could write past its array',
  },
];

/** `5.14.0-427.el9` → [5, 14]; null when not a release. */
export function releaseOf(text: string | null): [number, number] | null {
  const m = /^(\d+)\.(\d+)/.exec(text?.trim() ?? '');
  return m ? [Number(m[1]), Number(m[2])] : null;
}

const before = (a: [number, number], b: [number, number]) => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1]);

/** Whether a release looks like a distribution's (it then carries backports its number does not show). */
function distribution(release: string): boolean {
  return /\.(el\d|fc\d|amzn|uek|suse|sles)|-(generic|azure|aws|gcp|oracle)|\+deb|ubuntu|-default$/i.test(release);
}

/** The kernel release against the upstream fixes. */
export function kernelFixesCheck(release: string | null): DoctorCheck {
  const r = releaseOf(release);
  if (!r || release === null)
    return { name: 'kernel-fixes', status: 'SKIP', evidence: ['the kernel release is not readable here'], fix: null };
  const missing = KERNEL_FIXES.filter((f) => before(r, f.since));
  const evidence = [`kernel ${release}`];
  if (missing.length === 0) {
    evidence.push(`upstream ${r.join('.')} has every fix this tool knows of (${KERNEL_FIXES.length})`);
    return { name: 'kernel-fixes', status: 'PASS', evidence, fix: null };
  }
  for (const f of missing) evidence.push(`upstream before ${f.since.join('.')} lacks "${f.title}": ${f.why}`);
  const dist = distribution(release) ? ' This is a distribution kernel: its number says little, it carries backports.' : '';
  return {
    name: 'kernel-fixes',
    status: 'WARN',
    evidence,
    fix: `distributions backport: check your kernel's changelog for each title (rpm -q --changelog kernel | grep -i hfi1, or apt changelog linux-image-$(uname -r)).${dist}`,
  };
}

/** Vanilla 6.16 and later with the in-tree hfi1: PSM2/OPX fail to map the device. */
export function mmapCheck(release: string | null, units: readonly UnitInfo[]): DoctorCheck {
  const r = releaseOf(release);
  const upstream = units.filter((u) => u.flavour.module === 'hfi1' && u.flavour.driver === 'upstream');
  if (!r || release === null || upstream.length === 0) {
    return {
      name: 'psm-mmap',
      status: 'SKIP',
      evidence: [upstream.length === 0 ? 'no unit driven by the in-tree hfi1' : 'the kernel release is not readable here'],
      fix: null,
    };
  }
  if (before(r, [6, 16]) || distribution(release)) {
    return { name: 'psm-mmap', status: 'PASS', evidence: [`kernel ${release} with the in-tree hfi1`], fix: null };
  }
  return {
    name: 'psm-mmap',
    status: 'WARN',
    evidence: [
      `kernel ${release} (6.16 or later, no distribution suffix) with the in-tree hfi1 on ${upstream.map((u) => u.name).join(', ')}`,
      'PSM2 and OPX fail to map the device on vanilla 6.16 and later (opa-psm2 issue 74: mmap64 fails)',
    ],
    fix: 'run a distribution kernel, or the Cornelis driver, for PSM2/OPX jobs; verbs traffic is not affected',
  };
}

/** cap_mask without the SDMA bit (HFI1_CAP_SDMA, bit 1): no engine is used. */
export async function capMaskCheck(sysroot: string, units: readonly UnitInfo[], fs: HwFs = realFs): Promise<DoctorCheck> {
  const modules = [...new Set(units.map((u) => u.flavour.module))];
  const evidence: string[] = [];
  let off = false;
  for (const m of modules) {
    const file = join(sysroot, 'sys/module', m, 'parameters/cap_mask');
    const text = await readTextOrNull(fs, file, 64).catch(() => null);
    const v = text !== null && /^0x[0-9a-f]+\s*$/i.test(text) ? BigInt(text.trim()) : null;
    if (v === null) continue;
    const sdma = (v & 0x2n) !== 0n;
    evidence.push(`${file}: ${text?.trim()} (SDMA bit ${sdma ? 'set' : 'clear'})`);
    off ||= !sdma;
  }
  if (evidence.length === 0)
    return { name: 'cap-mask', status: 'SKIP', evidence: ['no cap_mask parameter is readable here'], fix: null };
  if (!off) return { name: 'cap-mask', status: 'PASS', evidence, fix: null };
  return {
    name: 'cap-mask',
    status: 'FAIL',
    evidence: [...evidence, 'SDMA is off: every send goes by PIO and no engine is used, so idle engines are expected'],
    fix: 'load the driver with the SDMA capability (the default cap_mask has it)',
  };
}

/** The TOTAL_ERR_* count of an aer_dev_* file, or null. */
function aerTotal(text: string | null): number | null {
  const m = /^TOTAL_ERR_\w+\s+(\d+)\s*$/m.exec(text ?? '');
  return m ? Number(m[1]) : null;
}

/** PCIe AER counts on each adapter: correctable (WARN past 0), non-fatal (WARN), fatal (FAIL). */
export async function aerCheck(sysroot: string, units: readonly UnitInfo[], fs: HwFs = realFs): Promise<DoctorCheck> {
  const evidence: string[] = [];
  let status: DoctorCheck['status'] = 'PASS';
  for (const u of units) {
    if (!u.pci) continue;
    const dir = join(sysroot, 'sys/bus/pci/devices', u.pci);
    const counts: Record<string, number | null> = {};
    for (const kind of ['correctable', 'nonfatal', 'fatal']) {
      counts[kind] = aerTotal(await readTextOrNull(fs, join(dir, `aer_dev_${kind}`), 4096).catch(() => null));
    }
    if (Object.values(counts).every((v) => v === null)) continue;
    evidence.push(
      `${u.name} (${u.pci}): AER correctable ${counts.correctable ?? '?'}, non-fatal ${counts.nonfatal ?? '?'}, fatal ${counts.fatal ?? '?'}`,
    );
    if ((counts.fatal ?? 0) > 0) status = 'FAIL';
    else if (((counts.nonfatal ?? 0) > 0 || (counts.correctable ?? 0) > 0) && status === 'PASS') status = 'WARN';
  }
  if (evidence.length === 0)
    return {
      name: 'pcie-aer',
      status: 'SKIP',
      evidence: ['no aer_dev_* counts are readable here (AER off, or not reported)'],
      fix: null,
    };
  const fix =
    status === 'PASS'
      ? null
      : "PCIe errors on the adapter's link: reseat the card or change the slot; 'lspci -vvv' shows the link and 'dmesg | grep -i aer' each error";
  return { name: 'pcie-aer', status, evidence, fix };
}

/** Each engine's interrupt (hfi1_N sdmaE in /proc/interrupts) against its IRQ CPU (sdes CPU): moved by irqbalance? */
export async function irqAffinityCheck(
  sysroot: string,
  units: readonly UnitInfo[],
  engineCpu: ReadonlyMap<string, number | null>,
  fs: HwFs = realFs,
): Promise<DoctorCheck> {
  const text = await readTextOrNull(fs, join(sysroot, 'proc/interrupts'), 64 << 20).catch(() => null);
  if (text === null)
    return { name: 'irq-affinity', status: 'SKIP', evidence: ['/proc/interrupts is not readable here'], fix: null };
  const names = new Set(units.map((u) => u.name));
  const evidence: string[] = [];
  const moved: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*(\d+):.*\s(hfi[12]_\d+) sdma(\d+)\s*$/.exec(line);
    if (!m || !names.has(m[2] as string)) continue;
    const key = `${m[2]}/${m[3]}`;
    const want = engineCpu.get(key);
    if (want === undefined || want === null) continue;
    const list = await readTextOrNull(fs, join(sysroot, 'proc/irq', m[1] as string, 'smp_affinity_list'), 4096).catch(() => null);
    if (list === null) continue;
    const cpus = cpuSet(list.trim());
    if (cpus !== null && !cpus.has(want)) moved.push(`${key}: IRQ ${m[1]} on CPUs ${list.trim()}, the driver's CPU is ${want}`);
    evidence.push(`${key}: IRQ ${m[1]} affinity ${list.trim()}`);
  }
  if (evidence.length === 0)
    return { name: 'irq-affinity', status: 'SKIP', evidence: ['no SDMA interrupt affinity is readable here'], fix: null };
  if (moved.length === 0)
    return {
      name: 'irq-affinity',
      status: 'PASS',
      evidence: [`${evidence.length} SDMA interrupts on the CPU the driver chose`],
      fix: null,
    };
  return {
    name: 'irq-affinity',
    status: 'WARN',
    evidence: moved,
    fix: 'irqbalance (or someone) moved SDMA interrupts away from the CPUs the driver mapped them to (sdma_cpu_list): ban the hfi1 vectors from irqbalance (IRQBALANCE_BANNED_INTERRUPTS, or --banirq) and reload the driver',
  };
}

/** `0-3,8` → {0,1,2,3,8}; null when it does not parse. */
function cpuSet(list: string): Set<number> | null {
  const out = new Set<number>();
  for (const part of list.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) return null;
    const lo = Number(m[1]);
    const hi = m[2] === undefined ? lo : Number(m[2]);
    if (hi < lo || hi - lo > 4096) return null;
    for (let c = lo; c <= hi; c++) out.add(c);
  }
  return out;
}

/**
 * The registers of every unit answer: a device that fell off the PCI bus (or was reset) reads all-ones in every
 * register (the BAR0 map, chip_registers.h), while its files stay readable. Judged from one sample of each unit, as
 * every command judges a gone device; SKIP where no unit could be sampled (no sdes and no BAR here).
 */
export function registersCheck(units: readonly UnitInfo[], samples: ReadonlyMap<string, readonly EngineSample[]>): DoctorCheck {
  const gone: string[] = [];
  const fine: string[] = [];
  let fix: string | null = null;
  for (const u of units) {
    const got = samples.get(u.name);
    if (!got || got.length === 0) continue;
    const n = got.filter((s) => s.gone).length;
    if (n === 0) fine.push(`${u.name}: the registers answer (${got.length} engines sampled)`);
    else {
      gone.push(
        `${u.name}${u.pci ? ` (${u.pci})` : ''}: registers read all-ones on ${n} of ${got.length} engines: the device is gone (the adapter was reset or fell off the PCI bus)`,
      );
      fix ??= goneAction(u);
    }
  }
  if (gone.length > 0) return { name: 'registers', status: 'FAIL', evidence: [...gone, ...fine], fix };
  if (fine.length === 0)
    return { name: 'registers', status: 'SKIP', evidence: ['no unit could be sampled here (no sdes and no BAR)'], fix: null };
  return { name: 'registers', status: 'PASS', evidence: fine, fix: null };
}
