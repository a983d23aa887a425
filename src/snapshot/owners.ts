// What a snapshot records of whose the waiting QPs are: at each instant, the owner of every QP that qp_stats shows
// waiting (at most MAX_RECORDED_OWNERS), found as a live read finds it (rdma's resource tracking on a live host,
// else qp_stats' PID checked in /proc), written as .hfi1-sdma/qp-owners.json in the instant; a replay names the
// owners as they were then (the processes are not in the snapshot).
import type { Clock } from '../backend.js';
import type { FoundUnit } from '../hw/discover.js';
import type { HwFs } from '../hw/fsio.js';
import { parseQpStats } from '../hw/parse/qp-stats.js';
import { QpOwnerReader, RECORDED_OWNERS } from '../hw/qp-owners.js';
import { qpWaiters } from '../progress/waiters.js';

/** The most owners one instant records. */
export const MAX_RECORDED_OWNERS = 1000;

export { RECORDED_OWNERS };

/** One reader per unit, kept across the instants of a capture (rdma is asked at most once per 5 s). */
export class OwnerRecorder {
  private readonly readers = new Map<string, QpOwnerReader>();

  constructor(
    private readonly fs: HwFs,
    private readonly clock: Clock,
  ) {}

  /** The owners of the QPs waiting now on `units`, as the JSON an instant holds; null when none waits. */
  async record(units: readonly FoundUnit[]): Promise<Buffer | null> {
    const owners: object[] = [];
    for (const u of units) {
      let records: ReturnType<typeof parseQpStats>['records'];
      try {
        records = parseQpStats(await this.fs.readFile(u.paths.qpStats, 100 << 20)).records;
      } catch {
        continue; // no qp_stats here: no QP can be seen waiting
      }
      const qps = qpWaiters(records, 0)
        .flatMap((w) => (w.kind === 'qp' ? [{ qpn: w.qpn, creatorPid: w.creatorPid ?? null }] : []))
        .slice(0, MAX_RECORDED_OWNERS - owners.length);
      if (qps.length === 0) continue;
      let reader = this.readers.get(u.name);
      if (!reader) {
        reader = new QpOwnerReader(u.name, u.paths.procDir, this.fs, this.clock);
        this.readers.set(u.name, reader);
      }
      for (const o of await reader.owners(qps)) owners.push({ device: u.name, ...o });
    }
    return owners.length === 0 ? null : Buffer.from(`${JSON.stringify({ owners }, null, 1)}\n`);
  }
}
