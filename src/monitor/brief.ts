// The fleet-stable words of a finding: a short word per kind and the place it names, with no count, age, rate or
// text of the host's, so that every host with the same problem prints the same bytes (ClusterShell's `clush -b`
// and pdsh's `dshbak -c` fold hosts only on identical output); and the kinds whose cause lies off this host.
import { engineIdsText } from '../progress/engine-ids.js';
import { type FindingKindName, KIND_RANK } from './codes.js';

/** One word (hyphenated) per kind of finding: what `health --brief` and the NHC drain reason say after the code. */
export const BRIEF_WORDS: Readonly<Record<FindingKindName, string>> = {
  gone: 'gone',
  vanished: 'vanished',
  stranded: 'stranded',
  stalled: 'stalled',
  fabricStall: 'fabric-stall',
  linkStall: 'link-stall',
  ipoibStuck: 'ipoib-stuck',
  halted: 'halted',
  unreadable: 'unreadable',
  noUnit: 'no-unit',
  unjudged: 'unjudged',
  probable: 'probably-stranded',
  psmStall: 'psm-stall',
  noActivePort: 'no-active-port',
  portDown: 'port-down',
  portLost: 'port-lost',
  linkFlap: 'link-flap',
  linkRetrain: 'link-retrain',
  notRunning: 'not-running',
  orphanedWaiters: 'orphaned-waiters',
  orphanedWork: 'orphaned-work',
  errors: 'errors',
  correctable: 'correctable',
  full: 'full',
  probableShort: 'probably-stranded',
  errQp: 'err-qp',
  reduced: 'reduced-view',
  invisible: 'invisible-waiters',
  bulkService: 'bulk-service',
  sdmaOff: 'sdma-off',
  psmUnjudged: 'psm-unjudged',
};

/**
 * Kinds whose cause lies off this host: engines stalled because the fabric withholds credits (SD109). Draining
 * the node does not help it, and a congested switch would drain every node behind it; the NHC check and
 * `health --off-host` level them down. A stall while the port's own link fails (SD110) is not among them:
 * whatever broke the link, jobs on this node cannot send.
 */
export const OFF_HOST_KINDS: ReadonlySet<FindingKindName> = new Set<FindingKindName>(['fabricStall']);

/** The brief word of a kind; a kind this version does not know (from a newer one's JSON) as its name, hyphenated. */
export function briefWord(kind: string): string {
  return BRIEF_WORDS[kind as FindingKindName] ?? kind.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/** What a brief line needs of a finding. */
export interface BriefFinding {
  level: string;
  kind: string;
  code: string;
  unit: string | null;
  engine: number | null;
  port: number | null;
}

/** The place a finding names: `hfi1_0 sdma5`, `hfi1_0 port1`, `hfi1_0`, or nothing. */
export function placeText(unit: string | null, engines: readonly number[], port: number | null): string {
  return [unit, engines.length ? `sdma${engineIdsText(engines)}` : null, port === null ? null : `port${port}`]
    .filter((p): p is string => p !== null)
    .join(' ');
}

/**
 * One line per problem, in the order given (worst first): `CRITICAL SD201 hfi1_0 sdma5 stranded`. Findings of one
 * level, code, unit and port fold into one line with their engines as a set (`sdma0-3,7`).
 */
export function briefLines(findings: readonly BriefFinding[]): string[] {
  const groups = new Map<string, { f: BriefFinding; engines: number[] }>();
  for (const f of findings) {
    const key = `${f.level}\0${f.code}\0${f.unit ?? ''}\0${f.port ?? ''}\0${f.engine === null ? 'u' : 'e'}`;
    const g = groups.get(key);
    if (g) {
      if (f.engine !== null && !g.engines.includes(f.engine)) g.engines.push(f.engine);
    } else groups.set(key, { f, engines: f.engine === null ? [] : [f.engine] });
  }
  return [...groups.values()].map(({ f, engines }) => {
    const place = placeText(
      f.unit,
      [...engines].sort((a, b) => a - b),
      f.port,
    );
    return `${f.level} ${f.code}${place ? ` ${place}` : ''} ${briefWord(f.kind)}`;
  });
}

/** Sort key for findings of one level in brief output: the kinds' rank, then unit, port and engine. */
export function briefOrder(a: BriefFinding, b: BriefFinding): number {
  return (
    (KIND_RANK.get(a.kind) ?? KIND_RANK.size) - (KIND_RANK.get(b.kind) ?? KIND_RANK.size) ||
    (a.unit ?? '').localeCompare(b.unit ?? '') ||
    (a.port ?? 0) - (b.port ?? 0) ||
    (a.engine ?? -1) - (b.engine ?? -1)
  );
}
