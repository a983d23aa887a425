// The secret linked from each position of an emulated host's tree, by an absolute and by a relative
// link, and every read command run over it: the secret never reaches stdout, stderr, the metrics
// or a snapshot. npm test runs a fixed sample of positions (those that leaked before reads were
// contained, and a directory of each kind); `npm run soak` runs every file and directory.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { SOAK } from '../support/runs.js';
import { tempDirs } from '../support/temp.js';
import { COMMANDS, emulatedHost, leaks, type Position, plantSecret, positionsOf, type SweepCommand } from './canary.js';

const temp = tempDirs('hfi1-canary-');
const DBG = 'sys/kernel/debug/hfi1/hfi1_0';
const CLS = 'sys/class/infiniband/hfi1_0';

/** The fixed sample: every file that was shown or quoted, and directories at each level. */
const SAMPLE: Position[] = [
  { rel: 'sys/module/hfi1/parameters/sdma_descq_cnt', kind: 'file' },
  { rel: `${CLS}/sdma0/cpu_list`, kind: 'file' },
  { rel: `${CLS}/fw_ver`, kind: 'file' },
  { rel: `${CLS}/ports/1/state`, kind: 'file' },
  { rel: `${DBG}/sdes`, kind: 'file' },
  { rel: 'sys/module/hfi1/parameters', kind: 'dir' },
  { rel: DBG, kind: 'dir' },
  { rel: 'proc', kind: 'dir' },
];

let root = '';
let aside = '';
let out = '';
let positions: Position[] = [];

beforeAll(async () => {
  const base = temp();
  root = join(base, 'tree');
  aside = join(base, 'aside');
  out = join(base, 'out');
  mkdirSync(aside);
  await emulatedHost(root);
  positions = SOAK ? positionsOf(root) : SAMPLE;
});

/**
 * The runs: under soak every command at every position; in npm test `engines` and `snapshot` at each
 * position and every command once (by absolute links to the two-line secret), and the one-word secret
 * by relative links where a reader would show it (the firmware) or serve it as a label (the port state).
 */
function plan(how: 'absolute' | 'relative'): Map<Position, SweepCommand[]> {
  const runs = new Map<Position, SweepCommand[]>();
  const list =
    how === 'absolute' || SOAK ? positions : positions.filter((p) => p.rel.endsWith('fw_ver') || p.rel.endsWith('ports/1/state'));
  const each = how === 'absolute' ? ['engines', 'snapshot'] : ['engines', 'export --textfile'];
  for (const pos of list) runs.set(pos, SOAK ? [...COMMANDS] : COMMANDS.filter((c) => each.includes(c.name)));
  if (!SOAK && how === 'absolute') {
    for (const [k, cmd] of COMMANDS.entries()) {
      const at = runs.get(list[k % list.length] as Position) as SweepCommand[];
      if (!at.includes(cmd)) at.push(cmd);
    }
  }
  return runs;
}

describe('a secret linked from the tree never reaches an output', () => {
  it.each(['absolute', 'relative'] as const)(
    'by %s links, at the positions of the sample (every file and directory under soak), every command',
    async (how) => {
      const found: string[] = [];
      for (const [pos, cmds] of plan(how)) {
        const restore = plantSecret(root, aside, pos, how);
        try {
          for (const cmd of cmds) for (const leak of await leaks(root, out, cmd)) found.push(`${pos.rel} (${cmd.name}) ${leak}`);
        } finally {
          restore();
        }
      }
      expect(found).toEqual([]);
    },
  );
});
