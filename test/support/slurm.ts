// A one-node Slurm cluster on this host for integration tests (Debian's slurm-wlm and munge): munged on a socket
// and key of its own, slurmctld and slurmd on free loopback ports with every path in a temporary directory, and a
// HealthCheckProgram given by the test. slurmd runs in a mount namespace of its own where `npm install -g --prefix
// /usr` of this checkout has been laid over /usr (read-only overlays of a staging prefix): the health check finds
// `hfi1-sdma` on NHC's PATH as an installed node would, and the host's /usr is never written. Needs root.
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { freePort, until } from './prometheus.js';
import { spawnSync } from './spawn.js';

/** Why a Slurm cluster cannot be run here, or null when it can. */
export function slurmUnavailable(): string | null {
  if (process.getuid?.() !== 0) return 'not root (munged, slurmctld and slurmd need it)';
  for (const c of ['munged', 'slurmctld', 'slurmd', 'scontrol', 'sinfo', 'unshare', 'npm']) {
    if (spawnSync('sh', ['-c', `command -v ${c}`], { stdio: 'ignore' }).status !== 0) return `${c} is not installed`;
  }
  const probe = spawnSync('unshare', ['-m', '--propagation', 'private', 'mount', '-t', 'tmpfs', 'none', '/mnt'], {
    stdio: 'ignore',
  });
  if (probe.status !== 0) return 'mount namespaces are not allowed here (unshare -m)';
  return null;
}

/** A running one-node cluster. */
export interface Cluster {
  node: string;
  env: NodeJS.ProcessEnv;
  /** `sinfo`/`scontrol` with this cluster's configuration. */
  run(cmd: string, args: string[]): string;
  /** The node's state and reason (`idle none`, `drain NHC: SD201 …`). */
  nodeState(): { state: string; reason: string };
  /** Stop the daemons and wait until each has exited (munged writes its seed file on the way out). */
  stop(): Promise<void>;
}

/** How long a daemon is given to exit after SIGTERM before it is killed (ms). */
const EXIT_GRACE_MS = 10_000;

/** SIGTERM `c` and resolve once it has exited; SIGKILL it if it has not within EXIT_GRACE_MS. */
function terminate(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => c.kill('SIGKILL'), EXIT_GRACE_MS);
    c.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    c.kill('SIGTERM');
  });
}

/** Start munged, slurmctld and slurmd under `dir`, with `healthCheck` as the HealthCheckProgram every `intervalS`. */
export async function startCluster(dir: string, root: string, healthCheck: string, intervalS = 5): Promise<Cluster> {
  const node = hostname();
  const children: ChildProcess[] = [];
  const m = join(dir, 'munge');
  mkdirSync(m, { mode: 0o711, recursive: true });
  mkdirSync(join(dir, 'state'));
  mkdirSync(join(dir, 'spool'));
  spawnSync('dd', ['if=/dev/urandom', `of=${join(m, 'munge.key')}`, 'bs=1024', 'count=1'], { stdio: 'ignore' });
  chmodSync(join(m, 'munge.key'), 0o600);
  const socket = join(m, 'munge.sock');
  const [ctldPort, dPort] = [await freePort(), await freePort()];
  const conf = join(dir, 'slurm.conf');
  writeFileSync(
    conf,
    [
      'ClusterName=hfi1sdmatest',
      `SlurmctldHost=${node}(127.0.0.1)`,
      `SlurmctldPort=${ctldPort}`,
      `SlurmdPort=${dPort}`,
      'AuthType=auth/munge',
      `AuthInfo=socket=${socket}`,
      'CredType=cred/munge',
      'SlurmUser=root',
      'SlurmdUser=root',
      `StateSaveLocation=${join(dir, 'state')}`,
      `SlurmdSpoolDir=${join(dir, 'spool')}`,
      `SlurmctldPidFile=${join(dir, 'slurmctld.pid')}`,
      `SlurmdPidFile=${join(dir, 'slurmd.pid')}`,
      `SlurmctldLogFile=${join(dir, 'slurmctld.log')}`,
      `SlurmdLogFile=${join(dir, 'slurmd.log')}`,
      'ProctrackType=proctrack/linuxproc',
      'TaskPlugin=task/none',
      'SelectType=select/linear',
      'ReturnToService=2',
      `HealthCheckProgram=${healthCheck}`,
      `HealthCheckInterval=${intervalS}`,
      'HealthCheckNodeState=ANY',
      'MpiDefault=none',
      'JobAcctGatherType=jobacct_gather/none',
      'AccountingStorageType=accounting_storage/none',
      `NodeName=${node} NodeAddr=127.0.0.1 CPUs=1 State=UNKNOWN`,
      'PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP',
      '',
    ].join('\n'),
  );
  const env = { ...process.env, SLURM_CONF: conf };
  const start = (cmd: string, args: string[]) => {
    const c = spawn(cmd, args, { env, stdio: 'ignore' });
    children.push(c);
    return c;
  };
  const stop = async () => {
    for (const c of children.reverse()) await terminate(c);
  };
  try {
    start('munged', [
      '-F',
      '--force',
      `--socket=${socket}`,
      `--key-file=${join(m, 'munge.key')}`,
      `--log-file=${join(m, 'munged.log')}`,
      `--pid-file=${join(m, 'munged.pid')}`,
      `--seed-file=${join(m, 'munged.seed')}`,
    ]);
    // This checkout installed as the README says (npm install -g --prefix /usr), into a staging prefix laid over /usr.
    const stage = join(dir, 'stage');
    const npm = spawnSync(
      'npm',
      ['install', '-g', '--prefix', join(stage, 'usr'), '--ignore-scripts', '--no-audit', '--no-fund', root],
      {
        encoding: 'utf8',
      },
    );
    if (npm.status !== 0) throw new Error(`npm install -g --prefix: ${npm.stderr}`);
    await until('munged', 30_000, async () => (spawnSync('sh', ['-c', `test -S ${socket}`]).status === 0 ? true : undefined));
    start('slurmctld', ['-D', '-i']);
    const overlay = (d: string) => `mount -t overlay overlay -o lowerdir=${join(stage, d)}:/${d} /${d}`;
    start('unshare', [
      '-m',
      '--propagation',
      'private',
      'sh',
      '-c',
      `${overlay('usr/bin')} && ${overlay('usr/lib')} && exec slurmd -D`,
    ]);
    const run = (cmd: string, args: string[]) => spawnSync(cmd, args, { env, encoding: 'utf8' }).stdout ?? '';
    const nodeState = () => {
      const [state = '', ...reason] = run('sinfo', ['-h', '-n', node, '-o', '%t %E']).trim().split(' ');
      return { state, reason: reason.join(' ') };
    };
    await until('slurmd to register with slurmctld', 60_000, async () =>
      /^(idle|drain|drng)/.test(nodeState().state) ? true : undefined,
    );
    return { node, env, run, nodeState, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
