// Module hooks that let Node load the TypeScript sources (test/setup/ts-loader.mjs registers them): a relative
// `./x.js` that names `x.ts` resolves to it, and a .ts file is loaded with its types stripped by esbuild, a source
// map inline. (tsx does the same, and also keeps every function's name: a property write at each closure made,
// a quarter of the race explorer's time under test.)
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { transform, transformSync, version } from 'esbuild';

/**
 * What esbuild made of a source, by the source's hash and path: each test worker (and each later run) loads a
 * module from here rather than transform it again. Written to a temporary name and renamed, so a worker never reads
 * another's half-written file.
 */
const CACHE = fileURLToPath(new URL('../../node_modules/.cache/hfi1-sdma-ts/', import.meta.url));

/** The compiler options that change what esbuild emits (the rest of tsconfig.json only checks types). */
const TSCONFIG = { compilerOptions: { target: 'ES2022', useDefineForClassFields: true, verbatimModuleSyntax: true } };

/** Resolve `./x.js` to `./x.ts` when only the TypeScript file is there. */
export async function resolve(specifier, context, nextResolve) {
  if (context.parentURL?.startsWith('file:') && specifier.endsWith('.js') && /^(\.{1,2}\/|\/|file:)/.test(specifier)) {
    const ts = new URL(`${specifier.slice(0, -3)}.ts`, context.parentURL);
    if (!existsSync(new URL(`${specifier}`, context.parentURL)) && existsSync(ts)) return { url: ts.href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

/** Load a .ts or .mts file outside node_modules as an ES module, its types stripped. */
export async function load(url, context, nextLoad) {
  if (url.startsWith('file:')) {
    const path = fileURLToPath(new URL(url).href.replace(/[?#].*$/, ''));
    if (/\.m?ts$/.test(path) && !path.includes('/node_modules/'))
      return { format: 'module', source: stripped(path), shortCircuit: true };
  }
  return nextLoad(url, context);
}

// The source map carries the mappings only, not the TypeScript text again (stack traces need no more): Node decodes
// and parses every module's inline map as it loads it (source maps are on), so half the bytes are half that work.
const OPTIONS = {
  loader: 'ts',
  format: 'esm',
  target: 'node20',
  sourcemap: 'inline',
  sourcesContent: false,
  tsconfigRaw: TSCONFIG,
};

/** Where the stripped module of `text`, read from `path`, is cached. */
function cachePath(path, text) {
  const key = createHash('sha1')
    .update(`${version}\0${JSON.stringify(OPTIONS)}\0${path}\0`)
    .update(text)
    .digest('hex');
  return `${CACHE}${key}.js`;
}

function remember(cached, code) {
  try {
    mkdirSync(CACHE, { recursive: true });
    const tmp = `${cached}.${process.pid}.${Math.random().toString(36).slice(2)}`;
    writeFileSync(tmp, code);
    renameSync(tmp, cached);
  } catch {} // no room or no permission: the next load transforms again
}

/** The module at `path` with its types stripped, from the cache when esbuild already did it for these bytes. */
function stripped(path) {
  const text = readFileSync(path, 'utf8');
  const cached = cachePath(path, text);
  try {
    return readFileSync(cached, 'utf8');
  } catch {} // not made yet
  const { code } = transformSync(text, { ...OPTIONS, sourcefile: path });
  remember(cached, code);
  return code;
}

/**
 * Strip the types of `paths` into the cache at once, esbuild working on them in parallel (the test run's global
 * setup): the workers, which start together and load the same modules, then find each one made.
 */
export async function prepare(paths) {
  await Promise.all(
    paths.map(async (path) => {
      const text = readFileSync(path, 'utf8');
      const cached = cachePath(path, text);
      if (existsSync(cached)) return;
      const { code } = await transform(text, { ...OPTIONS, sourcefile: path });
      remember(cached, code);
    }),
  );
}
