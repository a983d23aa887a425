// Loading yargs without building a segmenter: none is built while it loads; help text beyond ASCII (the only
// text string-width segments) builds one when it is laid out; and Intl.Segmenter is the process's own again once
// the import settles. In a fresh process: a test worker may have loaded yargs already, its segmenter built.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { spawnSync } from '../support/spawn.js';

const LOAD_YARGS = fileURLToPath(new URL('../../dist/src/cli/load-yargs.js', import.meta.url));

const SCRIPT = `
const real = Intl.Segmenter;
let built = 0;
class Counted extends real { constructor(...a) { super(...a); built++; } }
Intl.Segmenter = Counted;
const { loadYargs } = await import(${JSON.stringify(LOAD_YARGS)});
const yargs = await loadYargs();
const afterLoad = built;
const restored = Intl.Segmenter === Counted;
const help = await yargs([]).scriptName('x').option('stall-ms', { describe: 'how long a ring may sit still (≥ 1 ms)' }).wrap(60).getHelp();
console.log(JSON.stringify({ afterLoad, restored, afterHelp: built, help }));
`;

describe('loadYargs', () => {
  it('builds no segmenter while yargs loads, one when help is laid out, and puts Intl.Segmenter back', () => {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', SCRIPT], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    const got = JSON.parse(r.stdout) as { afterLoad: number; restored: boolean; afterHelp: number; help: string };
    expect(got.afterLoad).toBe(0);
    expect(got.restored).toBe(true);
    expect(got.afterHelp).toBe(1);
    expect(got.help).toMatch(/--stall-ms\s+how long a ring may sit still \(≥ 1 ms\)/);
  });
});
