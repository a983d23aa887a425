// doctor's named checks on crafted trees: the kernel release against the upstream SDMA fixes, vanilla 6.16 and later
// with the in-tree hfi1, cap_mask without SDMA, PCIe AER counts, an SDMA interrupt moved off its CPU; no unit fails
// (exit 1); every check gives its evidence and a fix where there is one.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { kernelFixesCheck, mmapCheck, releaseOf } from '../../src/cli/doctor-checks.js';
import { runCli } from '../support/cli.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('doctor-checks-');

async function tree(): Promise<string> {
  const root = tmp();
  const w = await runCli(['emu', 'write', '--sysroot', root, '--engines', '2', '--at-ms', '10']);
  expect(w.code, w.stderr).toBe(0);
  return root;
}

type Check = { name: string; status: string; evidence: string[]; fix: string | null };
async function checks(root: string): Promise<{ code: number; checks: Check[] }> {
  const r = await runCli(['--sysroot', root, '--json', 'doctor']);
  return { code: r.code, checks: JSON.parse(r.stdout).checks };
}
const check = (cs: Check[], name: string) => cs.find((c) => c.name === name) as Check;

describe('doctor checks', () => {
  it('names the upstream fixes a kernel release lacks, and says distributions backport', () => {
    expect(releaseOf('5.14.0-427.13.1.el9_4.x86_64')).toEqual([5, 14]);
    const old = kernelFixesCheck('4.18.0-553.el8_10.x86_64');
    expect(old.status).toBe('WARN');
    expect(old.evidence.join('\n')).toMatch(/upstream before 5\.2 lacks "IB\/hfi1: Close PSM sdma_progress sleep window"/);
    expect(old.fix).toMatch(/distributions backport: check your kernel's changelog/);
    expect(old.fix).toMatch(/distribution kernel/);
    expect(kernelFixesCheck('6.8.0').status).toBe('PASS');
    expect(kernelFixesCheck(null).status).toBe('SKIP');
  });

  it('warns of vanilla 6.16 and later with the in-tree hfi1 (PSM2/OPX cannot map the device)', () => {
    const unit = { name: 'hfi1_0', flavour: { module: 'hfi1', driver: 'upstream' } } as never;
    expect(mmapCheck('6.16.2', [unit]).status).toBe('WARN');
    expect(mmapCheck('6.16.2', [unit]).evidence.join(' ')).toMatch(/opa-psm2 issue 74/);
    expect(mmapCheck('6.12.0-55.27.1.el10_0.x86_64', [unit]).status).toBe('PASS');
    expect(mmapCheck('6.16.2', []).status).toBe('SKIP');
  });

  it('on an emulated host: units and cap_mask pass; a cap_mask without SDMA fails, and so does doctor (exit 1)', async () => {
    const root = await tree();
    const ok = await checks(root);
    expect(ok.code).toBe(0);
    expect(check(ok.checks, 'units').status).toBe('PASS');
    expect(check(ok.checks, 'cap-mask').status).toBe('PASS');
    writeFileSync(join(root, 'sys/module/hfi1/parameters/cap_mask'), '0x4\n');
    const off = await checks(root);
    expect(off.code).toBe(1);
    expect(check(off.checks, 'cap-mask')).toMatchObject({ status: 'FAIL', fix: expect.stringMatching(/SDMA capability/) });
  });

  it('reads the adapter’s AER counts: correctable is a warning, fatal a failure', async () => {
    const root = await tree();
    const dev = join(root, 'sys/bus/pci/devices/0000:05:00.0');
    const aer = (cor: number, fatal: number) => {
      writeFileSync(join(dev, 'aer_dev_correctable'), `RxErr ${cor}\nBadTLP 0\nTOTAL_ERR_COR ${cor}\n`);
      writeFileSync(join(dev, 'aer_dev_nonfatal'), 'Undefined 0\nTOTAL_ERR_NONFATAL 0\n');
      writeFileSync(join(dev, 'aer_dev_fatal'), `Undefined 0\nTOTAL_ERR_FATAL ${fatal}\n`);
    };
    aer(0, 0);
    expect(check((await checks(root)).checks, 'pcie-aer').status).toBe('PASS');
    aer(12, 0);
    const warn = check((await checks(root)).checks, 'pcie-aer');
    expect(warn.status).toBe('WARN');
    expect(warn.evidence[0]).toMatch(/AER correctable 12, non-fatal 0, fatal 0/);
    aer(12, 1);
    expect(check((await checks(root)).checks, 'pcie-aer').status).toBe('FAIL');
  });

  it('says when an SDMA interrupt was moved off the CPU the driver chose', async () => {
    const root = await tree();
    const irqs = readInterrupts(root);
    for (const [irq, engine] of irqs) {
      mkdirSync(join(root, 'proc/irq', irq), { recursive: true });
      // The emulator puts engine E's interrupt on CPU E; move engine 1's to CPUs 6-7.
      writeFileSync(join(root, 'proc/irq', irq, 'smp_affinity_list'), engine === 1 ? '6-7\n' : `${engine}\n`);
    }
    const c = check((await checks(root)).checks, 'irq-affinity');
    expect(c.status).toBe('WARN');
    expect(c.evidence).toEqual([expect.stringMatching(/^hfi1_0\/1: IRQ \d+ on CPUs 6-7, the driver's CPU is 1$/)]);
    expect(c.fix).toMatch(/irqbalance/);
  });

  it('with no unit, the units check fails and doctor exits 1', async () => {
    const r = await runCli(['--sysroot', tmp(), 'doctor']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/FAIL {2}units/);
  });
});

/** The SDMA vectors of the rendered /proc/interrupts: IRQ number and engine. */
function readInterrupts(root: string): [string, number][] {
  const text = readFileSync(join(root, 'proc/interrupts'), 'utf8');
  return [...text.matchAll(/^\s*(\d+):.*hfi1_0 sdma(\d+)\s*$/gm)].map((m) => [m[1] as string, Number(m[2])]);
}
