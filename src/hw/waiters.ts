// The waiters of one live unit (Unit.waiters): QPs from debugfs qp_stats (their sleep times, or themselves when
// qp_stats cannot be read, from the hfi1_qpsleep/qpwakeup trace events when someone enabled them), PSM writers from
// /proc, their engine from the hfi1_usdma_* trace events when enabled; IPoIB queues once the netdev watchdog timed
// them out (waiters-ipoib.ts).
// `sinceMs` is carried across calls (carrySince) from the set of the previous call, on the backend's clock.
import type { Clock, WaitersSample } from '../backend.js';
import { carrySince, visibilityOf, type Waiter, withQpSleeps } from '../progress/waiters.js';
import type { FoundUnit } from './discover.js';
import type { HwFs } from './fsio.js';
import { IpoibQueues } from './waiters-ipoib.js';
import { PsmScanner, type PsmScanOptions } from './waiters-psm.js';
import { layoutOfRelease, readQpWaiters } from './waiters-qp.js';
import { QpStatsMemo } from './waiters-qp-memo.js';
import { qpTraceDir, readQpSleeps, readUptimeSec, readUsdmaEngines, usdmaTraceStatus } from './waiters-trace.js';
import type { WarningLog } from './warnings.js';

/** The waiter reader of one unit: keeps the previous set to carry `sinceMs`. */
export class UnitWaiters {
  private previous: Waiter[] = [];
  private readonly psm: PsmScanner;
  private readonly qpStats = new QpStatsMemo();
  private readonly ipoib: IpoibQueues;

  constructor(
    private readonly found: FoundUnit,
    private readonly clock: Clock,
    private readonly fs: HwFs,
    private readonly log: WarningLog,
    private readonly kernelRelease: string | null,
    psmOpts: PsmScanOptions = {},
  ) {
    this.psm = new PsmScanner(fs, found.paths.procDir, found.unit, log, psmOpts, found.module, found.paths.verbsDir);
    this.ipoib = new IpoibQueues(fs, found);
  }

  /** Close what the reader keeps open (the kernel log). */
  close(): void {
    this.ipoib.close();
  }

  /** The waiters now, with what can and cannot be seen. */
  async read(): Promise<WaitersSample> {
    const timeMs = this.clock.nowMs();
    const qp = await readQpWaiters(
      this.fs,
      this.found.paths,
      this.log,
      timeMs,
      layoutOfRelease(this.kernelRelease),
      this.qpStats,
    );
    const qpTrace = await qpTraceDir(this.fs, this.found.paths);
    const qpSeen =
      qpTrace === null
        ? qp
        : withQpSleeps(
            qp,
            await readQpSleeps(this.fs, qpTrace, this.found.pci, this.log),
            timeMs,
            await readUptimeSec(this.fs, this.found.paths),
          );
    const psm = await this.psm.scan(timeMs);
    let psmWaiters = psm.waiters;
    if (psmWaiters.length > 0) {
      const trace = await usdmaTraceStatus(this.fs, this.found.paths);
      if (trace.readable && trace.dir) {
        const engines = await readUsdmaEngines(this.fs, trace.dir, this.found.pci, this.log);
        psmWaiters = psmWaiters.map((w) =>
          w.kind === 'psm' && engines.has(w.pid) ? { ...w, engine: engines.get(w.pid) as number } : w,
        );
      }
    }
    const ipoib = await this.ipoib.read(timeMs);
    const waiters = carrySince(this.previous, [...qpSeen.waiters, ...psmWaiters, ...ipoib.waiters]);
    this.previous = waiters;
    return {
      unit: this.found.unit,
      timeMs,
      waiters,
      visibility: visibilityOf([qpSeen.visibility, psm.visibility, ipoib.visibility]),
    };
  }
}
