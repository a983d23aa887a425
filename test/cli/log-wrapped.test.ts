// Kernel logs as people post them: wrapped by a mail client at a space (the space taken, or kept at the end of the
// line as format=flowed does) or split by quoted-printable soft breaks (`=` at the end, `=` itself written `=3D`).
// `log` reads them as it reads the log itself: the same units (the engine → IRQ CPU map with them) and events.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type LogEvent, parseKernelLog } from '../../src/kmsg/parse.js';

const FIXTURES = ['engine-error.dmesg', 'hfi2-window.dmesg', 'cornelis-jkr.dmesg'].map((f) => ({
  name: f,
  text: readFileSync(new URL(`../fixtures/kmsg/${f}`, import.meta.url), 'utf8'),
}));

/** Wrap each line longer than `width` at its last space before `width`, the space taken (`keep`: left at the end). */
function mailWrap(text: string, width: number, keep = false): string {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    let rest = line;
    while (rest.length > width) {
      const at = rest.lastIndexOf(' ', width);
      if (at <= 0) break;
      out.push(rest.slice(0, keep ? at + 1 : at));
      rest = rest.slice(at + 1);
    }
    out.push(rest);
  }
  return out.join('\n');
}

/** Quoted-printable: `=` as `=3D`, lines split at 76 characters with a soft break `=` (never inside an escape). */
function quotedPrintable(text: string): string {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    let rest = line.replaceAll('=', '=3D');
    while (rest.length > 76) {
      let at = 75;
      if (rest[at - 1] === '=') at -= 1;
      else if (rest[at - 2] === '=') at -= 2;
      out.push(`${rest.slice(0, at)}=`);
      rest = rest.slice(at);
    }
    out.push(rest);
  }
  return out.join('\n');
}

const withoutLines = (events: LogEvent[]) => events.map(({ line: _line, ...e }) => e);

describe.each(FIXTURES)('a posted copy of $name', ({ text }) => {
  const plain = parseKernelLog(text);

  it.each([
    ['mail-wrapped at 72, the space taken', mailWrap(text, 72)],
    ['mail-wrapped at 66, the space kept (format=flowed)', mailWrap(text, 66, true)],
    ['quoted-printable with soft breaks', quotedPrintable(text)],
  ])('%s reads as the log itself: the same units and events', (_how, posted) => {
    expect(posted.split('\n').length).toBeGreaterThan(text.split('\n').length);
    const log = parseKernelLog(posted);
    expect(log.units).toEqual(plain.units);
    expect(withoutLines(log.events)).toEqual(withoutLines(plain.events));
    expect(log.hfi1Lines).toBe(plain.hfi1Lines);
  });
});

describe('a wrapped line joins only what makes a driver line', () => {
  it('the engine → IRQ CPU map of a wrapped IRQ line, under the head’s line number', () => {
    const log = parseKernelLog(
      '[    4.201000] hfi1 0000:05:00.0: hfi1_0: IRQ: 102, type SDMA engine 0 ->\ncpu: 2\n' +
        '[    4.201010] hfi1 0000:05:00.0: hfi1_0: IRQ: 103, type SDMA engine 1 -> cpu: 1=\n3\n',
    );
    expect(log.units[0]?.engineCpu).toEqual([2, 13]);
    expect(log.events).toEqual([]);
  });

  it('a line that completes nothing is read on its own: a watchdog line after an unread driver line stays one', () => {
    const log = parseKernelLog(
      'hfi1 0000:05:00.0: hfi1_0: SDMA frobnicated strangely\nNETDEV WATCHDOG: ib0 (hfi1): transmit queue 3 timed out\n',
    );
    expect(log.events.map((e) => [e.kind, e.line])).toEqual([
      ['unrecognised', 1],
      ['netdev-watchdog', 2],
    ]);
  });
});
