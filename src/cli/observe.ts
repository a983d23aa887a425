// Observing engines over successive samples, shared by engines, watch and health: one classifier
// track per engine, each distinct source warning said once, and a gone device said once.
import type { Backend, EngineSample, Unit } from '../backend.js';
import { EXIT_CODES } from '../errors.js';
import { type Classification, classify, DEFAULT_CLASSIFY_OPTIONS, type EngineTrack, newTrack } from '../progress/classify.js';
import type { Io } from './io.js';
import { isFrozenCapture } from './pace.js';

/** One engine of one round: the unit, the sample and the classifier's answer. */
export interface Row {
  unit: Unit;
  s: EngineSample;
  c: Classification;
}

/** Classifier settings per unit: the stall window, the recovery window. */
export interface ObserveOptions {
  stallMs: number;
  recoveryMs?: number;
}

/** Samples every selected unit each round and classifies each engine against its own history. */
export class Observer {
  private readonly tracks = new Map<string, EngineTrack>();
  private readonly frozen: boolean;

  constructor(
    backend: Backend,
    private readonly units: readonly Unit[],
    private readonly opts: ObserveOptions,
  ) {
    this.frozen = isFrozenCapture(backend);
  }

  /** Sample every unit once and classify every engine. */
  async round(): Promise<Row[]> {
    const rows: Row[] = [];
    for (const unit of this.units) {
      const opts = {
        ...DEFAULT_CLASSIFY_OPTIONS,
        stallMs: this.opts.stallMs,
        ...(this.opts.recoveryMs === undefined ? {} : { recoveryMs: this.opts.recoveryMs }),
        descqCnt: unit.info.descqCnt,
        frozen: this.frozen,
      };
      for (const s of await unit.sample()) {
        // By name: unit numbers repeat across modules (hfi1_0, hfi2_0).
        const key = `${unit.info.name}/${s.engine}`;
        let track = this.tracks.get(key);
        if (!track) {
          track = newTrack();
          this.tracks.set(key, track);
        }
        rows.push({ unit, s, c: classify(track, s, opts) });
      }
    }
    return rows;
  }
}

/** Says each distinct source warning (by key) once per run, on stderr. */
export class WarningSayer {
  private readonly said = new Set<string>();

  constructor(private readonly io: Io) {}

  /** Print the warnings of `units` not said yet. */
  say(units: readonly Unit[]): void {
    for (const unit of units) {
      for (const w of unit.warnings?.() ?? []) {
        const key = `${unit.info.name}\0${w.key}\0${w.path}`;
        if (this.said.has(key)) continue;
        this.said.add(key);
        this.io.stderr(`hfi1-sdma: warning: ${w.message.startsWith(w.path) ? w.message : `${w.path}: ${w.message}`}\n`);
      }
    }
  }
}

/** The units with an engine that reads as gone, in order, each once. */
export function goneUnits(rows: readonly { unit: Unit; s: EngineSample }[]): Unit[] {
  const out: Unit[] = [];
  for (const { unit, s } of rows) if (s.gone && !out.includes(unit)) out.push(unit);
  return out;
}

/** The one line that says a unit is gone and what to do. */
export function goneMessage(unit: Unit): string {
  const pci = unit.info.pci ? ` and 'lspci -s ${unit.info.pci}'` : '';
  return `${unit.info.name}: device gone: its registers read all-ones (the adapter was reset or fell off the PCI bus); check 'dmesg'${pci}, then reload the ${unit.info.flavour.module} driver or reboot`;
}

/** Exit status of a read command: 69 (E_DEVICE_GONE) after saying so on stderr when a unit is gone, else 0. */
export function goneStatus(io: Io, rows: readonly { unit: Unit; s: EngineSample }[]): number {
  const gone = goneUnits(rows);
  for (const unit of gone) io.stderr(`hfi1-sdma: ${goneMessage(unit)}\n`);
  return gone.length > 0 ? EXIT_CODES.E_DEVICE_GONE : 0;
}
