// The round's findings as the commands that render a round print them under their output (engines, show, waiters):
// the same findings health gives, one line each, and the same in their JSON.
import type { Finding } from '../monitor/findings.js';
import type { Paint } from './io.js';

/** The findings worth a line under a command's output: every one but the notes, worst first. */
export function findingLines(findings: readonly Finding[], paint: Paint): string {
  // A gone, vanished or unreadable unit is said on stderr with the exit status (roundStatus).
  const said = new Set(['gone', 'vanished', 'unreadable']);
  return findings
    .filter((f) => f.severity !== 'note' && !said.has(f.kind))
    .map((f) => {
      const label =
        f.severity === 'critical'
          ? paint(['bold', 'red'], 'CRITICAL')
          : f.severity === 'warning'
            ? paint('yellow', 'WARNING')
            : 'UNKNOWN';
      return `${label} ${f.code} ${f.text}${f.action ? `; ${f.action}` : ''}\n`;
    })
    .join('');
}

/** A finding in the JSON of the commands that show the round's findings (show, waiters): as the library gives it. */
export function findingJson(f: Finding) {
  return {
    code: f.code,
    kind: f.kind,
    severity: f.severity,
    count: f.count,
    unit: f.unit,
    engine: f.engine,
    port: f.port,
    text: f.text,
    action: f.action,
    ageMs: f.ageMs,
    ageAtLeast: f.ageAtLeast,
  };
}
