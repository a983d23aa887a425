// The fleet's answers rolled up: hosts grouped by finding (level, code and word), each group's hosts as a folded
// node set with its count and, under it, the places (`hfi1_0 sdma5`) and their hosts; then the UNKNOWN answers by
// reason, the hosts that printed no answer or nothing, and the healthy ones. The status is the largest code of
// any host, as `clush -S` exits. Pure.
import { type HostAnswer, LEVEL_CODE, type Level, worse } from './answer.js';
import { foldNodes } from './nodeset.js';

/** Hosts as one folded node set and how many. */
export interface HostSet {
  nodes: string;
  count: number;
}

/** One finding across the fleet. */
export interface FindingGroup extends HostSet {
  level: Exclude<Level, 'OK'>;
  code: string;
  word: string;
  places: (HostSet & { place: string })[];
}

/** The fleet's answer. */
export interface Rollup {
  status: Level;
  code: number;
  hosts: number;
  findings: FindingGroup[];
  /** UNKNOWN answers without a code, by reason. */
  unknown: (HostSet & { reason: string })[];
  /** Hosts that printed something, none of it an answer, by their first line. */
  noVerdict: (HostSet & { text: string })[];
  /** Hosts expected (--hosts) that printed nothing. */
  noAnswer: HostSet;
  ok: HostSet;
}

const ORDER: Record<Level, number> = { CRITICAL: 0, WARNING: 1, UNKNOWN: 2, OK: 3 };

/** Distinct hosts as one set (each host is answered once, so the list is its count). */
function setOf(hosts: readonly string[]): HostSet {
  return { nodes: foldNodes(hosts), count: hosts.length };
}

/** Group hosts by a key, keeping each key's first value. */
function groupBy<T>(items: Iterable<[string, T, string]>): Map<string, { value: T; hosts: string[] }> {
  const out = new Map<string, { value: T; hosts: string[] }>();
  for (const [key, value, host] of items) {
    const g = out.get(key);
    if (g) g.hosts.push(host);
    else out.set(key, { value, hosts: [host] });
  }
  return out;
}

/** Roll the answers up. */
export function rollup(answers: readonly HostAnswer[]): Rollup {
  let status: Level = 'OK';
  const findings = new Map<
    string,
    { g: Omit<FindingGroup, 'nodes' | 'count' | 'places'>; hosts: Set<string>; places: Map<string, Set<string>> }
  >();
  const unknown: [string, string, string][] = [];
  const noVerdict: [string, string, string][] = [];
  const silent: string[] = [];
  const ok: string[] = [];
  for (const a of answers) {
    status = worse(status, a.status);
    if (!a.answered) {
      if (a.note === null) silent.push(a.host);
      else noVerdict.push([a.note, a.note, a.host]);
      continue;
    }
    if (a.status === 'OK' && a.problems.length === 0) ok.push(a.host);
    if (a.note !== null && a.problems.length === 0) unknown.push([a.note, a.note, a.host]);
    for (const p of a.problems) {
      const key = `${p.level}\0${p.code}\0${p.word}`;
      let f = findings.get(key);
      if (!f) {
        f = { g: { level: p.level, code: p.code, word: p.word }, hosts: new Set(), places: new Map() };
        findings.set(key, f);
      }
      f.hosts.add(a.host);
      const at = f.places.get(p.place) ?? new Set<string>();
      at.add(a.host);
      f.places.set(p.place, at);
    }
  }
  if (silent.length > 0 || answers.length === 0) status = worse(status, 'UNKNOWN');
  const byCount = <T extends HostSet>(a: T, b: T) => b.count - a.count;
  return {
    status,
    code: LEVEL_CODE[status],
    hosts: answers.length,
    findings: [...findings.values()]
      .map(({ g, hosts, places }) => ({
        ...g,
        ...setOf([...hosts]),
        places: [...places]
          .map(([place, hs]) => ({ place, ...setOf([...hs]) }))
          .sort((a, b) => byCount(a, b) || (a.place < b.place ? -1 : 1)),
      }))
      .sort((a, b) => ORDER[a.level] - ORDER[b.level] || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0) || byCount(a, b)),
    unknown: [...groupBy(unknown)].map(([, g]) => ({ reason: g.value, ...setOf(g.hosts) })).sort(byCount),
    noVerdict: [...groupBy(noVerdict)].map(([, g]) => ({ text: g.value, ...setOf(g.hosts) })).sort(byCount),
    noAnswer: setOf(silent),
    ok: setOf(ok),
  };
}

/** The rollup as text: one line per finding (its places indented below), then the unknown, the silent, the healthy. */
export function rollupText(r: Rollup): string {
  const out: string[] = [];
  const hs = (s: HostSet) => `${s.nodes} (${s.count})`;
  for (const f of r.findings) {
    out.push(`${f.level} ${f.code} ${f.word}: ${hs(f)}`);
    for (const p of f.places) out.push(`    ${p.place || '(host)'}: ${hs(p)}`);
  }
  for (const u of r.unknown) out.push(`UNKNOWN ${hs(u)}: ${u.reason}`);
  for (const n of r.noVerdict) out.push(`UNKNOWN no answer from hfi1-sdma: ${hs(n)}: ${n.text}`);
  if (r.noAnswer.count > 0) out.push(`UNKNOWN nothing printed: ${hs(r.noAnswer)}`);
  if (r.ok.count > 0) out.push(`OK: ${hs(r.ok)}`);
  if (r.hosts === 0) out.push('UNKNOWN no host answered: nothing was read');
  return `${out.join('\n')}\n`;
}
