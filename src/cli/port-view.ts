// How the commands show the port side of a unit: every port's counters (engines --json, show), their rates between
// two rounds (watch's wide layout), the driver settings that make idle engines normal (the engines header, doctor),
// and the cause of a stalled engine (JSON).
import type { PortCounterName, PortCounters, UnitSettings } from '../backend.js';
import { PORT_COUNTER_NAMES } from '../hw/parse/port-counters.js';
import type { UnitRound } from '../monitor/round.js';
import type { CauseJudgement } from '../progress/cause.js';
import { engineIdsText } from '../progress/engine-ids.js';

/** The names the counters are shown by (the OPA PortCounters names an operator meets in opainfo and opareport). */
export const PORT_COUNTER_LABELS: Readonly<Record<PortCounterName, string>> = {
  xmitWait: 'XmitWait',
  xmitData: 'XmitData',
  xmitPackets: 'XmitPkts',
  xmitDiscards: 'XmitDiscards',
  linkDowned: 'LinkDowned',
  linkErrorRecovery: 'LinkErrorRecovery',
  rcvErrors: 'RcvErrors',
  dmaWait: 'DmaWait',
};

/**
 * One port's counters in JSON (docs/json.md): 64-bit values as 0x hex strings (a flit counter passes 2^53 within
 * weeks at line rate, so numbers would lose digits), null when unknown; where each came from, which saturated.
 */
export function portCountersJson(p: PortCounters) {
  const values = Object.fromEntries(
    PORT_COUNTER_NAMES.map((n) => {
      const v = p.values[n];
      return [n, v === null ? null : `0x${v.toString(16)}`];
    }),
  ) as Record<PortCounterName, string | null>;
  return { port: p.port, ...values, sources: { ...p.sources }, saturated: [...p.saturated] };
}

/** The cause of a stalled engine in JSON, or null. */
export function causeJson(c: CauseJudgement | null | undefined) {
  return c ? { cause: c.cause, port: c.port, why: c.why } : null;
}

/** The settings in JSON (docs/json.md). */
export function settingsJson(s: UnitSettings) {
  return { ...s, bulksvc: { ...s.bulksvc }, bulkServiceEngines: [...s.bulkServiceEngines], evidence: [...s.evidence] };
}

/** The settings as the engines header says them, with what they imply; empty when there is nothing to say. */
export function settingsLine(s: UnitSettings | undefined): string {
  if (!s) return '';
  const parts: string[] = [];
  if (s.useBulksvc === true) {
    const own = s.bulkServiceEngines.length ? `, owns sdma${engineIdsText(s.bulkServiceEngines)}` : '';
    parts.push(
      `use_bulksvc Y (the bulk service carries verbs messages over 2 KB and user verbs off SDMA${own}: idle engines expected)`,
    );
  } else if (s.useBulksvc === false) parts.push('use_bulksvc N');
  if (s.numSdma !== null) parts.push(`num_sdma ${s.numSdma}`);
  if (s.numVls !== null) parts.push(`num_vls ${s.numVls}`);
  if (s.capMask !== null) {
    parts.push(`cap_mask ${s.capMask} (${s.sdmaEnabled === false ? 'SDMA off: no engine is used' : 'SDMA on'})`);
  }
  return parts.length ? `  settings  ${parts.join('  ')}\n` : '';
}

/** One line per port of its counters, as `show` prints them. */
export function portCounterLines(ports: readonly PortCounters[]): string {
  return ports
    .map((p) => {
      const vals = PORT_COUNTER_NAMES.map(
        (n) =>
          `${PORT_COUNTER_LABELS[n]} ${p.values[n] === null ? '-' : String(p.values[n])}${p.saturated.includes(n) ? ' (saturated)' : ''}`,
      ).join('  ');
      const from = [...new Set(Object.values(p.sources))].join(', ') || 'none';
      return `  port ${p.port} counters  ${vals}  (from ${from})\n`;
    })
    .join('');
}

/** A rate as the screen shows it: 950/s, 12.3k/s, 4.1M/s, 2.2G/s. */
export function rateText(perSec: number): string {
  const a = Math.abs(perSec);
  if (a < 1000) return `${Math.round(perSec)}/s`;
  if (a < 1e6) return `${(perSec / 1e3).toFixed(1)}k/s`;
  if (a < 1e9) return `${(perSec / 1e6).toFixed(1)}M/s`;
  return `${(perSec / 1e9).toFixed(1)}G/s`;
}

/** Each unit's ports' rates between two rounds (`XmitWait 1.2M/s sent 980.0M/s flits`), by unit name. */
export function portRates(
  prev: { timeMs: number; units: readonly UnitRound[] } | null,
  cur: { timeMs: number; units: readonly UnitRound[] },
): Map<string, string> {
  const out = new Map<string, string>();
  if (!prev) return out;
  const dt = (cur.timeMs - prev.timeMs) / 1000;
  if (!(dt > 0)) return out;
  for (const u of cur.units) {
    const before = prev.units.find((x) => x.info.name === u.info.name);
    if (!before) continue;
    const parts: string[] = [];
    for (const p of u.portCounters) {
      const q = before.portCounters.find((x) => x.port === p.port);
      const rate = (n: PortCounterName) => {
        const a = q?.values[n];
        const b = p.values[n];
        return a === null || a === undefined || b === null || b < a ? null : Number(b - a) / dt;
      };
      const wait = rate('xmitWait');
      const data = rate('xmitData');
      const downed = rate('linkDowned');
      if (wait === null && data === null) continue;
      const down = downed !== null && downed > 0 ? ' LINK DOWNED' : '';
      parts.push(
        `port ${p.port} XmitWait ${wait === null ? '-' : rateText(wait)} sent ${data === null ? '-' : `${rateText(data)} flits`}${down}`,
      );
    }
    if (parts.length) out.set(u.info.name, parts.join(', '));
  }
  return out;
}
