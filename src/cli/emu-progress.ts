// What the emulator commands say on stderr while they run: `emu run`'s progress line with an ETA
// (only on a terminal), and `emu serve`'s line for each fault as it fires.
import { type FaultSpec, PORT_FAULTS } from '../emu/faults.js';
import { shortDuration } from './watch-screen.js';

/** Wall-clock time of day with milliseconds, `HH:MM:SS.mmm` (local time). */
export function wallTime(epochMs: number): string {
  const d = new Date(epochMs);
  const hms = [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
  return `${hms}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}

/** The wall time left, from the pace so far; null until any virtual time has passed. */
export function etaMs(doneVirtualMs: number, totalVirtualMs: number, elapsedWallMs: number): number | null {
  if (doneVirtualMs <= 0) return null;
  return Math.max(0, (elapsedWallMs / doneVirtualMs) * (totalVirtualMs - doneVirtualMs));
}

/** One progress line of `emu run` (carriage return first, so it redraws in place). */
export function progressLine(doneMs: number, totalMs: number, elapsedWallMs: number): string {
  const width = 30;
  const filled = Math.round((doneMs / totalMs) * width);
  const eta = etaMs(doneMs, totalMs, elapsedWallMs);
  const pct = Math.floor((doneMs / totalMs) * 100);
  return `\r[${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${doneMs.toFixed(0)}/${totalMs} ms virtual ${String(pct).padStart(3)}%  ETA ${eta === null ? '?' : shortDuration(eta)}\x1b[K`;
}

/** Says each fault of `faults` once, as the emulator's virtual time reaches it. */
export class FaultAnnouncer {
  private readonly said = new Set<number>();

  constructor(
    private readonly faults: readonly FaultSpec[],
    private readonly say: (line: string) => void,
    private readonly wallNowMs: () => number,
  ) {}

  /** Say the faults whose time `virtualMs` has reached and that were not said yet. */
  reached(virtualMs: number): void {
    this.faults.forEach((f, i) => {
      if (this.said.has(i) || f.atMs > virtualMs) return;
      this.said.add(i);
      const where = PORT_FAULTS.includes(f.name)
        ? f.port === null
          ? 'every port'
          : `port ${f.port}`
        : f.engine === null
          ? 'every engine'
          : `engine ${f.engine}`;
      this.say(
        `emu serve: fault ${f.text} fired at ${f.atMs} ms virtual time on ${where}; wall clock ${wallTime(this.wallNowMs())} (seen at ${virtualMs.toFixed(0)} ms virtual)\n`,
      );
    });
  }
}
