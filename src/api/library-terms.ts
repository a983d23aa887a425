// The emulator's own checks speak to the command line (`--fault "x": unknown fault`, `--engines: the window …`).
// Called from code, the same check is told in the library's words: the call it came from, and the option as the
// caller spells it (`faults`, `activePorts`, `dir`), never a flag.
import { Hfi1SdmaError } from '../errors.js';

/** The command's flags by the library's names for them. */
const OPTION_NAMES: Readonly<Record<string, string>> = {
  fault: 'fault',
  workload: 'workload',
  engines: 'engines',
  chip: 'chip',
  driver: 'driver',
  ports: 'ports',
  'active-ports': 'activePorts',
  'descq-cnt': 'descqCnt',
  'at-ms': 'atMs',
  seed: 'seed',
  sysroot: 'dir',
  from: 'from',
  'from-instant': 'fromInstant',
};

/** `message` with its flags named as options, after `where` (the call). */
export function libraryMessage(where: string, message: string): string {
  const own = /^--fault "(?:[^"\\]|\\.)*": /.exec(message);
  // injectFault names the fault itself: the text the model was given (with the time it added) is noise.
  const body = own && where.startsWith('injectFault') ? message.slice(own[0].length) : message;
  const named = body
    .replace(/(--[a-z][a-z-]* [^\s-]\S*) (?=--[a-z])/g, '$1, ')
    .replace(/--([a-z][a-z-]*)/g, (flag, name: string) => OPTION_NAMES[name] ?? flag.slice(2));
  return `${where}: ${named}`;
}

function renamed(where: string, e: unknown): unknown {
  if (!(e instanceof Hfi1SdmaError) || e.name !== 'Hfi1SdmaError') return e;
  const out = new Hfi1SdmaError(e.code, libraryMessage(where, e.message), { cause: e.cause });
  if (e.stack) out.stack = e.stack.replace(e.message, out.message);
  return out;
}

/** Run `fn` (sync or async); an error of ours it throws comes out in the library's terms, named after `where`. */
export function inLibraryTerms<T>(where: string, fn: () => T): T {
  let r: T;
  try {
    r = fn();
  } catch (e) {
    throw renamed(where, e);
  }
  if (r instanceof Promise) {
    return r.catch((e: unknown) => {
      throw renamed(where, e);
    }) as T;
  }
  return r;
}
