// Exit codes and messages for sources that are there but unusable: one rule for all of them. A
// source that cannot be read is left out and named; a malformed one is left out with a warning
// naming file:line when another source gives what it gives, and is exit 65 when it is the last.
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fixture } from '../hw/fixtures.js';
import { cli, cliChild, goodBar, goodTree, IS_ROOT, NOBODY_UNAVAILABLE, replaceWith, tempRoots } from './sources-tree.js';

const fresh = tempRoots();

const HW_COUNTERS: Record<string, string> = {};
for (const k of ['SDEDscFdCn', 'SDMAInt', 'SDMAErrCt', 'SDMAIdInt', 'SDMAPrIntCn']) {
  for (const e of [0, 1]) HW_COUNTERS[`${k}${e},32`] = '7\n';
}

// Root is refused nothing by a mode: as root the CLI runs as nobody, which needs root's setpriv, node and the
// temporary directory in nobody's reach (a copy of the command is made when the checkout is not).
const CANNOT = IS_ROOT && NOBODY_UNAVAILABLE !== null;

describe('unreadable sys/ and proc/', () => {
  const how = IS_ROOT ? 'mode 0700, the CLI run as nobody' : 'mode 0000 (not root: the owner is refused too)';
  const skip = CANNOT ? ` (skipped: root, and it cannot run as nobody: ${NOBODY_UNAVAILABLE})` : '';
  it.skipIf(CANNOT)(`${how}: 77 naming the directory, not 66 "no unit"${skip}`, () => {
    const t = goodTree(fresh());
    const mode = IS_ROOT ? 0o700 : 0o000;
    chmodSync(join(t.root, 'sys'), mode);
    chmodSync(join(t.root, 'proc'), mode);
    // A child: the rights of another user (nobody) belong to a process.
    const r = cliChild(t.root, ['engines'], { asNobody: IS_ROOT });
    expect(r.code, r.stderr).toBe(77);
    expect(r.stderr).toContain(`${join(t.root, 'sys')}: permission denied`);
  });

  it.skipIf(CANNOT)(
    `debugfs and proc/ unreadable (${how}): the reduced view names /proc/interrupts as permission denied${skip}`,
    () => {
      const t = goodTree(fresh(), { counters: false });
      chmodSync(join(t.root, 'sys/kernel/debug'), IS_ROOT ? 0o700 : 0o000); // debugfs is root-only
      chmodSync(join(t.root, 'proc'), IS_ROOT ? 0o700 : 0o000);
      // A child: the rights of another user (nobody) belong to a process.
      const r = cliChild(t.root, ['engines'], { asNobody: IS_ROOT });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/reduced view; not readable: .*interrupts: permission denied/);
    },
  );
});

describe('sdes unusable while the BAR is readable: the BAR stands in, and stderr says why', () => {
  it.each([
    ['a symbolic-link loop', 'loop', 'a loop of symbolic links (ELOOP)'],
    ['a directory', 'dir', 'is a directory, not a regular file'],
    ['a dangling link', 'dangling', 'a symbolic link to'],
    ['empty', 'empty', 'the file is empty: it has no record for engine 0'],
  ] as const)('%s: exit 0, the registers from the BAR, the reason on stderr', async (_what, kind, reason) => {
    const t = goodTree(fresh(), { bar: goodBar });
    replaceWith(t.sdes, kind);
    const r = await cli(t.root, ['engines', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(t.sdes);
    expect(r.stderr).toContain(reason);
    const e0 = JSON.parse(r.stdout).units[0].engines[0];
    expect(e0.sources).toContain('bar');
    expect(e0.sources).not.toContain('sdes');
  });

  it('an empty sdes and `ring 0`: 65 naming the file', async () => {
    const t = goodTree(fresh());
    replaceWith(t.sdes, 'empty');
    const r = await cli(t.root, ['ring', '0']);
    expect(r.code).toBe(65);
    expect(r.stderr).toContain(`${t.sdes}:1:1: the file is empty`);
  });

  it('an empty sdes and no BAR: 65, the last source of the registers', async () => {
    const t = goodTree(fresh());
    replaceWith(t.sdes, 'empty');
    const r = await cli(t.root, ['engines']);
    expect(r.code).toBe(65);
    expect(r.stderr).toContain(`${t.sdes}:1:1: the file is empty`);
  });
});

describe('sysfs files as directories are said, not ignored', () => {
  it.each([
    ['vl', 'vl'],
    ['cpu_list', 'cpuList'],
    ['the ring-size parameter', 'param'],
  ] as const)('%s as a directory: exit 0, named on stderr', async (_what, key) => {
    const t = goodTree(fresh());
    replaceWith(t[key], 'dir');
    const r = await cli(t.root, ['engines']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`${t[key]}: is a directory, not a regular file`);
  });

  it('the ring-size parameter as a link to nothing is said too, with the size assumed', async () => {
    const t = goodTree(fresh());
    replaceWith(t.param, 'dangling');
    const r = await cli(t.root, ['engines']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`${t.param}: a symbolic link to nothing; assuming the driver's default ring size 2048`);
  });

  it('the ring-size parameter as a directory says which size is assumed', async () => {
    const t = goodTree(fresh());
    replaceWith(t.param, 'dir');
    expect((await cli(t.root, ['engines'])).stderr).toContain("assuming the driver's default ring size 2048");
  });
});

describe('counter sources: the same rule for counters, hw_counters and /proc/interrupts', () => {
  const dupNames = () => `${fixture('counters/counter_names').trimEnd()}\nSDMAInt0,32\n`;

  it('duplicate counter_names and no other counter source: 65 naming file:line', async () => {
    const t = goodTree(fresh(), { interrupts: null });
    writeFileSync(t.counterNames, dupNames());
    const r = await cli(t.root, ['engines']);
    expect(r.code).toBe(65);
    expect(r.stderr).toContain(`${t.counterNames}:87:1: a second counter named 'SDMAInt0'`);
  });

  it('duplicate counter_names with /proc/interrupts readable: exit 0, seq from interrupts, the fault named', async () => {
    const t = goodTree(fresh());
    writeFileSync(t.counterNames, dupNames());
    const r = await cli(t.root, ['engines', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`${t.counterNames}:87:1: a second counter named 'SDMAInt0'`);
    expect(JSON.parse(r.stdout).units[0].engines[0].seqSource).toBe('interrupts');
  });

  it('a malformed /proc/interrupts with the counters readable: exit 0, named with its line', async () => {
    const t = goodTree(fresh());
    writeFileSync(t.interrupts, fixture('proc/interrupts').replace(/ 146:( +)1200/, ' 146:$1x200'));
    const r = await cli(t.root, ['engines']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`${t.interrupts}:\\d+:\\d+: expected 4 per-CPU counts`));
  });

  it('a malformed /proc/interrupts as the only counter source: 65 naming file:line', async () => {
    const t = goodTree(fresh(), { debugfs: 'absent' });
    writeFileSync(t.interrupts, fixture('proc/interrupts').replace(/ 146:( +)1200/, ' 146:$1x200'));
    const r = await cli(t.root, ['engines']);
    expect(r.code).toBe(65);
    expect(r.stderr).toMatch(new RegExp(`${t.interrupts}:\\d+:\\d+: expected 4 per-CPU counts`));
  });

  it('a malformed hw_counters file with /proc/interrupts readable: exit 0, named', async () => {
    const t = goodTree(fresh(), { debugfs: 'absent', hwCounters: { ...HW_COUNTERS, 'SDMAErrCt1,32': 'many\n' } });
    const r = await cli(t.root, ['engines']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`${t.cls}/hw_counters/SDMAErrCt1,32:1:1: expected one unsigned decimal`);
  });

  it('a malformed hw_counters file as the only counter source: 65 naming it', async () => {
    const t = goodTree(fresh(), {
      debugfs: 'absent',
      interrupts: null,
      hwCounters: { ...HW_COUNTERS, 'SDMAErrCt1,32': 'many\n' },
    });
    const r = await cli(t.root, ['engines']);
    expect(r.code).toBe(65);
    expect(r.stderr).toContain(`${t.cls}/hw_counters/SDMAErrCt1,32:1:1: expected one unsigned decimal`);
  });

  it('counter_names as a directory: exit 0, said what it is and what to do', async () => {
    const t = goodTree(fresh());
    replaceWith(t.counterNames, 'dir');
    const r = await cli(t.root, ['engines']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`${t.counterNames}: is a directory, not a regular file`);
    expect(r.stderr).toContain('replace it');
  });

  it('a hw_counters file as a directory and no other counter source: 69 saying what it is and what to do', async () => {
    const t = goodTree(fresh(), { debugfs: 'absent', interrupts: null, hwCounters: HW_COUNTERS });
    const f = `${t.cls}/hw_counters/SDMAPrIntCn1,32`;
    rmSync(f);
    mkdirSync(f);
    const r = await cli(t.root, ['engines']);
    expect(r.code).toBe(69);
    expect(r.stderr).toContain(`${f}: is a directory, not a regular file`);
    expect(r.stderr).toContain('replace it');
  });
});
