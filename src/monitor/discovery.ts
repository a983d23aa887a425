// Which units the monitor reads. The live host's units are found when its backend is opened, so the
// monitor opens it afresh after a round that missed a unit (none listed, or one not read) and every
// `rediscoverMs` (a driver reloaded between two rounds): a unit that appears is read, one that comes
// back under another build or engine window is read as it now is, and one no longer listed is kept
// as vanished (said gone) until it is back, unless its PCI device now carries another unit (renamed).
import type { Backend, Unit, UnitInfo } from '../backend.js';
import { StoppedError } from '../cleanup.js';

/** What decides a unit's reader: when any of it changes, the unit is opened again. */
function signature(info: UnitInfo): string {
  const f = info.flavour;
  return JSON.stringify([info.name, info.pci, f.module, f.chip, f.driver, f.ports, info.engineIds, info.descqCnt]);
}

/** Settings of the discovery. */
export interface DiscoveryOptions {
  /** The caller's backend (never closed here). */
  backend: Backend;
  /** Open the backend afresh; without it the units are listed once. */
  reopen?: (() => Promise<Backend>) | undefined;
  /** Open afresh at least this often (ms of the exporter's clock). */
  rediscoverMs: number;
  /** Report a listing problem (null: none). */
  problem: (message: string | null) => void;
}

/** The units to read each round, listed afresh when one was missed or the period passed. */
export class UnitDiscovery {
  /** Units listed before and no longer listed (their device vanished), by name. */
  readonly vanished = new Map<string, UnitInfo>();
  private backend: Backend;
  private current: Unit[] | null = null;
  private lastListedMs: number | null = null;

  constructor(private readonly o: DiscoveryOptions) {
    this.backend = o.backend;
  }

  /** The units of this round. `missed`: the last round missed a unit; `busy`: a sample still runs on the current backend. */
  async units(nowMs: number, missed: boolean, busy: boolean): Promise<Unit[]> {
    const periodic = this.lastListedMs !== null && nowMs - this.lastListedMs >= this.o.rediscoverMs;
    this.lastListedMs ??= nowMs;
    // A sample still running on the current backend must not lose its files under it: wait for it to settle.
    if (!this.o.reopen || busy || !(missed || periodic)) return this.current ?? this.list();
    this.lastListedMs = nowMs;
    let fresh: Backend;
    let infos: UnitInfo[];
    try {
      fresh = await this.o.reopen();
    } catch (e) {
      this.o.problem(`cannot list units: ${(e as Error).message}`);
      return this.current ?? [];
    }
    try {
      infos = await fresh.units();
    } catch (e) {
      await fresh.close();
      this.o.problem(`cannot list units: ${(e as Error).message}`);
      return this.current ?? [];
    }
    const same = (a: readonly UnitInfo[], b: readonly UnitInfo[]) =>
      a.map(signature).sort().join('\n') === b.map(signature).sort().join('\n');
    if (
      !missed &&
      this.current &&
      same(
        infos,
        this.current.map((u) => u.info),
      )
    ) {
      // Nothing changed: keep the open units (and what they carry across rounds).
      await fresh.close();
      return this.current;
    }
    const old = this.backend;
    const before = this.current ?? [];
    this.backend = fresh;
    this.current = null;
    if (old !== this.o.backend) await old.close();
    const units = await this.list();
    const names = new Set(units.map((u) => u.info.name));
    const pcis = new Set(units.map((u) => u.info.pci).filter((p) => p !== ''));
    const renamed = (info: UnitInfo) => info.pci !== '' && pcis.has(info.pci);
    for (const u of before) if (!names.has(u.info.name) && !renamed(u.info)) this.vanished.set(u.info.name, u.info);
    for (const [name, info] of this.vanished) if (names.has(name) || renamed(info)) this.vanished.delete(name);
    return units;
  }

  /** Close the backend opened here, if any. */
  async close(): Promise<void> {
    if (this.backend !== this.o.backend) await this.backend.close();
  }

  /** List the current backend's units; an empty or failed listing is retried next round. */
  private async list(): Promise<Unit[]> {
    try {
      const infos = await this.backend.units();
      const units = await Promise.all(infos.map((u) => this.backend.unit(u.name)));
      const none = units.length === 0 && this.vanished.size === 0;
      this.o.problem(none ? 'no hfi1 or hfi2 unit found; none is read until one appears' : null);
      if (units.length > 0) this.current = units;
      return units;
    } catch (e) {
      // A stop during the emulator's warm-up is no listing problem: the run ends, showing nothing.
      if (e instanceof StoppedError) throw e;
      this.o.problem(`cannot list units: ${(e as Error).message}`);
      return [];
    }
  }
}
