// fleet's reading and folding: node sets folded as ClusterShell's `nodeset -f` folds them (held to ClusterShell's
// own library over fixed-seed random sets when it is installed), what clush, pdsh, clubak and dshbak print read
// into each host's answer, `health --json` documents included, and the rollup's groups and exit status.
import { describe, expect, it } from 'vitest';
import { Answers, readFanout } from '../../src/fleet/answer.js';
import { safeHost } from '../../src/fleet/captures.js';
import { expandNodes, foldNodes } from '../../src/fleet/nodeset.js';
import { rollup, rollupText } from '../../src/fleet/rollup.js';
import { runCli } from '../support/cli.js';
import { spawnSync } from '../support/spawn.js';

/** The Python that runs ClusterShell's nodeset (its shebang), when ClusterShell is installed. */
const nodesetPython = (() => {
  const r = spawnSync('sh', ['-c', 'head -1 "$(command -v nodeset)"'], { encoding: 'utf8' });
  const py = /^#!\s*(\S+)/.exec(r.stdout)?.[1];
  return py && spawnSync(py, ['-c', 'import ClusterShell.NodeSet'], { stdio: 'ignore' }).status === 0 ? py : null;
})();

describe('node sets', () => {
  it.each([
    [['node1', 'node2', 'node3', 'node5'], 'node[1-3,5]'],
    [['node01', 'node02', 'node1'], 'node[1,01-02]'],
    [['n07', 'n8'], 'n[8,07]'],
    [['n009', 'n010', 'n011'], 'n[009-011]'],
    [['r1n1', 'r1n2', 'r2n1', 'r2n2'], 'r[1-2]n[1-2]'],
    [['r1n1', 'r1n2', 'r2n1'], 'r1n[1-2],r2n1'],
    [['a1b2', 'a1b3', 'a2b2', 'a3b2', 'a3b3'], 'a[2-3]b2,a1b[2-3],a3b3'],
    [['foo', 'bar', 'node2', 'node1', 'node2'], 'bar,foo,node[1-2]'],
    [['x1.dom', 'x2.dom', 'node', 'node1'], 'node,node1,x[1-2].dom'],
  ])('%j folds to %s (as nodeset -f prints it)', (names, folded) => {
    expect(foldNodes(names)).toBe(folded);
    expect(expandNodes(folded).sort()).toEqual([...new Set(names)].sort());
  });

  it('expands ranges with steps and padding; refuses what is not a node set', () => {
    expect(expandNodes('x[1-10/3],n[08-10]')).toEqual(['x1', 'x4', 'x7', 'x10', 'n08', 'n09', 'n10']);
    expect(() => expandNodes('node[1-')).toThrow(/without its \]/);
    expect(() => expandNodes('node[3-1]')).toThrow(/not an ascending range/);
  });

  it.skipIf(nodesetPython === null)(
    "agree with ClusterShell's NodeSet on 300 random sets of 1 to 3 dimensions (skipped only when ClusterShell is not installed)",
    () => {
      let seed = 20_261_203;
      const rnd = (n: number) => {
        seed = (seed * 1_103_515_245 + 12_345) & 0x7fffffff;
        return seed % n;
      };
      const num = (max: number) => {
        const v = String(rnd(max));
        return [v, v.padStart(2, '0'), v.padStart(3, '0'), v][rnd(4)] as string;
      };
      const cases = Array.from({ length: 300 }, () => {
        const style = rnd(4);
        return Array.from({ length: 1 + rnd(12) }, () => {
          if (style === 2) return `r${num(4)}n${num(6)}`;
          if (style === 3) return `a${num(3)}b${num(3)}c${rnd(2)}`;
          return `${['node', 'n', 'login'][rnd(style === 0 ? 1 : 3)]}${num(25)}${rnd(5) === 0 ? '-ib' : ''}`;
        });
      });
      const script =
        'import sys\nfrom ClusterShell.NodeSet import NodeSet\nfor l in sys.stdin:\n    print(NodeSet.fromlist(l.split()))\n';
      const r = spawnSync(nodesetPython as string, ['-c', script], {
        input: `${cases.map((c) => c.join(' ')).join('\n')}\n`,
        encoding: 'utf8',
      });
      const theirs = r.stdout.split('\n');
      const differ = cases.map((c, i) => [c.join(' '), theirs[i], foldNodes(c)]).filter(([, a, b]) => a !== b);
      expect(differ).toEqual([]);
    },
  );
});

describe('answers from what the fan-out printed', () => {
  it('reads host: lines, dshbak -c and clush -b blocks, and skips the engines own messages', () => {
    const a = new Answers();
    readFanout(
      [
        'node1: OK',
        'node2: CRITICAL SD201 hfi1_0 sdma5 stranded',
        'node2: WARNING SD306 hfi1_0 port1 port-down',
        'pdsh@head: node9: ssh exited with exit code 255',
        'clush: node9: exited with exit code 255',
        'node3: UNKNOWN a capture of a single instant shows no movement (snapshot)',
        'node4: bash: hfi1-sdma: command not found',
        '----------------',
        'login[1-2]',
        '----------------',
        'OK (emulated sysroot)',
        '---------------',
        'io[01-02] (2)',
        '---------------',
        'CRITICAL SD102 hfi1_0 sdma2 halted',
      ].join('\n'),
      a,
    );
    const byHost = Object.fromEntries(a.all(['node9']).map((h) => [h.host, h]));
    expect(byHost.node1).toMatchObject({ status: 'OK', problems: [], answered: true });
    expect(byHost.node2?.status).toBe('CRITICAL');
    expect(byHost.node2?.problems).toEqual([
      { level: 'CRITICAL', code: 'SD201', place: 'hfi1_0 sdma5', word: 'stranded' },
      { level: 'WARNING', code: 'SD306', place: 'hfi1_0 port1', word: 'port-down' },
    ]);
    expect(byHost.node3).toMatchObject({ status: 'UNKNOWN', note: 'a capture of a single instant shows no movement' });
    expect(byHost.node4).toMatchObject({ status: 'UNKNOWN', answered: false, note: 'bash: hfi1-sdma: command not found' });
    expect(byHost.node9).toMatchObject({ status: 'UNKNOWN', answered: false, note: null });
    expect(byHost.login2?.status).toBe('OK');
    expect(byHost.io01?.problems[0]?.code).toBe('SD102');
    expect(byHost.pdsh).toBeUndefined();
    expect(byHost.clush).toBeUndefined();
  });

  it('reads health --json documents, labelled or naming their host, as the brief lines they stand for', async () => {
    const doc = (
      await runCli(['--backend', 'emu', '--engines', '4', '--fault', 'lost-wakeup@30:1', '--json', 'health', '--stall-ms', '200'])
    ).stdout;
    expect(JSON.parse(doc).host).toEqual(expect.any(String));
    const a = new Answers();
    readFanout(`n17: ${doc.trim()}\n${doc.trim().replace(/"host":"[^"]*"/, '"host":"n18"')}\n`, a);
    const hosts = a.all();
    expect(hosts.map((h) => h.host).sort()).toEqual(['n17', 'n18']);
    for (const h of hosts)
      expect(h.problems).toEqual([{ level: 'CRITICAL', code: 'SD201', place: 'hfi1_0 sdma1', word: 'stranded' }]);
    const other = new Answers();
    readFanout('n19: {"host":"n19","backend":"hw","units":[]}\nn20: {not json', other);
    expect(other.all().map((h) => [h.host, h.answered, h.note])).toEqual([
      ['n19', false, 'a JSON document that is not a health answer'],
      ['n20', false, '{not json'],
    ]);
  });
});

describe('what hosts print is shown, never obeyed', () => {
  it('takes only host names a host may have, escapes control characters and bounds the text', () => {
    const a = new Answers();
    readFanout(
      [
        '{"host":"\\u001b[2Jevil","status":"OK","findings":[]}',
        '{"host":"../../etc","status":"OK","findings":[]}',
        `n1: \u001b]0;owned\u0007${'x'.repeat(500)}`,
      ].join('\n'),
      a,
    );
    const hosts = a.all();
    expect(hosts.map((h) => h.host)).toEqual(['n1']);
    expect(hosts[0]?.note).toMatch(/^\\x1b\]0;owned\\x07x+…$/);
    expect(hosts[0]?.note?.length).toBe(200);
    expect(safeHost('../../etc/passwd')).toBe('etc_passwd');
    expect(safeHost('node\u001b[31m7')).toBe('node__31m7');
  });
});

describe('the rollup', () => {
  const answers = (text: string, expected: string[] = []) => {
    const a = new Answers();
    readFanout(text, a);
    return rollup(a.all(expected));
  };

  it('groups findings by code over folded node sets, places below, then the unknown, the silent and the healthy', () => {
    const r = answers(
      [
        'n001: CRITICAL SD201 hfi1_0 sdma5 stranded',
        'n002: CRITICAL SD201 hfi1_0 sdma5 stranded',
        'n004: CRITICAL SD201 hfi1_0 sdma3 stranded',
        'n003: WARNING SD109 hfi1_0 port1 fabric-stall',
        'n005: OK',
        'n006: OK',
        'n007: UNKNOWN no answer within --timeout 10 s (a source did not answer in time)',
      ].join('\n'),
      ['n008'],
    );
    expect(rollupText(r)).toBe(
      [
        'CRITICAL SD201 stranded: n[001-002,004] (3)',
        '    hfi1_0 sdma5: n[001-002] (2)',
        '    hfi1_0 sdma3: n004 (1)',
        'WARNING SD109 fabric-stall: n003 (1)',
        '    hfi1_0 port1: n003 (1)',
        'UNKNOWN n007 (1): no answer within --timeout 10 s (a source did not answer in time)',
        'UNKNOWN nothing printed: n008 (1)',
        'OK: n[005-006] (2)',
        '',
      ].join('\n'),
    );
    // The largest code, as clush -S exits: a node that said nothing is UNKNOWN (3).
    expect(r.code).toBe(3);
    expect(answers('n1: OK\nn2: WARNING SD306 hfi1_0 port1 port-down\n').code).toBe(1);
    expect(answers('n1: OK\nn2: OK\n')).toMatchObject({ code: 0, ok: { nodes: 'n[1-2]', count: 2 } });
    expect(answers('').code).toBe(3);
  });

  it('the CLI reads fan-out text from a file or stdin and says what it cannot read', async () => {
    const r = await runCli(['fleet', '--hosts', 'n[1-2]'], {}, false, 'n1: OK\n');
    expect(r.stdout).toBe('UNKNOWN nothing printed: n2 (1)\nOK: n1 (1)\n');
    expect(r.code).toBe(3);
    const j = await runCli(['--json', 'fleet'], {}, false, 'n1: CRITICAL SD101 hfi1_0 sdma2 stalled\n');
    expect(JSON.parse(j.stdout)).toMatchObject({
      status: 'CRITICAL',
      code: 2,
      findings: [{ code: 'SD101', nodes: 'n1', count: 1 }],
    });
    expect((await runCli(['fleet', '/nonexistent/x'])).code).toBe(64);
    expect((await runCli(['fleet', '--hosts', 'n[1-'], {}, false, '')).stderr).toMatch(/--hosts: .* a \[ without its \]/);
  });
});
