// Reading an input file named on the command line, with errors that say what to do.
import { readFile } from 'node:fs/promises';
import { Hfi1SdmaError } from '../errors.js';

/** Read a text file; E_NO_INPUT when missing, E_PERMISSION when unreadable. */
export async function readInputFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new Hfi1SdmaError('E_NO_INPUT', `${path}: no such file`, { cause: e });
    if (code === 'EACCES' || code === 'EPERM') {
      throw new Hfi1SdmaError('E_PERMISSION', `${path}: permission denied; run as a user who can read it (e.g. sudo)`, {
        cause: e,
      });
    }
    if (code === 'EISDIR') throw new Hfi1SdmaError('E_NO_INPUT', `${path}: is a directory; name a log file`, { cause: e });
    throw new Hfi1SdmaError('E_UNAVAILABLE', `${path}: cannot read (${code ?? String(e)})`, { cause: e });
  }
}
