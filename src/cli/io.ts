// What a command may touch of the outside world, passed in so tests can capture it.
import { styleText } from 'node:util';

/** Output streams, environment and terminal facts for one run of the CLI. */
export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  /** stdout is a terminal (colour and in-place redraw are allowed). */
  isTTY: boolean;
  /** Terminal width in columns, when known (read again at each frame: a resized terminal changes it). */
  columns?: number;
  /** Terminal height in rows, when known (read again at each frame); a frame never has more lines than this. */
  rows?: number;
  /** Standard error is a terminal (progress lines of emu run); absent is false. */
  stderrIsTTY?: boolean;
  /** Wall-clock time, ms since the epoch (watch shows it); Date.now when absent. */
  nowMs?: () => number;
  /** Wait `ms` of wall time (watch, progress and health pacing), ending early on `signal`; tests pass a no-op. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** The script this program was run as and the node that runs it (completion scripts call them back). */
  programPath?: string;
  execPath?: string;
  /** End the process now with `code` (a command that must not overrun abandons a stuck read); absent in tests. */
  exit?: (code: number) => void;
  /** Standard input as text, for commands reading `-` (log). */
  readStdin: () => Promise<string>;
  /** Standard input as a stream of chunks (log reads it in bounded memory); tests may leave it out. */
  stdinStream?: () => AsyncIterable<Uint8Array | string>;
}

let pipeWatched = false;

/**
 * A closed standard output (`| head -1`) ends the command quietly with status 0, as a Unix tool
 * killed by SIGPIPE would end silently; any other write error on it is exit 74 with a message.
 */
function endOnClosedStdout(): void {
  if (pipeWatched) return;
  pipeWatched = true;
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(0);
    process.stderr.write(`hfi1-sdma: cannot write standard output: ${e.code ?? e.message}\n`);
    process.exit(74);
  });
}

/** The real process streams. */
export function processIo(): Io {
  endOnClosedStdout();
  return {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    env: process.env,
    isTTY: process.stdout.isTTY === true,
    get columns() {
      return process.stdout.columns;
    },
    get rows() {
      return process.stdout.rows;
    },
    stderrIsTTY: process.stderr.isTTY === true,
    nowMs: () => Date.now(),
    sleep: (ms, signal) =>
      new Promise((resolve) => {
        const onAbort = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        }, ms);
        signal?.addEventListener('abort', onAbort, { once: true });
      }),
    exit: (code) => process.exit(code),
    programPath: process.argv[1],
    execPath: process.execPath,
    stdinStream: () => process.stdin,
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const c of process.stdin) chunks.push(c as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}

/** Colour: --color forces it, --no-color refuses it; otherwise on a TTY unless NO_COLOR is set (no-color.org). */
export function colorEnabled(io: Io, flag: boolean | undefined): boolean {
  if (flag !== undefined) return flag;
  if (io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== '') return false;
  return io.isTTY;
}

/** A painter that applies ANSI styles only when colour is enabled. */
export type Paint = (style: Parameters<typeof styleText>[0], text: string) => string;

/** Make a painter for this run. */
export function painter(enabled: boolean): Paint {
  return enabled ? (style, text) => styleText(style, text, { validateStream: false }) : (_style, text) => text;
}
