// Where a twin comes from: a capture (a snapshot .tar.gz, read at the chosen instant) or a twin already written (the
// .json `emu twin --emit-test` leaves beside its test).
import { readFileSync, statSync } from 'node:fs';
import { Hfi1SdmaError, usageError } from '../errors.js';
import type { UnitId } from '../unit-id.js';
import { version } from '../version.js';
import { twinOf } from './build.js';
import { checkFixture, type TwinFixture } from './fixture.js';

/** The windows a capture's verdict is judged with unless told (health's defaults). */
export const TWIN_STALL_MS = 1000;
export const TWIN_STRAND_MS = 200;

/** How a twin is loaded. */
export interface LoadOptions {
  instant?: number | undefined;
  unit?: UnitId | undefined;
  stallMs?: number;
  strandMs?: number;
  /** The options that named the file and the instant, for messages (`--from`, `--from-instant`). */
  option?: string;
  instantOption?: string;
}

/** The most bytes a twin file may hold (one of 16 full rings is well under 4 MiB). */
const MAX_FIXTURE_BYTES = 64 * 1024 * 1024;

/** The error of a file `--from` names that cannot be read (`e` from stat or read). */
function inputError(e: unknown, path: string, option: string): Hfi1SdmaError {
  if (e instanceof Hfi1SdmaError) return e;
  const code = (e as NodeJS.ErrnoException).code ?? String(e);
  if (code === 'EACCES') return new Hfi1SdmaError('E_PERMISSION', `${option} ${path}: permission denied`, { cause: e });
  return new Hfi1SdmaError(
    'E_NO_INPUT',
    `${option} ${path}: ${code === 'ENOENT' ? 'no such file' : code}: name a capture (.tar.gz) or a twin (.json)`,
    { cause: e },
  );
}

/** The size of the regular file `path` names; the error to give when there is none. */
function inputSize(path: string, option: string): number {
  let size: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw usageError(`${option} ${path}: not a regular file: name a capture (.tar.gz) or a twin (.json)`);
    size = st.size;
  } catch (e) {
    throw inputError(e, path, option);
  }
  return size;
}

/** Read a twin written as JSON. */
export function readFixture(path: string, option = '--from'): TwinFixture {
  const size = inputSize(path, option);
  if (size > MAX_FIXTURE_BYTES) {
    throw new Hfi1SdmaError('E_PARSE', `${path}: ${size} bytes, more than a twin ever holds: it is not one written by hfi1-sdma`);
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw inputError(e, path, option);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new Hfi1SdmaError(
      'E_PARSE',
      `${path}: not valid JSON (${(e as Error).message}); a twin is the .json hfi1-sdma writes beside an emitted test`,
      {
        cause: e,
      },
    );
  }
  return checkFixture(raw, path);
}

/** The twin `path` names: a capture read at its instant (default the last), or a twin written before. */
export async function loadTwin(path: string, o: LoadOptions = {}): Promise<TwinFixture> {
  const option = o.option ?? '--from';
  if (/\.json$/i.test(path)) {
    const f = readFixture(path, option);
    if (o.instant !== undefined && o.instant !== f.source.instant) {
      throw usageError(
        `${o.instantOption ?? '--from-instant'} ${o.instant}: ${path} is a twin of instant ${f.source.instant} only; give the capture itself to start elsewhere`,
      );
    }
    if (o.unit !== undefined && o.unit !== f.unit.name && o.unit !== f.unit.unit) {
      throw usageError(`--unit ${o.unit}: ${path} is a twin of ${f.unit.name}`);
    }
    return f;
  }
  if (!/\.(tar\.gz|tgz)$/i.test(path)) {
    throw usageError(`${option} ${path}: name a capture written by 'hfi1-sdma snapshot' (.tar.gz) or a twin (.json)`);
  }
  inputSize(path, option); // the snapshot reader takes a file that is there
  const { readCapture } = await import('./read.js');
  const r = await readCapture(path, {
    instant: o.instant,
    unit: o.unit,
    stallMs: o.stallMs ?? TWIN_STALL_MS,
    strandMs: o.strandMs ?? TWIN_STRAND_MS,
    ...(o.instantOption ? { instantOption: o.instantOption } : {}),
  });
  return twinOf(r, version());
}
