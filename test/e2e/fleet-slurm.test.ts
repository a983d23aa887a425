// Slurm draining a node through NHC with the shipped check, on the real Slurm (Debian's slurm-wlm with munge): a
// one-node cluster on this host whose HealthCheckProgram runs the check as NHC does (test/support/nhc-standin.sh:
// NHC's PATH, its die and offline helper; Debian does not package NHC), with hfi1-sdma installed as the README
// says (npm install -g --prefix /usr) and HFI1_SDMA unset, so the check finds the command on NHC's PATH. A stranded
// QP drains the node and `sinfo -R` shows its code in the reason's first 20 characters; a healthy check puts the
// node back; a fabric stall is logged and does not drain. Each host's check is the emulator in process.
import { chmodSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/child.js';
import { until } from '../support/prometheus.js';
import { type Cluster, slurmUnavailable, startCluster } from '../support/slurm.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('fleet-slurm-');
const unavailable = slurmUnavailable();
// Checks run all along (every 3 s, each an emulated health run): a light load (1 Gb/s) is enough for a strand and a
// fabric stall to show, and each check costs less.
const EMU = '--backend emu --engines 4 --stall-ms 200';

describe.skipIf(unavailable !== null)(
  `Slurm's HealthCheckProgram running NHC with the shipped check (skipped when a one-node Slurm cannot run here: ${unavailable ?? 'it can'})`,
  () => {
    let cluster: Cluster;
    let nhcDir: string;
    const configure = (check: string) => writeFileSync(join(nhcDir, 'nhc.conf'), `# hfi1-sdma\n* || ${check}\n`);
    const log = () => {
      try {
        return readFileSync(join(nhcDir, 'nhc.log'), 'utf8');
      } catch {
        return '';
      }
    };

    beforeAll(async () => {
      const dir = tmp();
      nhcDir = join(dir, 'nhc');
      mkdirSync(join(nhcDir, 'scripts'), { recursive: true });
      copyFileSync(join(ROOT, 'deploy/nhc/hfi1_sdma.nhc'), join(nhcDir, 'scripts/hfi1_sdma.nhc'));
      configure(`check_hfi1_sdma ${EMU} --workload idle`);
      const program = join(dir, 'health-check');
      writeFileSync(
        program,
        `#!/bin/bash\nexport NHC_DIR=${nhcDir} SLURM_CONF=${join(dir, 'slurm.conf')}\nexec ${join(ROOT, 'test/support/nhc-standin.sh')}\n`,
      );
      chmodSync(program, 0o755);
      // Every 3 s: each step waits for the next check. Checks run all along (one emulated health run each), so a
      // shorter interval buys little wall time for more work.
      cluster = await startCluster(dir, ROOT, program, 3);
    }, 120_000);
    afterAll(() => cluster?.stop(), 40_000);

    it('a stranded QP drains the node with the code first; a healthy check puts it back; a fabric stall does not drain', async () => {
      configure(`check_hfi1_sdma ${EMU} --workload mixed:gbps=1 --fault lost-wakeup@30:1`);
      await until(`the node drained by NHC (nhc.log: ${log()})`, 90_000, async () =>
        cluster.nodeState().state.startsWith('drain') ? true : undefined,
      );
      expect(cluster.nodeState().reason).toBe('NHC: SD201 hfi1_0 sdma1 stranded (emulator); hfi1-sdma explain SD201');
      // sinfo -R shows the reason's first 20 characters: the code and the unit, which drained nodes are grouped by.
      const reasons = cluster.run('sinfo', ['-R', '-h', '-o', '%20E|%N']).trim();
      expect(reasons).toBe(`NHC: SD201 hfi1_0 sd|${cluster.node}`);
      expect(log()).toContain('Health check failed:  SD201 hfi1_0 sdma1 stranded');

      configure(`check_hfi1_sdma ${EMU} --workload idle`);
      await until('the node back in service', 90_000, async () => (cluster.nodeState().state === 'idle' ? true : undefined));
      expect(cluster.nodeState().reason).toBe('none');

      const before = log().split('\n').length;
      configure(`check_hfi1_sdma ${EMU} --workload mixed:gbps=1 --fault fabric-stall@30`);
      await until('a check of the fabric stall', 90_000, async () =>
        log()
          .split('\n')
          .slice(before - 1)
          .some((l) => l.startsWith('ran:')) && log().includes('WARNING SD109')
          ? true
          : undefined,
      );
      expect(log()).toContain('check_hfi1_sdma: WARNING SD109 hfi1_0 port1 fabric-stall (emulator)');
      expect(cluster.nodeState()).toEqual({ state: 'idle', reason: 'none' });
    }, 300_000);
  },
);
