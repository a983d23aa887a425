// What each host answered, read from what the fan-out engines print: `host: line` (clush, pdsh, `clubak`'s input),
// the blocks of `clush -b`, `clubak -b` and `dshbak -c` (a node set between two rules of dashes, then its lines),
// and bare `health --json` documents, which name their host. A host's answer is its status and its problems, each
// a brief line (`CRITICAL SD201 hfi1_0 sdma5 stranded`); `health --json` documents are turned into the same lines.
// Pure: text in, answers out.
import { escapeControls } from '../hw/parse/text.js';
import { briefLines, briefOrder } from '../monitor/brief.js';
import { expandNodes } from './nodeset.js';

export const LEVELS = ['OK', 'WARNING', 'CRITICAL', 'UNKNOWN'] as const;
export type Level = (typeof LEVELS)[number];

/** The Nagios code of a level: what `clush -S` takes the largest of. */
export const LEVEL_CODE: Record<Level, number> = { OK: 0, WARNING: 1, CRITICAL: 2, UNKNOWN: 3 };

/** One problem a host reported: its level, code, where (`hfi1_0 sdma5`, empty for the host) and the brief word. */
export interface Problem {
  level: Exclude<Level, 'OK'>;
  code: string;
  place: string;
  word: string;
}

/** What one host said. */
export interface HostAnswer {
  host: string;
  /** Its status; UNKNOWN for a host that printed no answer. */
  status: Level;
  problems: Problem[];
  /** An UNKNOWN without a code (its reason), or the first line of a host that printed no answer; null otherwise. */
  note: string | null;
  /** False when the host printed lines, none of them an answer (an error of ssh, of the shell, of the command). */
  answered: boolean;
}

const BRIEF =
  /^(OK|WARNING|CRITICAL|UNKNOWN)(?: (SD\d{3})(?: (.+?))? ([a-z][a-z-]*))?(?: \((?:emulator|snapshot|emulated sysroot)\))?$/;
const TAG = / \((?:emulator|snapshot|emulated sysroot)\)$/;
/** An answer with no code: UNKNOWN and why (a usage error, a capture of one instant, a timeout). */
const UNCODED = /^UNKNOWN (.+)$/;

/** The problems of a host that has none (most hosts): one array for all of them, replaced at the first problem. */
const NONE: Problem[] = [];

/** Accumulates the lines of many hosts into answers. */
export class Answers {
  private readonly byHost = new Map<string, HostAnswer & { other: string | null }>();

  private entry(host: string) {
    let a = this.byHost.get(host);
    if (!a) {
      a = { host, status: 'OK', problems: NONE, note: null, answered: false, other: null };
      this.byHost.set(host, a);
    }
    return a;
  }

  /** One line a host printed (without its `host: ` label). */
  line(host: string, text: string): void {
    const t = /\s$/.test(text) ? text.trimEnd() : text;
    if (t.startsWith('{')) {
      this.document(host, t);
      return;
    }
    const a = this.entry(host);
    const m = BRIEF.exec(t);
    if (!m) {
      const u = UNCODED.exec(t);
      if (u) {
        a.answered = true;
        a.status = worse(a.status, 'UNKNOWN');
        a.note ??= shownText((u[1] as string).replace(TAG, ''));
      } else if (t !== '') a.other ??= shownText(t);
      return;
    }
    a.answered = true;
    const level = m[1] as Level;
    if (m[2]) {
      if (a.problems === NONE) a.problems = [];
      a.problems.push({ level: level as Problem['level'], code: m[2], place: m[3] ?? '', word: m[4] as string });
    } else if (level === 'UNKNOWN' || (level !== 'OK' && t.length > level.length)) {
      a.note ??= shownText(t.slice(level.length + 1).replace(TAG, ''));
    }
    a.status = worse(a.status, level);
  }

  /** An `health --json` document (or another command's, which says nothing of health: no answer). */
  document(labelHost: string | null, text: string): void {
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      if (labelHost !== null) this.entry(labelHost).other ??= shownText(text);
      return;
    }
    const d = doc as { host?: unknown; status?: unknown; summary?: unknown; findings?: unknown };
    const named = typeof d.host === 'string' ? d.host : ((d.host as { name?: unknown } | null)?.name ?? null);
    const host = labelHost ?? (typeof named === 'string' && HOST_LABEL.test(named) ? named : null);
    if (host === null) return;
    const a = this.entry(host);
    if (typeof d.status !== 'string' || !(LEVELS as readonly string[]).includes(d.status) || !Array.isArray(d.findings)) {
      a.other ??= 'a JSON document that is not a health answer';
      return;
    }
    a.answered = true;
    a.status = worse(a.status, d.status as Level);
    if ((d.findings as unknown[]).length === 0) {
      if (d.status === 'UNKNOWN' && typeof d.summary === 'string') a.note ??= shownText(d.summary);
      return;
    }
    const found = (d.findings as FindingDoc[]).filter(
      (f) =>
        typeof f === 'object' &&
        f !== null &&
        typeof f.code === 'string' &&
        /^SD\d{3}$/.test(f.code) &&
        typeof f.kind === 'string' &&
        f.level !== 'OK' &&
        (LEVELS as readonly string[]).includes(f.level),
    );
    if (found.length === 0) {
      if (d.status === 'UNKNOWN' && typeof d.summary === 'string') a.note ??= shownText(d.summary);
      return;
    }
    // Worst first, as health --brief orders them.
    const order = (x: FindingDoc) => ['CRITICAL', 'WARNING', 'UNKNOWN'].indexOf(x.level);
    const lines = briefLines(found.sort((x, y) => order(x) - order(y) || briefOrder(x, y)));
    for (const line of lines) {
      const m = BRIEF.exec(line);
      if (!m?.[2]) continue;
      if (a.problems === NONE) a.problems = [];
      a.problems.push({ level: m[1] as Problem['level'], code: m[2], place: m[3] ?? '', word: m[4] as string });
    }
    if (lines.length === 0 && d.status === 'UNKNOWN' && typeof d.summary === 'string') a.note ??= shownText(d.summary);
  }

  /** Every host seen, with those in `expected` that printed nothing as not answering. */
  all(expected: readonly string[] = []): HostAnswer[] {
    for (const h of expected) this.entry(h);
    const out: HostAnswer[] = [];
    for (const a of this.byHost.values()) {
      out.push({
        host: a.host,
        status: a.answered ? a.status : 'UNKNOWN',
        problems: a.problems,
        note: a.answered ? a.note : a.other,
        answered: a.answered,
      });
    }
    return out;
  }
}

interface FindingDoc {
  level: Level;
  code: string;
  kind: string;
  unit: string | null;
  engine: number | null;
  port: number | null;
}

/** The worse of two statuses, as `clush -S` takes the largest code. */
export function worse(a: Level, b: Level): Level {
  return LEVEL_CODE[b] > LEVEL_CODE[a] ? b : a;
}

const RULE = /^-{3,}$/;
/** A host's name as clush and pdsh print it before `: ` (and the only names taken from a document). */
export const HOST_LABEL = /^[A-Za-z0-9][A-Za-z0-9._-]{0,252}$/;

/** Text a host printed, as it may be shown: control characters escaped, at most 200 characters. */
function shownText(t: string): string {
  const e = escapeControls(t);
  return e.length > 200 ? `${e.slice(0, 199)}…` : e;
}

/**
 * Read what a fan-out printed into `answers`: `host: line`, a `health --json` document per line, or the blocks
 * of `clush -b`/`clubak -b` (`node[1-3] (3)` between rules) and `dshbak -c` (`node[1-3]`). Lines of no host
 * (a blank line, pdsh's own `pdsh@head: …` messages) are skipped.
 */
export function readFanout(text: string, answers: Answers): void {
  const lines = text.split('\n');
  let block: string[] | null = null;
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i] as string;
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (line.startsWith('---') && RULE.test(line) && RULE.test(lines[i + 2] ?? '') && lines[i + 1] !== undefined) {
      const header = (lines[i + 1] as string).replace(/ \(\d+\)$/, '').trim();
      try {
        block = expandNodes(header);
      } catch {
        block = null;
      }
      i += 2;
      continue;
    }
    if (block) {
      for (const h of block) answers.line(h, line);
      continue;
    }
    if (line.startsWith('{')) {
      answers.document(null, line);
      continue;
    }
    // pdsh's own messages are `pdsh@head: …`, ClusterShell's `clush: node7: exited with exit code 3` (on stderr).
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const host = line.slice(0, colon);
    if (host === 'clush' || !HOST_LABEL.test(host)) continue;
    answers.line(host, line.charCodeAt(colon + 1) === 32 ? line.slice(colon + 2) : line.slice(colon + 1));
  }
}
