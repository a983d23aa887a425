// Every exit status the program gives, once: --help, the manual page and the README's table are made from, or
// tested against, this list.
import { EXIT_CODES } from '../errors.js';

/** One exit status: its code, a few words for --help, and the sentence the manual gives. */
export interface ExitStatus {
  code: number;
  short: string;
  meaning: string;
}

/** The exit statuses of every command but health (Nagios codes) and the ones `1` names. */
export const EXIT_STATUSES: readonly ExitStatus[] = [
  { code: 0, short: 'ok', meaning: 'success (also when standard output is closed early, and a watch stopped by a signal).' },
  {
    code: 1,
    short: 'a negative answer',
    meaning:
      '`progress` timed out; `fit`: the descriptors do not fit; `doctor`: a check failed (no unit found is one); `emu run` found an invariant violated.',
  },
  {
    code: EXIT_CODES.E_USAGE,
    short: 'usage',
    meaning:
      'usage: a bad flag or argument, an option given twice, an unknown shell; the message names the option as typed, with the nearest known one.',
  },
  {
    code: EXIT_CODES.E_PARSE,
    short: 'malformed input',
    meaning: 'malformed input: a garbled debugfs file, text that is not a kernel log, a file that is not a snapshot.',
  },
  { code: EXIT_CODES.E_NO_DEVICE, short: 'no such unit, engine or file', meaning: 'no such unit, engine or input file.' },
  {
    code: EXIT_CODES.E_UNAVAILABLE,
    short: 'source unavailable or device gone',
    meaning: 'a source is unavailable, or the device is gone (what could be read is still shown).',
  },
  {
    code: EXIT_CODES.E_INTERNAL,
    short: 'internal defect',
    meaning: 'an internal defect; please report it, with the stack printed.',
  },
  {
    code: EXIT_CODES.E_CANT_CREATE,
    short: 'cannot create an output',
    meaning:
      'an output cannot be created where asked (or its path holds a device, a FIFO, a link or a directory, or lies inside the sysroot read); nothing is written.',
  },
  {
    code: EXIT_CODES.E_IO,
    short: 'write failed',
    meaning: 'a write failed part-way (e.g. the disk is full), standard output included; the previous output is kept.',
  },
  {
    code: EXIT_CODES.E_PERMISSION,
    short: 'permission denied',
    meaning: 'permission denied (run as root, or as a user who may read the source).',
  },
  { code: 130, short: 'stopped by SIGINT', meaning: 'stopped by SIGINT before the command did its work (143 for SIGTERM).' },
];

/** The line --help ends with. */
export function exitStatusHelp(): string {
  const codes = EXIT_STATUSES.filter((s) => s.code !== 130)
    .map((s) => `${s.code} ${s.short}`)
    .join(', ');
  return `Exit codes: ${codes}; 130/143 stopped by SIGINT/SIGTERM; health uses the Nagios codes 0-3 ('hfi1-sdma health --help').`;
}

/** The EXIT STATUS list of the manual page. */
export function exitStatusSection(): string {
  return `${EXIT_STATUSES.map((s) => `* \`${s.code}\`: ${s.meaning}`).join('\n')}\n`;
}
