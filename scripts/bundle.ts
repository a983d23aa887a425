// The command's bundled entry: src/ as minified ESM, split at the CLI's lazy imports, so that a command loads a few
// files and compiles only what it runs. `npm ci` (the `prepare` script) builds it into dist/bundle, where
// bin/hfi1-sdma.js and the package's exports load it; there the dependencies (koffi, tar, yargs, prom-client) are
// imported from node_modules by name, so that an install's `npm audit` and `npm update` reach the code that runs
// (tar unpacks the snapshots a user is handed). `npm run package` bundles them into the offline artifact instead.
import { fileURLToPath } from 'node:url';
import { type BuildOptions, type BuildResult, build, type Plugin } from 'esbuild';

/** What differs between the checkout's bundle and the artifact's. */
export interface BundleExtra {
  plugins?: Plugin[];
  /** Packages left to be imported from node_modules at run time (the checkout's and the npm package's dependencies). */
  external?: string[];
  /** Also write a source map beside each file (the checkout's bundle). */
  sourcemap?: boolean;
  /** More entry points beside the command (the artifact's library entries), by output name. */
  entries?: Record<string, string>;
  /**
   * Entries among `entries` bundled whole into one file of their own, sharing no chunk (the pure core: a script
   * that imports only it loads one module, not the chunks it would share with the others).
   */
  standalone?: string[];
}

/** The library entries bundled whole (see BundleExtra.standalone). */
export const STANDALONE_ENTRIES = ['api/hfi1-sdma-progress'];

/**
 * string-width (through yargs' cliui, bundled in the offline artifact) builds an Intl.Segmenter when it is loaded, which costs
 * several milliseconds of every start; build it on first use instead (help and usage text only).
 */
const lazySegmenter: Plugin = {
  name: 'lazy-segmenter',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]string-width[\\/]index\.js$/ }, async (args) => {
      const { readFile } = await import('node:fs/promises');
      const source = await readFile(args.path, 'utf8');
      const eager = 'const segmenter = new Intl.Segmenter();';
      const lazy =
        'let segmenterMade;\nconst segmenter = { segment: (s) => (segmenterMade ??= new Intl.Segmenter()).segment(s) };';
      return { contents: source.includes(eager) ? source.replace(eager, lazy) : source, loader: 'js' };
    });
  },
};

/** Bundle the command-line entry into `outdir` (main.mjs and its chunks), and the library entries beside it. */
export async function bundleCli(
  rootDir: string,
  outdir: string,
  extra: BundleExtra = {},
): Promise<BuildResult<{ metafile: true }>> {
  const whole = new Set(extra.standalone ?? []);
  const entries = Object.entries(extra.entries ?? {});
  const common: BuildOptions & { metafile: true } = {
    absWorkingDir: rootDir,
    outdir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    minify: true,
    legalComments: 'none',
    metafile: true,
    logLevel: 'silent',
    sourcemap: extra.sourcemap === true ? 'linked' : false,
    external: extra.external ?? [],
    // CommonJS dependencies (prom-client) call require() for Node's modules; give every chunk one.
    banner: {
      js: "import{createRequire as __hfi1CreateRequire}from'node:module';const require=__hfi1CreateRequire(import.meta.url);",
    },
    plugins: [lazySegmenter, ...(extra.plugins ?? [])],
  };
  const result = await build({
    ...common,
    entryPoints: { main: 'scripts/package/entry.ts', ...Object.fromEntries(entries.filter(([name]) => !whole.has(name))) },
    splitting: true,
  });
  for (const [name, source] of entries.filter(([n]) => whole.has(n))) {
    const one = await build({ ...common, entryPoints: { [name]: source }, splitting: false });
    Object.assign(result.metafile.outputs, one.metafile.outputs);
    Object.assign(result.metafile.inputs, one.metafile.inputs);
  }
  return result;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const { rmSync } = await import('node:fs');
  const out = `${root}dist/bundle`;
  rmSync(out, { recursive: true, force: true });
  const { API_ENTRIES } = await import('./api.js');
  // The library's entry points beside the command's: the package's exports point here.
  const entries = Object.fromEntries(API_ENTRIES.map((e) => [`api/${e.report}`, `src/${e.types.replace(/\.d\.ts$/, '.ts')}`]));
  const { readFileSync } = await import('node:fs');
  const pkg = JSON.parse(readFileSync(`${root}package.json`, 'utf8')) as { dependencies: Record<string, string> };
  const external = Object.keys(pkg.dependencies);
  const result = await bundleCli(root, out, { external, sourcemap: true, entries, standalone: STANDALONE_ENTRIES });
  // What each output file holds and imports (the tests check what an entry point loads).
  const { writeFileSync } = await import('node:fs');
  writeFileSync(`${out}/metafile.json`, JSON.stringify(result.metafile));
}
