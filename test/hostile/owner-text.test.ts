// Whose a stranded QP is comes from the host or the capture: a task's comm (any user sets their own with
// prctl(PR_SET_NAME)), /proc's status Name, rdma's comm, a user name, and a snapshot's recorded owners. That
// text is escaped and bounded where it is read, once, so no output (the waiters table, health's Nagios lines,
// the JSON, NHC's drain reason) carries a terminal escape, a forged status line or an unbounded line, and a
// recorded owner whose pid is not a pid is not used.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openHwBackend } from '../../src/hw/index.js';
import { boundedOwner, OWNER_NAME_CHARS } from '../../src/hw/qp-owners.js';
import { BIN, ROOT } from '../support/child.js';
import { runCli } from '../support/cli.js';
import { strandedQpTree } from '../support/rendered-host.js';
import { spawnSync } from '../support/spawn.js';
import { tempDirs } from '../support/temp.js';
import { copyTree } from './canary.js';

const temp = tempDirs('hfi1-owner-text-');
const ESCAPES = '\x1b]0;X\x07';

let crafted = '';
let recorded = '';
beforeAll(async () => {
  const base = temp();
  crafted = join(base, 'crafted');
  await strandedQpTree(crafted);
  recorded = join(base, 'recorded');
  copyTree(crafted, recorded);
  // The stranded QP (0x102) was made by pid 30002, a thread of 30099 whose comm its user set: escapes and a
  // newline that would forge a status line.
  writeFileSync(join(crafted, 'proc/30002/status'), 'Name:\tverbs_rank_2\nTgid:\t30099\nUid:\t1001\n');
  mkdirSync(join(crafted, 'proc/30099'));
  writeFileSync(join(crafted, 'proc/30099/comm'), `${ESCAPES}\nOK - fake\n`);
  // A capture's recorded owners: a pid that is not one, and a 300 KB command with a forged healthy line.
  const owner = (qpn: number, pid: unknown) => ({
    device: 'hfi1_0',
    qpn,
    pid,
    command: `\x1b[2J${'cmd\nHFI1-SDMA OK - all engines healthy'}${'A'.repeat(300_000)}`,
    user: `\u202eresu${ESCAPES}`,
    note: 'n\r\nOK: fake',
    source: 'rdma',
  });
  mkdirSync(join(recorded, '.hfi1-sdma'), { recursive: true });
  writeFileSync(join(recorded, '.hfi1-sdma/qp-owners.json'), JSON.stringify({ owners: [owner(0x102, 30002)] }));
});

/**
 * `hfi1-sdma --sysroot root ARGS` in this process, the tree read on a clock that moves 50 ms at each look: the
 * frozen tree's stranded QP is confirmed (and its owner named) without waiting.
 */
async function run(root: string, args: string[]) {
  let t = 0;
  const b = await openHwBackend({ sysroot: root, clock: { nowMs: () => (t += 50) } });
  try {
    return await runCli(['--sysroot', root, '--backend', 'hw', ...args], {}, false, '', b);
  } finally {
    await b.close();
  }
}

/** No terminal control reaches the text, and no line is a status line of its own or unbounded. */
function clean(text: string, forged: RegExp): void {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
  expect(text).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f\u202e]/);
  for (const line of text.split('\n')) {
    expect(line).not.toMatch(forged);
    expect(line.length).toBeLessThan(4000);
  }
}

describe("an owner's text from the host", () => {
  it('waiters and health show the leader comm escaped on the owner’s line; no forged line', async () => {
    const w = await run(crafted, ['waiters']);
    expect(w.code, w.stderr).toBe(0);
    expect(w.stdout).toContain('pid 30099 \\x1b]0;X\\x07\\x0aOK - fake');
    clean(w.stdout, /^OK - fake/);
    const h = await run(crafted, ['health', '--state', 'none', '--max-bytes', '0']);
    expect(h.stdout).toMatch(/^HFI1-SDMA CRITICAL - /);
    clean(h.stdout, /^OK - fake/);
    const j = await run(crafted, ['waiters', '--json']);
    expect(j.stdout).toContain('"command":"\\\\x1b]0;X\\\\x07\\\\x0aOK - fake"');
  });

  it("NHC's drain reason carries no escape", () => {
    const script = [
      'die() { printf "%s\\n" "$2"; }',
      'log() { :; }',
      `. ${join(ROOT, 'deploy/nhc/hfi1_sdma.nhc')}`,
      `HFI1_SDMA="${process.execPath} ${BIN} --sysroot ${crafted} --backend hw"`,
      'check_hfi1_sdma --state none --stall-ms 400',
    ].join('\n');
    const r = spawnSync('bash', ['-c', script], { encoding: 'utf8', timeout: 60_000 });
    // The reason is health --brief's first line, code first (sinfo -R shows its first 20 characters): it names the
    // finding and the place, never the owner's text.
    expect(r.stdout).toMatch(/^SD201 hfi1_0 sdma1 stranded/);
    expect(r.stdout).not.toContain('OK - fake');
    clean(r.stdout, /^OK - fake/);
  });
});

describe("a capture's recorded owners", () => {
  it('a recorded pid that is not a pid is not used; a sound one’s text is escaped and cut', async () => {
    const bad = join(temp(), 'bad');
    copyTree(recorded, bad);
    const craftedOwner = {
      device: 'hfi1_0',
      qpn: 0x102,
      pid: '1; $(reboot)',
      command: 'x',
      user: 'y',
      note: null,
      source: 'rdma',
    };
    writeFileSync(join(bad, '.hfi1-sdma/qp-owners.json'), JSON.stringify({ owners: [craftedOwner] }));
    const b = await run(bad, ['waiters', '--json']);
    expect(b.stdout).not.toContain('$(reboot)');
    expect(b.stdout).not.toContain('"source":"recorded"');

    for (const args of [['waiters'], ['health', '--state', 'none', '--max-bytes', '0'], ['engines']]) {
      const r = await run(recorded, args);
      clean(r.stdout, /^HFI1-SDMA OK|^OK: fake/);
      expect(r.stdout.length, args.join(' ')).toBeLessThan(20_000);
    }
    const w = await run(recorded, ['waiters']);
    expect(w.stdout).toContain('\\x1b[2Jcmd\\x0aHFI1-SDMA OK - all engines healthyAAA');
    expect(w.stdout).toContain('…');
  });

  it('boundedOwner cuts each field, keeps a sound pid and drops any other', () => {
    const o = boundedOwner({
      qpn: 1,
      pid: 1.5,
      command: 'c'.repeat(1000),
      user: '\x1b',
      note: null,
      source: 'recorded',
    });
    expect(o.pid).toBeNull();
    expect(o.command).toBe(`${'c'.repeat(OWNER_NAME_CHARS)}…`);
    expect(o.user).toBe('\\x1b');
    expect(boundedOwner({ ...o, pid: 42 }).pid).toBe(42);
  });
});
