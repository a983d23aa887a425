// The tool version, read from package.json beside the sources or the build (the artifact's bundle replaces this file
// with a constant).
import { readFileSync } from 'node:fs';

let known: string | undefined;

/** hfi1-sdma's version (from package.json, read once: every JSON document a watch prints is stamped with it). */
export function version(): string {
  known ??= read();
  return known;
}

function read(): string {
  for (const rel of ['../package.json', '../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'hfi1-sdma' && pkg.version) return pkg.version;
    } catch {
      // try the next location
    }
  }
  return '0.0.0';
}
