// Whose a QP is: rdma's answer parsed (user and kernel QPs, older pid 0, garbage), /proc/<pid>/status and
// /etc/passwd, the reader's order of sources (a snapshot's record, rdma, qp_stats' PID checked in /proc) and what
// it says when it cannot be sure, rdma itself run (installed, failing, absent), and the whole path through an
// emulated tree: a stranded QP named with its owner by the monitor.
import { chmodSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Unit } from '../../src/backend.js';
import { realFs } from '../../src/hw/fsio.js';
import { openHwBackend } from '../../src/hw/index.js';
import { parsePasswd, parseProcStatus } from '../../src/hw/parse/proc-status.js';
import { parseRdmaResQp } from '../../src/hw/parse/rdma-res.js';
import { QpOwnerReader, RDMA_STAND_IN, RECORDED_OWNERS, runRdma } from '../../src/hw/qp-owners.js';
import { Monitor } from '../../src/monitor/monitor.js';
import { strandedQpTree } from '../support/rendered-host.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('qp-owners-');

const RDMA = JSON.stringify([
  { ifindex: 1, ifname: 'hfi1_0', port: 1, lqpn: 0, type: 'SMI', state: 'RTS', 'sq-psn': 0, comm: 'ib_core' },
  { ifindex: 1, ifname: 'hfi1_0', port: 1, lqpn: 26, rqpn: 40, type: 'RC', state: 'RTS', 'sq-psn': 7, pid: 4242, comm: 'xhpl' },
  { ifindex: 2, ifname: 'mlx5_0', port: 1, lqpn: 26, type: 'RC', state: 'RTS', 'sq-psn': 0, pid: 99, comm: 'other' },
  { ifindex: 1, ifname: 'hfi1_0', lqpn: 27, type: 'UD', state: 'RTS', 'sq-psn': 0, pid: 0, comm: 'ipoib' },
]);

describe('rdma -j res show qp', () => {
  it('each QP with its device, port, type, state, pid and command; pid 0 (older iproute2) or none is a kernel QP', () => {
    const { qps, skipped } = parseRdmaResQp(RDMA);
    expect(skipped).toBe(0);
    expect(qps[1]).toEqual({ device: 'hfi1_0', port: 1, qpn: 26, type: 'RC', state: 'RTS', pid: 4242, command: 'xhpl' });
    expect(qps[0]?.pid).toBeNull();
    expect(qps[3]).toMatchObject({ qpn: 27, pid: null, port: null, command: 'ipoib' });
  });

  it('an empty answer is no QP; entries that are not QPs are skipped and counted; other text is refused', () => {
    expect(parseRdmaResQp('')).toEqual({ qps: [], skipped: 0 });
    expect(
      parseRdmaResQp('[1, null, {"ifname": "hfi1_0"}, {"ifname": 3, "lqpn": 1}, {"ifname":"hfi1_0","lqpn":-1}]').skipped,
    ).toBe(5);
    expect(() => parseRdmaResQp('{"ifname": "hfi1_0"}')).toThrow(/not a JSON array/);
    expect(() => parseRdmaResQp('[{"ifname"')).toThrow(SyntaxError);
  });
});

describe('/proc/<pid>/status and /etc/passwd', () => {
  it('name, thread group and real uid; the first line of a uid names it', () => {
    expect(parseProcStatus('Name:\txhpl\nUmask:\t0022\nTgid:\t4240\nPid:\t4242\nUid:\t1001\t1001\t1001\t1001\n')).toEqual({
      name: 'xhpl',
      tgid: 4240,
      uid: 1001,
    });
    expect(parseProcStatus('garbage')).toEqual({ name: null, tgid: null, uid: null });
    expect(
      parsePasswd('root:x:0:0::/root:/bin/sh\nalice:x:1001:1001::/home/alice:/bin/bash\nbob:x:1001:1::/:/bin/sh\n:x:5:5\n'),
    ).toEqual(
      new Map([
        [0, 'root'],
        [1001, 'alice'],
      ]),
    );
  });
});

/** A sysroot with /proc entries for `procs` (pid → [tgid, comm, uid]) and an /etc/passwd. */
function tree(procs: Record<number, [number, string, number]>): string {
  const root = tmp();
  for (const [pid, [tgid, comm, uid]] of Object.entries(procs)) {
    mkdirSync(join(root, 'proc', pid), { recursive: true });
    writeFileSync(
      join(root, 'proc', pid, 'status'),
      `Name:\t${comm}\nTgid:\t${tgid}\nPid:\t${pid}\nUid:\t${uid}\t${uid}\t${uid}\t${uid}\n`,
    );
    writeFileSync(join(root, 'proc', pid, 'comm'), `${comm}\n`);
  }
  mkdirSync(join(root, 'etc'), { recursive: true });
  writeFileSync(join(root, 'etc/passwd'), 'root:x:0:0::/root:/bin/sh\nalice:x:1001:1001::/home/alice:/bin/bash\n');
  return root;
}

const reader = (root: string, rdma?: () => Promise<{ text: string } | { reason: string }>, nowMs = () => 0) =>
  new QpOwnerReader('hfi1_0', join(root, 'proc'), realFs, { nowMs }, rdma);

describe('the owner of a QP', () => {
  it('under a sysroot: the recorded rdma answer, each owner checked in /proc (thread to process, uid to name)', async () => {
    const root = tree({ 4242: [4240, 'worker', 1001], 4240: [4240, 'xhpl', 1001] });
    mkdirSync(join(root, '.hfi1-sdma'));
    writeFileSync(join(root, RDMA_STAND_IN), RDMA);
    const [user, kernel, unlisted] = await reader(root).owners([
      { qpn: 26, creatorPid: 4242 },
      { qpn: 0, creatorPid: 0 },
      { qpn: 99, creatorPid: null },
    ]);
    expect(user).toEqual({ qpn: 26, pid: 4240, command: 'xhpl', user: 'alice', source: 'rdma', note: null });
    expect(kernel).toMatchObject({ pid: null, command: 'ib_core', source: 'rdma', note: 'a kernel QP' });
    expect(unlisted).toMatchObject({ pid: null, source: 'qp_stats', note: 'not known: qp_stats gives no PID' });
  });

  it('without rdma: qp_stats\u2019 PID as /proc shows it now, saying it may be reused, or that it is gone', async () => {
    const root = tree({ 4242: [4242, 'xhpl', 1001], 77: [77, 'sshd', 0] });
    const [now, gone, kernel] = await reader(root).owners([
      { qpn: 26, creatorPid: 4242 },
      { qpn: 30, creatorPid: 5000 },
      { qpn: 1, creatorPid: 0 },
    ]);
    expect(now).toMatchObject({ pid: 4242, command: 'xhpl', user: 'alice', source: 'qp_stats' });
    expect(now?.note).toMatch(
      /qp_stats' PID 4242 \(the creating thread\) as \/proc shows it now: the pid may have been reused since; no rdma answer recorded in this tree/,
    );
    expect(gone).toMatchObject({ pid: null, user: null, source: 'qp_stats' });
    expect(gone?.note).toMatch(/its creating thread 5000 has exited/);
    expect(kernel).toMatchObject({ pid: null, note: 'a kernel QP (PID 0)' });
  });

  it('a snapshot\u2019s recorded owners come first, said to be as they were when captured', async () => {
    const root = tree({});
    mkdirSync(join(root, '.hfi1-sdma'));
    writeFileSync(
      join(root, RECORDED_OWNERS),
      JSON.stringify({
        owners: [{ device: 'hfi1_0', qpn: 26, pid: 4240, command: 'xhpl', user: 'alice', source: 'rdma', note: null }],
      }),
    );
    writeFileSync(join(root, RDMA_STAND_IN), '[]');
    const [o] = await reader(root).owners([{ qpn: 26, creatorPid: 4242 }]);
    expect(o).toEqual({
      qpn: 26,
      pid: 4240,
      command: 'xhpl',
      user: 'alice',
      source: 'recorded',
      note: 'as it was when captured',
    });
  });

  it('on a live host rdma is asked at most once per 5 s, and its failure is said beside qp_stats\u2019 answer', async () => {
    let calls = 0;
    let t = 0;
    const r = new QpOwnerReader('hfi1_0', '/proc', realFs, { nowMs: () => t }, async () => {
      calls++;
      return { reason: 'rdma (iproute2) is not installed' };
    });
    const [o] = await r.owners([{ qpn: 26, creatorPid: 999_999_999 }]);
    expect(o?.note).toMatch(/has exited.*; rdma \(iproute2\) is not installed$/);
    await r.owners([{ qpn: 26, creatorPid: 999_999_999 }]);
    expect(calls).toBe(1);
    t = 5000;
    await r.owners([{ qpn: 26, creatorPid: 999_999_999 }]);
    expect(calls).toBe(2);
  });
});

describe('rdma itself', () => {
  const program = (script: string) => {
    const p = join(tmp(), 'rdma');
    writeFileSync(p, `#!/bin/sh\n${script}\n`);
    chmodSync(p, 0o755);
    return p;
  };

  it('runs the first installed program with -j res show qp, in a plain environment', async () => {
    const p = program(`[ "$*" = "-j res show qp" ] && [ "$PATH" = "/usr/sbin:/usr/bin:/sbin:/bin" ] && echo '[]'`);
    expect(await runRdma(['/nonexistent/rdma', p])).toEqual({ text: '[]\n' });
  });

  it('a failure is its first line of stderr; none installed is said', async () => {
    const p = program('echo "error: netlink: Operation not permitted" >&2; exit 1');
    expect(await runRdma([p])).toEqual({ reason: `${p} -j res show qp: error: netlink: Operation not permitted` });
    expect(await runRdma(['/nonexistent/rdma'])).toEqual({ reason: 'rdma (iproute2) is not installed' });
  });
});

describe('through an emulated tree', () => {
  it('the monitor names a stranded QP with its owner, asking once per QP while it stays stranded', async () => {
    const root = tmp();
    await strandedQpTree(root);
    let t = 0;
    const b = await openHwBackend({ sysroot: root, clock: { nowMs: () => t } });
    try {
      const unit = (await b.unit(0)) as Unit & Required<Pick<Unit, 'qpOwners'>>;
      const asked: number[][] = [];
      const ask = unit.qpOwners.bind(unit);
      unit.qpOwners = (qps) => {
        asked.push(qps.map((q) => q.qpn));
        return ask(qps);
      };
      const m = new Monitor(b, { stallMs: 1000, strandMs: 200 });
      let text = '';
      for (let i = 0; i < 6; i++, t += 100) {
        const r = await m.round();
        text = r.findings.find((f) => f.code === 'SD201')?.text ?? text;
      }
      expect(text).toMatch(/sdma1 QP 0x102 RTS \(pid 30002 verbs_rank_2, user hpcuser\) stranded/);
      expect(asked).toEqual([[0x102]]);
      // Without the rdma answer, qp_stats' PID tells the same, and says it may be reused.
      renameSync(join(root, RDMA_STAND_IN), join(root, 'moved.json'));
      const fresh = new QpOwnerReader('hfi1_0', join(root, 'proc'), realFs, { nowMs: () => 0 });
      const [o] = await fresh.owners([{ qpn: 0x102, creatorPid: 30002 }]);
      expect(o).toMatchObject({ pid: 30002, command: 'verbs_rank_2', user: 'hpcuser', source: 'qp_stats' });
      rmSync(join(root, 'proc/30002'), { recursive: true });
      const [gone] = await new QpOwnerReader('hfi1_0', join(root, 'proc'), realFs, { nowMs: () => 0 }).owners([
        { qpn: 0x102, creatorPid: 30002 },
      ]);
      expect(gone?.note).toMatch(/its creating thread 30002 has exited/);
    } finally {
      await b.close();
    }
  });
});
