// The exporter's view of a unit's waiters: read each round beside the engines and judged by the
// stranded-waiter rule (one track per unit, kept across rounds).
import type { EngineSample, Unit, WaitersSample } from '../backend.js';
import { newStrandTrack, type StrandTrack } from '../progress/strand.js';
import { type ObservedWaiters, observeWaiters } from '../waiter-observer.js';

/** The waiters of one unit in one round (psmStalls: since the exporter started). */
export type UnitWaiters = ObservedWaiters;

/** Judges every unit's waiters round after round. */
export class ExportWaiters {
  private readonly tracks = new Map<string, StrandTrack>();

  constructor(private readonly strandMs: number) {}

  /** Read `unit`'s waiters and judge them against this round's engine samples; failures make it unlisted. */
  async read(
    unit: Unit,
    engines: readonly EngineSample[],
    read: (p: Promise<WaitersSample>) => Promise<WaitersSample | null>,
  ): Promise<UnitWaiters> {
    const name = unit.info.name;
    const track = this.tracks.get(name) ?? newStrandTrack();
    this.tracks.set(name, track);
    return observeWaiters(unit, engines, track, { strandMs: this.strandMs, read });
  }

  /** Forget a unit that could not be read (its waiters warm up afresh). */
  forget(name: string): void {
    this.tracks.delete(name);
  }
}
