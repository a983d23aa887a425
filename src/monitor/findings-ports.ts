// The findings of the port side of a round: engines stalled by the fabric or while their port's link fails (said by
// unit and port, never as a host stall), IPoIB queues the netdev watchdog timed out, link events (a flap, a port that
// lost its link, a retraining link) and the settings that make idle engines normal (the bulk service, SDMA off).

import type { Waiter } from '../backend.js';
import type { StallCause } from '../progress/cause.js';
import { engineIdsText } from '../progress/engine-ids.js';
import { type Finding, type FindingHistory, finding } from './findings.js';
import type { EngineRound, UnitRound } from './round.js';
import { ageText, portActive, portsText, whoText } from './words.js';

/**
 * An IPoIB queue whose last timeout block is at most this old (ms) is stuck now: the watchdog fires again every
 * watchdog_timeo (1 s) while the subqueue stays stopped (dev_watchdog, sch_generic.c).
 */
export const IPOIB_STUCK_MS = 3000;

/** A link event (LinkDowned or LinkErrorRecovery rising) is said for this long after it was seen (ms). */
export const LINK_EVENT_HOLD_MS = 15 * 60_000;

/** The stall is the fabric's or the link's, not the host's. */
export function offHost(e: EngineRound): boolean {
  return e.verdict.verdict === 'stalled' && (e.cause?.cause === 'fabric' || e.cause?.cause === 'link');
}

/** ` (host: port 1 ACTIVE and XmitWait flat: …)` for a stall whose ports clear the fabric and the link. */
export function hostCauseText(e: EngineRound): string {
  return e.cause?.cause === 'host' ? ` (host: ${e.cause.why})` : '';
}

const NEXT: Record<Exclude<StallCause, 'host'>, (port: number) => string> = {
  fabric: (port) =>
    `not a host fault: check the switch port at the other end of port ${port} ('opareport -o errors' for both ends, 'opainfo' for the port), its congestion and the cable; the engines resume once credits return`,
  link: (port) =>
    `check the cable and the switch port of port ${port}: 'opainfo' shows its physical state and link-down reason, 'opareport -o errors' the errors of both ends; the engines resume once the link trains`,
};

/** One finding per port and cause for the engines the fabric or the link stalled. */
function causeFindings(u: UnitRound, out: Finding[]): void {
  const name = u.info.name;
  const groups = new Map<string, EngineRound[]>();
  for (const e of u.engines) {
    if (!offHost(e) || !e.cause) continue;
    const key = `${e.cause.cause}/${e.cause.port ?? 0}`;
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }
  for (const [key, es] of groups) {
    const [cause, portText] = key.split('/') as ['fabric' | 'link', string];
    const port = Number(portText);
    const first = es[0] as EngineRound;
    const ages = es.map((e) => (e.verdict.stuckSinceMs === null ? 0 : e.sample.timeMs - e.verdict.stuckSinceMs));
    const age = Math.max(...ages);
    const atLeast = es.some((e) => e.verdict.stuckAtLeast);
    const engines = engineIdsText(es.map((e) => e.sample.engine));
    const what = cause === 'fabric' ? 'stalled by the fabric' : "stalled while the port's link fails";
    out.push(
      finding(
        cause === 'fabric' ? 'fabricStall' : 'linkStall',
        { unit: name, engine: es.length === 1 ? first.sample.engine : null, port: port || null },
        `${name} port ${port || '?'}: ${es.length} engine(s) ${what} for ${ageText(age, atLeast)} (sdma${engines}): ${first.cause?.why ?? ''}`,
        { weight: es.length, ageMs: age, ageAtLeast: atLeast, action: NEXT[cause](port) },
      ),
    );
  }
}

/** Whether a waiter is an IPoIB queue the netdev watchdog timed out within IPOIB_STUCK_MS of `nowMs` (the waiters' read). */
export function ipoibStuckNow(w: Waiter, nowMs: number | null): boolean {
  const ev = w.kind === 'ipoib' ? w.evidence : undefined;
  return nowMs !== null && ev !== undefined && ev.lastTimeoutMs !== null && nowMs - ev.lastTimeoutMs <= IPOIB_STUCK_MS;
}

/** A finding per IPoIB queue that the netdev watchdog timed out within IPOIB_STUCK_MS of the waiters' read. */
function ipoibFindings(u: UnitRound, out: Finding[]): void {
  const name = u.info.name;
  const now = u.waiters.timeMs;
  if (now === null) return;
  for (const j of u.waiters.judgements) {
    const w = j.waiter;
    const ev = w.kind === 'ipoib' ? w.evidence : undefined;
    if (w.kind !== 'ipoib' || !ev || !ipoibStuckNow(w, now)) continue;
    const engine = w.engine === null ? 'an unknown engine' : `sdma${w.engine}`;
    const details = [
      ev.timeouts === null ? null : `${ev.timeouts} timeout(s)`,
      ev.noDesc === 1 ? 'no_desc 1: it waits for SDMA descriptors' : null,
      ev.waitQueued === true ? "on the engine's wait list" : null,
      ev.used === null ? null : `${ev.used} txreq(s) in flight`,
    ].filter((d): d is string => d !== null);
    out.push(
      finding(
        'ipoibStuck',
        { unit: name, engine: w.engine },
        `${name} ${engine} IPoIB queue ${whoText(w)} stuck: its subqueue stayed stopped past the netdev watchdog (1 s)${details.length ? `; ${details.join(', ')}` : ''}`,
        {
          ageMs: now - w.sinceMs,
          ageAtLeast: j.ageAtLeast,
          action:
            w.engine === null
              ? `decode the timeout blocks with 'hfi1-sdma log' (they name the engine); 'ip -s link show ${w.netdev ?? 'ib0'}'`
              : `run 'hfi1-sdma --unit ${name} show ${w.engine}': a stalled engine is the cause, an idle one a lost wake-up (traffic on its VL releases it); 'hfi1-sdma log' decodes the timeout blocks; capture 'hfi1-sdma snapshot' before bringing ${w.netdev ?? 'the netdev'} down`,
        },
      ),
    );
  }
}

/** Link events: a flap, a port that lost its link without being seen ACTIVE, a link that retrains. */
function linkEventFindings(u: UnitRound, h: FindingHistory, out: Finding[]): void {
  const name = u.info.name;
  const now = u.engines[0]?.sample.timeMs ?? null;
  const marks = h.portMarks instanceof Map ? h.portMarks : new Map();
  for (const p of u.ports) {
    if (p.state === null) continue;
    const action = `check the cable and the switch port of port ${p.port}: 'opainfo' shows its physical state and link-down reason, 'opareport -o errors' the errors of both ends`;
    const at = { unit: name, port: p.port };
    const mark = marks.get(`${name}/${p.port}`);
    const recent = (t: number | null | undefined) => now !== null && typeof t === 'number' && now - t <= LINK_EVENT_HOLD_MS;
    const seen = h.activeSeen.has(`${name}/${p.port}`);
    if (mark && recent(mark.downRiseMs) && portActive(p)) {
      out.push(
        finding(
          'linkFlap',
          at,
          `${name} port ${p.port} link went down and came back (LinkDowned +${mark.downRises} while watched): ACTIVE again`,
          {
            action,
          },
        ),
      );
    }
    const downed = u.portCounters.find((c) => c.port === p.port)?.values.linkDowned ?? null;
    if (!portActive(p) && !seen && downed !== null && downed > 0n) {
      out.push(
        finding(
          'portLost',
          at,
          `${name} port ${p.port} lost its link: ${portsText([p])}, LinkDowned ${downed} (it had a link since the driver loaded)`,
          { action },
        ),
      );
    }
    if (mark && recent(mark.lerRiseMs)) {
      out.push(
        finding('linkRetrain', at, `${name} port ${p.port} link retraining: LinkErrorRecovery +${mark.lerRises} while watched`, {
          action,
        }),
      );
    }
  }
}

/** The settings that make idle engines normal: the bulk service on, SDMA off in cap_mask. */
function settingsFindings(u: UnitRound, out: Finding[]): void {
  const name = u.info.name;
  const s = u.info.settings;
  if (!s) return;
  if (s.useBulksvc === true) {
    const own = s.bulkServiceEngines.length > 0 ? `; it owns sdma${engineIdsText(s.bulkServiceEngines)}, judged idle` : '';
    out.push(
      finding(
        'bulkService',
        { unit: name },
        `${name} the bulk service carries verbs traffic (use_bulksvc=Y${own}): verbs messages over 2 KB and user verbs leave SDMA, so idle SDMA engines are expected`,
      ),
    );
  }
  if (s.sdmaEnabled === false) {
    out.push(
      finding(
        'sdmaOff',
        { unit: name },
        `${name} SDMA is off in cap_mask (${s.capMask ?? '?'}): the driver sends nothing through its engines, so every engine idle is expected`,
      ),
    );
  }
}

/** Every port-side finding of one readable unit. */
export function portSideFindings(u: UnitRound, h: FindingHistory, out: Finding[]): void {
  causeFindings(u, out);
  ipoibFindings(u, out);
  linkEventFindings(u, h, out);
  settingsFindings(u, out);
}
