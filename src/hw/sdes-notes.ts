// What a parsed sdes says besides its records: a newer driver's trailing header fields, a tear,
// and the error for an engine it has no usable record for.
import { ParseError } from '../errors.js';
import type { SdesDump } from './parse/sdes.js';
import type { WarningLog } from './warnings.js';

/** Record the dump's trailing fields and tear as warnings (each once). */
export function noteSdes(log: WarningLog, file: string, dump: SdesDump): void {
  const t = dump.trailing;
  if (t) {
    log.add({
      source: 'sdes',
      path: file,
      key: 'sdes:trailing-fields',
      message: `${file}:${t.line}: header fields after SLC that this version does not know (${JSON.stringify(t.text)}, in ${t.count} header${t.count === 1 ? '' : 's'}; a newer driver?): the known fields are used`,
    });
  }
  const torn = dump.torn;
  if (torn?.header) {
    log.add({
      source: 'sdes',
      path: file,
      key: 'sdes:torn',
      message: `${torn.error.message.split('\n')[0]}: the record of engine ${torn.header.engine} is cut inside its descriptors (a torn read); its header is used, its ring cannot be shown`,
    });
  }
}

/** The error for a wanted engine with no usable record: the tear, or a record the file lacks. */
export function missingRecord(file: string, dump: SdesDump, engine: number): ParseError {
  const torn = dump.torn;
  const last = dump.records[dump.records.length - 1]?.header.engine;
  if (torn && (torn.engine === engine || (torn.engine === null && (last === undefined || engine > last)))) return torn.error;
  const first = dump.records[0]?.header.engine;
  const what =
    first === undefined || last === undefined
      ? `the file is empty: it has no record for engine ${engine} (the driver lists every engine of its window)`
      : `no record for engine ${engine}: the file lists engines ${first} to ${last} (the driver lists every engine of its window)`;
  return new ParseError({ file, line: dump.lines + 1, column: 1, text: '' }, what);
}
