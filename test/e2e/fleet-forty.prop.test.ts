// The forty-node fan-out, under `npm run soak` only (forty checks cost forty starts of the command): ClusterShell
// runs `hfi1-sdma --sysroot TREE health --brief` on 40 emulated nodes and folds them with -b: the 34 healthy ones
// are one group, the 4 stranded on the same engine another, the 2 halted a third; `fleet` says the same from the
// folded output. (npm test runs the six-node version: fleet-clush.test.ts.)
import { describe, expect, it } from 'vitest';
import { BIN } from '../support/child.js';
import { runCli } from '../support/cli.js';
import { type NodeKind, writeNodes } from '../support/fleet-trees.js';
import { SOAK } from '../support/runs.js';
import { spawnSync } from '../support/spawn.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('fleet-forty-');
const hasClush = spawnSync('sh', ['-c', 'command -v clush'], { stdio: 'ignore' }).status === 0;
const sick: Record<number, NodeKind> = {
  7: 'stranded',
  12: 'stranded',
  13: 'stranded',
  31: 'stranded',
  20: 'halted',
  40: 'halted',
};
const KINDS = Array.from({ length: 40 }, (_, i) => sick[i + 1] ?? 'healthy');

describe.skipIf(!SOAK || !hasClush)(
  'forty emulated nodes under clush -b (under npm run soak only, with ClusterShell installed)',
  () => {
    it('fold into three groups: the healthy, the stranded on one engine, the halted', async () => {
      const root = tmp();
      await writeNodes(root, KINDS, (i) => `node${String(i + 1).padStart(2, '0')}`);
      const r = spawnSync(
        'clush',
        [
          '-R',
          'exec',
          '-w',
          'node[01-40]',
          '-f',
          '4',
          '-b',
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
        ],
        { encoding: 'utf8', timeout: 600_000 },
      );
      expect(r.stdout).toContain('node[01-06,08-11,14-19,21-30,32-39] (34)\n---------------\nOK (emulated sysroot)\n');
      expect(r.stdout).toContain(
        'node[07,12-13,31] (4)\n---------------\nCRITICAL SD201 hfi1_0 sdma1 stranded (emulated sysroot)\n',
      );
      expect(r.stdout).toContain('node[20,40] (2)\n---------------\nCRITICAL SD102 hfi1_0 sdma2 halted (emulated sysroot)\n');
      expect(r.stdout.match(/^-+$/gm)?.length).toBe(6);
      const f = await runCli(['fleet', '--hosts', 'node[01-40]'], {}, false, r.stdout);
      expect(f.stdout).toContain('CRITICAL SD201 stranded: node[07,12-13,31] (4)\n');
      expect(f.stdout).toContain('OK: node[01-06,08-11,14-19,21-30,32-39] (34)\n');
      expect(f.code).toBe(2);
    }, 900_000);
  },
);
