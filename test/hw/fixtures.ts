// Loading the hand-written fixtures of test/fixtures.
import { readFileSync } from 'node:fs';

/** The text of test/fixtures/<rel>. */
export function fixture(rel: string): string {
  return readFileSync(new URL(`../fixtures/${rel}`, import.meta.url), 'utf8');
}

/** The bytes of test/fixtures/<rel>. */
export function fixtureBytes(rel: string): Uint8Array {
  return readFileSync(new URL(`../fixtures/${rel}`, import.meta.url));
}

/** Offsets where a record (a header line) starts, plus the end of the text. */
export function recordBoundaries(text: string): number[] {
  const out: number[] = [];
  let at = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith('SDE ')) out.push(at);
    at += line.length + 1;
  }
  out.push(text.length);
  return out;
}
