// The shipped alert rules say what health says: an alert that names a finding has that finding's severity (a
// finding health cannot judge, UNKNOWN, is a warning: Prometheus has no unknown), and a finding that is a note (it
// never raises health's status) has no alert.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FINDING_KINDS } from '../../src/monitor/codes.js';
import { RULES } from '../support/prometheus.js';

interface Alert {
  name: string;
  severity: string | null;
  codes: string[];
}

/** Each alert of the rules file: its name, severity label and the finding codes its text names. */
function alerts(): Alert[] {
  const text = readFileSync(RULES, 'utf8');
  return (
    text
      .split(/^ {6}- alert: /m)
      .slice(1)
      // The comments before the next alert are not this one's.
      .map((text) => text.split(/\n {6}#/)[0] as string)
      .map((block) => ({
        name: (block.split('\n')[0] as string).trim(),
        severity: /^ {10}severity: (\w+)$/m.exec(block)?.[1] ?? null,
        codes: [...new Set([...block.matchAll(/\b(SD\d{3})\b/g)].map((m) => m[1] as string))],
      }))
  );
}

const byCode = new Map(Object.values(FINDING_KINDS).map((k) => [k.code as string, k]));

describe('the shipped alert rules and the findings', () => {
  const all = alerts();

  it('reads every alert of the file', () => {
    expect(all.length).toBeGreaterThanOrEqual(15);
    expect(all.every((a) => a.severity === 'critical' || a.severity === 'warning')).toBe(true);
  });

  it.each(all.filter((a) => a.codes.length > 0).map((a) => [a.name, a] as const))(
    '%s has the severity of the finding it names, and that finding is no note',
    (_name, a) => {
      for (const code of a.codes) {
        const k = byCode.get(code);
        expect(k, `${a.name} names ${code}, which is no finding`).toBeDefined();
        expect(k?.severity, `${a.name} alerts on ${code}, a note that never raises health's status`).not.toBe('note');
        expect(a.severity).toBe(k?.severity === 'unknown' ? 'warning' : k?.severity);
      }
    },
  );

  it('no note-level finding has an alert (a full ring, SD106, above all: a saturated link fills rings)', () => {
    const notes = Object.values(FINDING_KINDS)
      .filter((k) => k.severity === 'note')
      .map((k) => k.code as string);
    expect(all.filter((a) => a.codes.some((c) => notes.includes(c))).map((a) => a.name)).toEqual([]);
    expect(all.map((a) => a.name)).not.toContain('Hfi1SdmaRingPersistentlyFull');
  });
});
