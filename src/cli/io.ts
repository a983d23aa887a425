// What a command may touch of the outside world, passed in so tests can capture it.
import { styleText } from 'node:util';

/** Output streams, environment and terminal facts for one run of the CLI. */
export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  /** stdout is a terminal (colour and in-place redraw are allowed). */
  isTTY: boolean;
  /** Terminal width in columns, when known. */
  columns?: number;
  /** Wait `ms` of wall time (watch, progress and health pacing); tests pass a no-op. */
  sleep: (ms: number) => Promise<void>;
  /** Standard input as text, for commands reading `-` (log). */
  readStdin: () => Promise<string>;
}

/** The real process streams. */
export function processIo(): Io {
  return {
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    env: process.env,
    isTTY: process.stdout.isTTY === true,
    columns: process.stdout.columns,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    readStdin: async () => {
      const chunks: Buffer[] = [];
      for await (const c of process.stdin) chunks.push(c as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
  };
}

/** Colour only on a TTY, never with NO_COLOR set or --no-color. */
export function colorEnabled(io: Io, flag: boolean | undefined): boolean {
  if (flag === false) return false;
  if (io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== '') return false;
  return io.isTTY;
}

/** A painter that applies ANSI styles only when colour is enabled. */
export type Paint = (style: Parameters<typeof styleText>[0], text: string) => string;

/** Make a painter for this run. */
export function painter(enabled: boolean): Paint {
  return enabled ? (style, text) => styleText(style, text, { validateStream: false }) : (_style, text) => text;
}
