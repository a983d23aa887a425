// `health`: a Nagios plugin. Observes every engine long enough to confirm a stall (two-stage),
// then prints one status line with perfdata and one line per finding.
// Exit codes (Nagios plugin API): 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.
import type { Argv } from 'yargs';
import type { EngineSample, Unit } from '../backend.js';
import { isHfi1SdmaError } from '../errors.js';
import { type Classification, classify, DEFAULT_CLASSIFY_OPTIONS, newTrack } from '../progress/classify.js';
import { parseIntArg } from './args.js';
import type { CommandSpec } from './context.js';
import { pace } from './pace.js';
import { missingSources, selectedUnits, withBackend } from './units.js';

export const NAGIOS = { OK: 0, WARNING: 1, CRITICAL: 2, UNKNOWN: 3 } as const;
type Level = keyof typeof NAGIOS;

/** One finding: its level and the line that says it. */
export interface Finding {
  level: Level;
  text: string;
}

/**
 * Findings for one engine's final classification. `fullRounds` counts the rounds (after the
 * first) in which the engine was in backpressure: a full ring under load is normal, so only a
 * ring full in every round is a warning.
 */
export function findingsFor(name: string, s: EngineSample, c: Classification, fullRounds = 0, rounds = 1): Finding[] {
  const where = `${name} sdma${s.engine}`;
  const f: Finding[] = [];
  switch (c.verdict) {
    case 'stalled':
      f.push({
        level: 'CRITICAL',
        text: `${where} stalled (${c.reason}): ${c.inFlight ?? '?'} descriptors in flight, no head movement for ${c.stallMaxMs} ms`,
      });
      break;
    case 'halted':
      f.push({
        level: 'CRITICAL',
        text: `${where} halted (${c.reason}): state ${s.state ?? '?'}${c.errors.length ? `, errors ${c.errors.map((e) => e.name).join(',')}` : ''}`,
      });
      break;
    case 'gone':
      f.push({ level: 'CRITICAL', text: `${where} gone: registers read all-ones (device reset or removed)` });
      break;
  }
  if (fullRounds >= rounds) {
    f.push({
      level: 'WARNING',
      text: `${where} ring persistently full: descq_full_count rose in every sample (senders keep waiting for descriptors)`,
    });
  }
  if (c.orphanedWork)
    f.push({ level: 'WARNING', text: `${where} flush list non-empty beyond the recovery window: orphaned txreqs` });
  const soft = c.errors.filter((e) => !e.halts);
  if (soft.length && c.verdict !== 'halted')
    f.push({ level: 'WARNING', text: `${where} correctable error bits: ${soft.map((e) => e.name).join(',')}` });
  return f;
}

export const healthCommand: CommandSpec = {
  fallback: false,
  command: 'health',
  describe: 'Nagios plugin: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN; one line per finding',
  builder: (y: Argv) =>
    y
      .option('stall-ms', { type: 'string', default: '1000', describe: 'no head movement this long while in flight is a stall' })
      .epilogue(
        'Watches for 2 × --stall-ms (five samples, --stall-ms/2 apart) so that a stall that began before or early in the check is confirmed by a second sample; a halt or non-running state lasting --stall-ms is CRITICAL.',
      ),
  async run(args, ctx) {
    let stallMs: number;
    try {
      stallMs = parseIntArg('--stall-ms', args.stallMs, 1, 3_600_000);
    } catch (e) {
      ctx.io.stdout(`HFI1-SDMA UNKNOWN - ${(e as Error).message}\n`);
      return NAGIOS.UNKNOWN;
    }
    const intervalMs = Math.max(1, Math.ceil(stallMs / 2));
    try {
      return await withBackend(ctx, async (backend) => {
        const units = await selectedUnits(backend, ctx.global.unit);
        const tracks = new Map<string, ReturnType<typeof newTrack>>();
        const fullRounds = new Map<string, number>();
        let rounds = 0;
        let final: { unit: Unit; s: EngineSample; c: Classification }[] = [];
        for (let i = 0; i < 5; i++) {
          if (i > 0) await pace(backend, ctx.io, intervalMs);
          final = [];
          if (i > 0) rounds += 1;
          for (const unit of units) {
            // One window for both: a halt that outlasts the observation is a finding.
            const opts = { ...DEFAULT_CLASSIFY_OPTIONS, stallMs, recoveryMs: stallMs, descqCnt: unit.info.descqCnt };
            for (const s of await unit.sample()) {
              const key = `${s.unit}/${s.engine}`;
              const track = tracks.get(key) ?? newTrack();
              tracks.set(key, track);
              const c = classify(track, s, opts);
              if (i > 0 && c.verdict === 'backpressure') fullRounds.set(key, (fullRounds.get(key) ?? 0) + 1);
              final.push({ unit, s, c });
            }
          }
        }
        const order = { CRITICAL: 0, WARNING: 1, UNKNOWN: 2, OK: 3 };
        const findings = final
          .flatMap(({ unit, s, c }) => findingsFor(unit.info.name, s, c, fullRounds.get(`${s.unit}/${s.engine}`) ?? 0, rounds))
          .sort((a, b) => order[a.level] - order[b.level]);
        for (const unit of units) {
          const m = missingSources(unit.info);
          if (m && backend.kind === 'hw') findings.push({ level: 'OK', text: `note: ${m}` });
        }
        const worst: Level = findings.some((f) => f.level === 'CRITICAL')
          ? 'CRITICAL'
          : findings.some((f) => f.level === 'WARNING')
            ? 'WARNING'
            : 'OK';
        const count = (v: string) => final.filter((r) => r.c.verdict === v).length;
        const perf = [
          `engines=${final.length}`,
          `stalled=${count('stalled')};;1`,
          `halted=${count('halted')};;1`,
          `backpressure=${count('backpressure')};1`,
          ...final.map(
            ({ unit, s, c }) => `${unit.info.name}_sdma${s.engine}_inflight=${c.inFlight ?? 'U'};;;0;${unit.info.descqCnt - 1}`,
          ),
        ].join(' ');
        const problems = findings.filter((f) => f.level !== 'OK');
        const summary =
          problems.length === 0
            ? `${final.length} engines on ${units.length} unit(s) healthy (${backend.kind})`
            : `${problems.length} finding(s): ${problems[0]?.text}${problems.length > 1 ? ' ...' : ''}`;
        ctx.io.stdout(`HFI1-SDMA ${worst} - ${summary} | ${perf}\n${findings.map((f) => `${f.level}: ${f.text}\n`).join('')}`);
        return NAGIOS[worst];
      });
    } catch (e) {
      const msg = isHfi1SdmaError(e) ? e.message : String(e);
      ctx.io.stdout(`HFI1-SDMA UNKNOWN - ${msg}\n`);
      return NAGIOS.UNKNOWN;
    }
  },
};
