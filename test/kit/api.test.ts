// The public API: the entry points load nothing they do not need. That its reports (api/*.api.md) are what the
// declarations of the entry points give, so that a change to the surface shows in review, is checked by the package
// test (test/kit/package.test.ts), on the analysis the release artifact's declarations are rolled up from.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/child.js';

interface Metafile {
  outputs: Record<string, { imports: { path: string; kind: string; external?: boolean }[]; inputs: Record<string, unknown> }>;
}

/** The sources an entry point of the checkout's bundle loads when imported (its static imports, transitively). */
function loadedSources(entry: string): string[] {
  const meta = JSON.parse(readFileSync(join(ROOT, 'dist/bundle/metafile.json'), 'utf8')) as Metafile;
  const seen = new Set<string>();
  const visit = (out: string) => {
    if (seen.has(out)) return;
    seen.add(out);
    for (const i of meta.outputs[out]?.imports ?? []) {
      if (i.kind !== 'import-statement') continue;
      if (i.external) seen.add(`external:${i.path}`);
      else visit(i.path);
    }
  };
  visit(`dist/bundle/api/${entry}.mjs`);
  return [...seen].flatMap((o) => (o.startsWith('external:') ? [o] : Object.keys(meta.outputs[o]?.inputs ?? {})));
}

describe('the public API', () => {
  it.each(['hfi1-sdma', 'hfi1-sdma-emulator', 'hfi1-sdma-progress', 'hfi1-sdma-contract'])(
    'importing %s loads neither yargs, prom-client nor koffi',
    (entry) => {
      const sources = loadedSources(entry);
      expect(sources.some((f) => f.startsWith('src/api/'))).toBe(true);
      expect(sources.filter((f) => /node_modules\/(yargs|yargs-parser|prom-client|koffi)\/|^external:koffi/.test(f))).toEqual([]);
    },
  );

  it('hfi1-sdma/progress loads only the pure core (and the error it throws)', () => {
    const sources = loadedSources('hfi1-sdma-progress');
    expect(sources.filter((f) => !/^src\/(api|progress)\//.test(f) && f !== 'src/errors.ts')).toEqual([]);
  });

  it('an error of hfi1-sdma/progress, a bundle of its own, is an Hfi1SdmaError of hfi1-sdma', async () => {
    const [{ freeCount }, { Hfi1SdmaError, isHfi1SdmaError, ParseError }] = await Promise.all([
      import('hfi1-sdma/progress'),
      import('hfi1-sdma'),
    ]);
    let err: unknown;
    try {
      freeCount(3000, 0, 0);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(Hfi1SdmaError);
    expect(isHfi1SdmaError(err)).toBe(true);
    // Named as in the source, minified or not.
    expect((err as Error).constructor.name).toBe('Hfi1SdmaError');
    expect(err).not.toBeInstanceOf(ParseError);
    expect(new Error('x')).not.toBeInstanceOf(Hfi1SdmaError);
  });

  it('the package resolves its entry points by name, to the bundle', async () => {
    const progress = await import('hfi1-sdma/progress');
    expect(progress.freeCount(2048, 0, 10)).toBe(2037);
    expect(import.meta.resolve('hfi1-sdma/emulator')).toMatch(/\/dist\/bundle\/api\/hfi1-sdma-emulator\.mjs$/);
  });
});
