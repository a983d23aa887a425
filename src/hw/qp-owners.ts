// Whose a QP is, read-only: on a live host from `rdma -j res show qp` (iproute2 over the kernel's resource
// tracking, which records the task that created each QP) when it is installed, else from the PID qp_stats prints
// (qp->pid: the thread that created the QP), each checked in /proc now. Under a sysroot nothing is run: a
// snapshot's recorded owners (.hfi1-sdma/qp-owners.json) are used, else a recorded rdma answer
// (.hfi1-sdma/rdma-res-qp.json, as the emulator renders one) and the tree's /proc. What cannot be known is said.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Clock, QpOwner } from '../backend.js';
import type { HwFs } from './fsio.js';
import { parsePasswd, parseProcStatus } from './parse/proc-status.js';
import { parseRdmaResQp, RDMA_ANSWER_CAP_BYTES, type RdmaQp } from './parse/rdma-res.js';
import { boundedText } from './parse/text.js';

/** Where iproute2 installs rdma (only these are run: never a program found through $PATH, which root may not trust). */
export const RDMA_PROGRAMS = ['/usr/sbin/rdma', '/sbin/rdma', '/usr/bin/rdma', '/bin/rdma'];
/** rdma's answer is reused this long (ms) before it is asked again. */
export const RDMA_ANSWER_TTL_MS = 5000;
/** rdma gets this long to answer (ms). */
const RDMA_TIMEOUT_MS = 3000;

/** Files of a sysroot that stand for what a live host answers by running a command. */
export const RDMA_STAND_IN = '.hfi1-sdma/rdma-res-qp.json';
/** The owners a snapshot recorded when it was captured. */
export const RECORDED_OWNERS = '.hfi1-sdma/qp-owners.json';

/** rdma's answer, or why there is none. */
export type RdmaAnswer = { text: string } | { reason: string };

/** Run rdma (the first installed of RDMA_PROGRAMS) for every device's QPs. */
export async function runRdma(programs: readonly string[] = RDMA_PROGRAMS): Promise<RdmaAnswer> {
  const program = programs.find((p) => existsSync(p));
  if (!program) return { reason: 'rdma (iproute2) is not installed' };
  return new Promise((resolve) => {
    execFile(
      program,
      ['-j', 'res', 'show', 'qp'],
      {
        timeout: RDMA_TIMEOUT_MS,
        killSignal: 'SIGKILL',
        maxBuffer: RDMA_ANSWER_CAP_BYTES,
        encoding: 'utf8',
        env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C' },
      },
      (e, stdout, stderr) => {
        if (e) {
          const why = (e as NodeJS.ErrnoException & { killed?: boolean }).killed
            ? `gave no answer within ${RDMA_TIMEOUT_MS} ms`
            : (stderr.trim().split('\n')[0] ?? '') || e.message;
          resolve({ reason: `${program} -j res show qp: ${why.slice(0, 200)}` });
        } else resolve({ text: stdout });
      },
    );
  });
}

/** The most characters of an owner's command and user shown (a task's comm is 15, a user name 32). */
export const OWNER_NAME_CHARS = 64;
/** The most characters of an owner's note. */
export const OWNER_NOTE_CHARS = 300;

/** An owner whose text is safe to print anywhere: controls escaped, lengths bounded. */
export function boundedOwner(o: QpOwner): QpOwner {
  const name = (t: string | null) => (t === null ? null : boundedText(t, OWNER_NAME_CHARS));
  // Object.assign, not `{ ...o, pid, … }`: see ownerOf.
  return Object.assign({}, o, {
    pid: o.pid !== null && Number.isSafeInteger(o.pid) && o.pid >= 0 ? o.pid : null,
    command: name(o.command),
    user: name(o.user),
    note: o.note === null ? null : boundedText(o.note, OWNER_NOTE_CHARS),
  });
}

/** One owner as a snapshot records it. */
interface RecordedOwner extends QpOwner {
  device: string;
}

/** The owners of one unit's QPs. */
export class QpOwnerReader {
  private answer: { atMs: number; qps: Map<number, RdmaQp> | null; reason: string | null } | null = null;
  private passwd: Map<number, string> | null = null;
  private readonly sysroot: string;

  constructor(
    private readonly device: string,
    procDir: string,
    private readonly fs: HwFs,
    private readonly clock: Clock,
    private readonly rdma: () => Promise<RdmaAnswer> = () => runRdma(),
  ) {
    this.sysroot = dirname(procDir);
  }

  private get live(): boolean {
    return this.sysroot === '/';
  }

  private async readText(path: string, capBytes = 1 << 20): Promise<string | null> {
    try {
      return Buffer.from(await this.fs.readFile(path, capBytes)).toString('utf8');
    } catch {
      return null;
    }
  }

  /** rdma's QPs of this device by QPN, fresh within RDMA_ANSWER_TTL_MS; null with the reason when none. */
  private async rdmaQps(): Promise<{ qps: Map<number, RdmaQp> | null; reason: string | null }> {
    const now = this.clock.nowMs();
    if (this.answer && now - this.answer.atMs < RDMA_ANSWER_TTL_MS) return this.answer;
    let got: RdmaAnswer;
    if (this.live) got = await this.rdma();
    else {
      const text = await this.readText(join(this.sysroot, RDMA_STAND_IN), RDMA_ANSWER_CAP_BYTES);
      got = text === null ? { reason: 'no rdma answer recorded in this tree' } : { text };
    }
    let qps: Map<number, RdmaQp> | null = null;
    let reason: string | null = null;
    if ('reason' in got) reason = got.reason;
    else {
      try {
        qps = new Map(
          parseRdmaResQp(got.text)
            .qps.filter((q) => q.device === this.device)
            .map((q) => [q.qpn, q]),
        );
      } catch (e) {
        reason = `rdma's answer is not its JSON (${(e as Error).message.slice(0, 80)})`;
      }
    }
    this.answer = { atMs: now, qps, reason };
    return this.answer;
  }

  /** The owners a snapshot recorded for this device, by QPN; null when it recorded none. */
  private async recorded(): Promise<Map<number, RecordedOwner> | null> {
    if (this.live) return null;
    const text = await this.readText(join(this.sysroot, RECORDED_OWNERS));
    if (text === null) return null;
    try {
      const v = JSON.parse(text) as { owners?: unknown };
      const list = Array.isArray(v.owners) ? (v.owners as RecordedOwner[]) : [];
      // A record whose pid is not a pid, or whose text is not text, is not one this program wrote: not used.
      const sound = (o: RecordedOwner) =>
        typeof o === 'object' &&
        o !== null &&
        o.device === this.device &&
        Number.isSafeInteger(o.qpn) &&
        (o.pid === null || o.pid === undefined || (Number.isSafeInteger(o.pid) && o.pid >= 0)) &&
        [o.command, o.user, o.note].every((t) => t === null || t === undefined || typeof t === 'string');
      return new Map(list.filter(sound).map((o) => [o.qpn, o]));
    } catch {
      return null;
    }
  }

  private async userOf(uid: number | null): Promise<string | null> {
    if (uid === null) return null;
    this.passwd ??= parsePasswd((await this.readText(join(this.sysroot, 'etc/passwd'), 8 << 20)) ?? '');
    return this.passwd.get(uid) ?? String(uid);
  }

  /** The process of task `pid` now: its thread group, command and user; null when /proc has no such task. */
  private async processOf(pid: number): Promise<{ pid: number; command: string | null; user: string | null } | null> {
    const proc = join(this.sysroot, 'proc');
    const status = await this.readText(join(proc, String(pid), 'status'));
    if (status === null) return null;
    const s = parseProcStatus(status);
    const tgid = s.tgid ?? pid;
    let command = s.name;
    if (tgid !== pid) {
      const leader = await this.readText(join(proc, String(tgid), 'comm'));
      if (leader !== null) command = leader.trim().slice(0, 64);
    }
    return { pid: tgid, command, user: await this.userOf(s.uid) };
  }

  /**
   * The owner of each QP asked, in order. What names the owner comes from the host or the capture (a
   * task's comm any user sets, a user name, a recorded note): escaped and bounded here, once, for
   * every output.
   */
  async owners(qps: readonly { qpn: number; creatorPid: number | null }[]): Promise<QpOwner[]> {
    return (await this.rawOwners(qps)).map(boundedOwner);
  }

  private async rawOwners(qps: readonly { qpn: number; creatorPid: number | null }[]): Promise<QpOwner[]> {
    if (qps.length === 0) return [];
    const recorded = await this.recorded();
    const rdma = recorded ? { qps: null, reason: null } : await this.rdmaQps();
    const out: QpOwner[] = [];
    for (const q of qps) {
      const rec = recorded?.get(q.qpn);
      if (rec) {
        out.push({
          qpn: q.qpn,
          pid: rec.pid ?? null,
          command: rec.command ?? null,
          user: rec.user ?? null,
          source: 'recorded',
          note: rec.note ? `${rec.note} (when captured)` : 'as it was when captured',
        });
        continue;
      }
      out.push(await this.ownerOf(q, rdma.qps?.get(q.qpn), rdma.reason));
    }
    return out;
  }

  private async ownerOf(
    q: { qpn: number; creatorPid: number | null },
    r: RdmaQp | undefined,
    rdmaReason: string | null,
  ): Promise<QpOwner> {
    // Each owner is written out field by field, not spread from a shared base: V8 (Node 20) adds every property
    // that follows an object spread through its runtime, and this runs for every QP of every round.
    const qpn = q.qpn;
    if (r) {
      if (r.pid === null) {
        return { qpn, pid: null, command: r.command, user: null, source: 'rdma', note: 'a kernel QP' };
      }
      const p = await this.processOf(r.pid);
      if (!p) {
        return { qpn, pid: r.pid, command: r.command, user: null, source: 'rdma', note: 'its process has just exited' };
      }
      return { qpn, pid: p.pid, command: p.command ?? r.command, user: p.user, source: 'rdma', note: null };
    }
    const why = rdmaReason ?? (this.live ? 'rdma does not list it' : null);
    const fallback = (note: string): QpOwner => ({
      qpn,
      pid: null,
      command: null,
      user: null,
      source: 'qp_stats',
      note: why ? `${note}; ${why}` : note,
    });
    const pid = q.creatorPid;
    if (pid === null) return fallback('not known: qp_stats gives no PID');
    if (pid === 0) return { qpn, pid: null, command: null, user: null, source: 'qp_stats', note: 'a kernel QP (PID 0)' };
    const p = await this.processOf(pid);
    if (!p) return fallback(`its creating thread ${pid} has exited; the QP lives on in a process /proc no longer ties to it`);
    return Object.assign(
      fallback(`qp_stats' PID ${pid} (the creating thread) as /proc shows it now: the pid may have been reused since`),
      p,
    );
  }
}
