// Reading an input file named on the command line, with errors that say what to do.
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Hfi1SdmaError } from '../errors.js';
import type { ParseOptions } from '../kmsg/parse.js';
import { readKernelLog, type StreamedLog } from '../kmsg/stream.js';
import type { Io } from './io.js';

/** Read a text file; E_NO_INPUT when missing, E_PERMISSION when unreadable. */
export async function readInputFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw inputError(path, e);
  }
}

/** Parse a kernel log file as a stream, in bounded memory; errors as readInputFile's. */
export async function readLogFile(path: string, opts: ParseOptions = {}): Promise<StreamedLog> {
  try {
    return await readKernelLog(createReadStream(path, { highWaterMark: 1 << 20 }), opts);
  } catch (e) {
    throw inputError(path, e);
  }
}

/** Standard input as chunks: the stream when the Io has one, else its text at once (tests). */
export function stdinChunks(io: Io): AsyncIterable<Uint8Array | string> {
  if (io.stdinStream) return io.stdinStream();
  return (async function* () {
    yield await io.readStdin();
  })();
}

/** The error for an input file that cannot be read, by errno. */
function inputError(path: string, e: unknown): Error {
  if (e instanceof Hfi1SdmaError) return e;
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return new Hfi1SdmaError('E_NO_INPUT', `${path}: no such file`, { cause: e });
  if (code === 'EACCES' || code === 'EPERM') {
    return new Hfi1SdmaError('E_PERMISSION', `${path}: permission denied; run as a user who can read it (e.g. sudo)`, {
      cause: e,
    });
  }
  if (code === 'EISDIR') return new Hfi1SdmaError('E_NO_INPUT', `${path}: is a directory; name a log file`, { cause: e });
  return new Hfi1SdmaError('E_UNAVAILABLE', `${path}: cannot read (${code ?? String(e)})`, { cause: e });
}
