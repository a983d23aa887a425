// The RDMA core's port files (ports/<p>/state, phys_state, rate; state_show, phys_state_show,
// rate_show in drivers/infiniband/core/sysfs.c) and the one-line identity files beside them.
import { ParseError } from '../../errors.js';

/** Longest name a port-state file prints (`LinkErrorRecovery`, with room to spare). */
const MAX_NAME = 64;
const NUMBERED = /^(0|[1-9][0-9]{0,2}): ([A-Za-z][A-Za-z0-9_]*)$/;
const BARE = /^[A-Za-z][A-Za-z0-9_]*$/;

function singleLine(text: string, file: string, what: string): string {
  const nl0 = text.indexOf('\n');
  if (nl0 === -1) {
    // The kernel ends the line; a file without its newline was cut short (or is not the kernel's).
    throw new ParseError({ file, line: 1, column: text.length + 1, text }, `expected ${what} ending in a newline`);
  }
  const body = text.slice(0, -1);
  const nl = body.indexOf('\n');
  if (nl !== -1) {
    throw new ParseError(
      { file, line: 2, column: 1, text: body.slice(nl + 1).split('\n')[0] ?? '' },
      `expected ${what} on one line`,
    );
  }
  if (body.length === 0) throw new ParseError({ file, line: 1, column: 1, text: '' }, `expected ${what}, found an empty file`);
  return body;
}

/**
 * ports/<p>/state or phys_state (state_show, phys_state_show, RDMA core sysfs.c): `%d: %s\n`, e.g.
 * `4: ACTIVE` or `5: LinkUp`; the name alone is accepted too. Returns the name.
 */
export function parsePortState(text: string, file: string): string {
  const s = singleLine(text, file, "a port state such as '4: ACTIVE'");
  const m = NUMBERED.exec(s);
  const name = m ? (m[2] as string) : BARE.test(s) ? s : null;
  if (name === null || name.length > MAX_NAME) {
    const colon = s.indexOf(':');
    const column = m === null && colon > 0 && /^[0-9]+$/.test(s.slice(0, colon)) ? colon + 3 : 1;
    throw new ParseError({ file, line: 1, column, text: s }, "expected a port state as '<number>: <name>' (e.g. '4: ACTIVE')");
  }
  return name;
}

/** ports/<p>/rate (rate_show, RDMA core sysfs.c): e.g. `100 Gb/sec (4X EDR)\n`. Returns the line. */
export function parsePortRate(text: string, file: string): string {
  const s = singleLine(text, file, "a rate such as '100 Gb/sec (4X EDR)'");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a control character means the file is not the kernel's
  if (!/^[0-9]+(\.[0-9]+)? Gb\/sec( \([^()\x00-\x1f\x7f-\x9f]{1,32}\))?$/.test(s)) {
    throw new ParseError(
      { file, line: 1, column: 1, text: s },
      "expected a rate as '<Gb> Gb/sec (<width> <speed>)' (e.g. '100 Gb/sec (4X EDR)')",
    );
  }
  return s;
}

/** Longest identity value kept (a board name is about 60 characters). */
export const MAX_IDENTITY_CHARS = 256;

/** An identity file (fw_ver, board_id, osrelease, …): its text trimmed; null when empty, binary or too long. */
export function identityValue(text: string): string | null {
  const s = text.trim();
  if (s.length === 0 || s.length > MAX_IDENTITY_CHARS || s.includes('\n')) return null;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a control character means the file is not text
  if (/[\u0000-\u001f\u007f-\u009f\ufffd]/.test(s)) return null;
  return s;
}
