// The fan-out engines operators already run, on emulated nodes (one sysroot tree per node, test/support/
// fleet-trees.ts): Debian's ClusterShell runs `hfi1-sdma --sysroot TREE health --brief` on each node (`clush -R
// exec`, %h the node), and what each node printed is fed back through clush and pdsh as their own output: `clush
// -b` and `dshbak -c` fold every healthy node into one group and the two nodes stranded on the same engine into
// another, `clush --diff` shows only the sick against the healthy majority, and `fleet` rolls up `clush -b`'s
// output with the node that said nothing. Six nodes here; the forty-node run is in the soak
// (fleet-forty.prop.test.ts).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../support/child.js';
import { runCli } from '../support/cli.js';
import { type NodeKind, writeNodes } from '../support/fleet-trees.js';
import { spawnSync } from '../support/spawn.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('fleet-clush-');
const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
const hasClush = has('clush') && has('clubak');
const hasPdsh = has('pdsh') && has('dshbak');

const KINDS: NodeKind[] = ['healthy', 'stranded', 'healthy', 'stranded', 'halted', 'healthy'];
const NODES = 'node[1-6]';

function run(cmd: string, args: string[], input?: string) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', input, timeout: 120_000, env: { ...process.env, NO_COLOR: '1' } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe.skipIf(!hasClush)('clush over emulated nodes (skipped only when ClusterShell is not installed)', () => {
  let root: string;

  beforeAll(async () => {
    root = tmp();
    await writeNodes(root, KINDS, (i) => `node${i + 1}`);
    // The real run: each node's check, in parallel, through ClusterShell's exec worker.
    const r = run('clush', [
      '-R',
      'exec',
      '-w',
      NODES,
      '-f',
      '3',
      process.execPath,
      BIN,
      '--sysroot',
      `${root}/%h`,
      'health',
      '--brief',
      '--stall-ms',
      '200',
      '--state',
      'none',
    ]);
    const lines = r.stdout.split('\n').filter((l) => /^node\d+: /.test(l));
    expect(lines.length, r.stdout + r.stderr).toBe(KINDS.length);
    for (const [i] of KINDS.entries()) {
      const mine = lines.filter((l) => l.startsWith(`node${i + 1}: `)).map((l) => l.slice(`node${i + 1}: `.length));
      writeFileSync(join(root, `node${i + 1}.out`), `${mine.join('\n')}\n`);
    }
  }, 120_000);

  /** Each node's own output again, through the engine under test. */
  const replay = () => ['-R', 'exec', '-w', NODES, 'cat', `${root}/%h.out`];
  /** `clush -b` of the replay, run once for the tests that read it. */
  let folded: string | undefined;
  const clushB = () => {
    folded ??= run('clush', ['-b', ...replay()]).stdout;
    return folded;
  };

  it('clush -b folds the healthy nodes into one group and the same stranded engine into another', () => {
    expect(clushB()).toBe(
      [
        '---------------',
        'node[1,3,6] (3)',
        '---------------',
        'OK (emulated sysroot)',
        '---------------',
        'node[2,4] (2)',
        '---------------',
        'CRITICAL SD201 hfi1_0 sdma1 stranded (emulated sysroot)',
        '---------------',
        'node5',
        '---------------',
        'CRITICAL SD102 hfi1_0 sdma2 halted (emulated sysroot)',
        '',
      ].join('\n'),
    );
  });

  it('clush --diff shows only the sick, against the healthy majority', () => {
    const r = run('clush', ['--diff', ...replay()]);
    expect(r.stdout).toContain('--- node[1,3,6] (3)');
    expect(r.stdout).toContain('+++ node[2,4] (2)');
    expect(r.stdout).toContain('+CRITICAL SD201 hfi1_0 sdma1 stranded (emulated sysroot)');
    expect(r.stdout).toContain('+++ node5');
    expect(r.stdout).not.toMatch(/^\+\+\+ node[136]/m);
  });

  it('fleet rolls up clush -b with a node that said nothing, and exits as clush -S would', async () => {
    const r = await runCli(['fleet', '--hosts', 'node[1-7]'], {}, false, clushB());
    expect(r.stdout).toBe(
      [
        'CRITICAL SD102 halted: node5 (1)',
        '    hfi1_0 sdma2: node5 (1)',
        'CRITICAL SD201 stranded: node[2,4] (2)',
        '    hfi1_0 sdma1: node[2,4] (2)',
        'UNKNOWN nothing printed: node7 (1)',
        'OK: node[1,3,6] (3)',
        '',
      ].join('\n'),
    );
    expect(r.code).toBe(3);
    const sick = await runCli(['fleet', '--hosts', NODES], {}, false, clushB());
    expect(sick.code).toBe(2);
  });

  it.skipIf(!hasPdsh)('pdsh | dshbak -c folds the same groups (skipped only when pdsh is not installed)', () => {
    const out = run('pdsh', ['-R', 'exec', '-w', NODES, 'cat', `${root}/%h.out`]).stdout;
    const folded = run('dshbak', ['-c'], out).stdout;
    expect(folded).toMatch(/^-+\nnode\[1,3,6\]\n-+\nOK \(emulated sysroot\)\n/m);
    expect(folded).toMatch(/^-+\nnode\[2,4\]\n-+\nCRITICAL SD201 hfi1_0 sdma1 stranded \(emulated sysroot\)\n/m);
    expect(folded).toMatch(/^-+\nnode5\n-+\nCRITICAL SD102 hfi1_0 sdma2 halted \(emulated sysroot\)\n/m);
  });
});
