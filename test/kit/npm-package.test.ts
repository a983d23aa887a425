// The package as npm publishes it: packed by npm (`npm install --install-links` packs this checkout as `npm pack`
// does, and installs what it packed), it holds only what runs, the bundle imports its dependencies by name (so a
// consumer's `npm audit` and `npm update tar` reach the code that unpacks snapshots), and it installs into a fresh
// strict TypeScript project where the README's CI recipe, copied as written, compiles and passes, and the typos a
// consumer makes do not compile. Offline: the consumer's node_modules is seeded from this checkout's.
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/child.js';
import { onPath } from '../support/on-path.js';
import { spawnSync } from '../support/spawn.js';
import { tempDirs } from '../support/temp.js';
import { writeRecipe } from './consumer.js';

const temp = tempDirs('hfi1-sdma-npm-');
const npmFound = onPath('npm');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  license: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  exports: Record<string, string | { types: string; default: string }>;
};

/** Run a program with a minimal environment: no registry reachable, an empty npm cache and config. */
function run(cmd: string, args: string[], cwd: string, home: string) {
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, '.npmrc'), '');
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    timeout: 120_000,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      npm_config_registry: 'http://127.0.0.1:9/',
      npm_config_cache: join(home, 'npm-cache'),
      npm_config_userconfig: join(home, '.npmrc'),
      npm_config_update_notifier: 'false',
      NO_COLOR: '1',
    },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

let work = '';
let project = '';
/** The installed package's files, as npm packed them (paths relative to the package). */
let files: string[] = [];

beforeAll(() => {
  if (!npmFound) return;
  work = temp();
  project = join(work, 'consumer');
  mkdirSync(join(project, 'node_modules'), { recursive: true });
  // The dependencies npm would fetch, from this checkout (the registry is not reachable).
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean }>;
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || entry.dev || path.lastIndexOf('node_modules/') !== 0 || !existsSync(join(ROOT, path))) continue;
    cpSync(join(ROOT, path), join(project, path), { recursive: true });
  }
  writeFileSync(join(project, 'package.json'), '{ "name": "ci-job", "version": "1.0.0", "type": "module", "private": true }\n');
  // One npm run packs the checkout and installs the package it packed. --ignore-scripts: the global setup has just
  // built what `prepare` builds.
  const inst = run(
    'npm',
    ['install', '--offline', '--no-audit', '--no-fund', '--install-links', '--ignore-scripts', ROOT],
    project,
    join(work, 'home'),
  );
  expect(inst.stderr).not.toMatch(/ERR!/);
  expect(inst.code, inst.stderr).toBe(0);
  const installed = join(project, 'node_modules', 'hfi1-sdma');
  files = readdirSync(installed, { recursive: true, withFileTypes: true })
    .filter((e) => !e.isDirectory())
    .map((e) => relative(installed, join(e.parentPath, e.name)))
    .sort();
}, 120_000);

describe.runIf(npmFound)('the npm package (skipped: npm not on PATH)', { timeout: 180_000 }, () => {
  it('npm packs only what runs: the bundle, its declarations, the schemas, the examples, the man page, the licence', () => {
    const allowed = [
      /^(package\.json|README\.md|LICENSE|bin\/hfi1-sdma\.js|man\/hfi1-sdma\.8|docs\/json\.md)$/,
      /^dist\/bundle\/(api\/)?[\w-]+\.mjs$/,
      /^dist\/types\/[\w/-]+\.d\.ts$/,
      /^docs\/schema\/[\w-]+\.schema\.json$/,
      /^examples\/[\w-]+\.(mjs|test\.ts)$/,
    ];
    expect(files.filter((f) => !allowed.some((re) => re.test(f)))).toEqual([]);
    // Each declaration is of a source that exists (nothing stale from an earlier build).
    const stale = files.filter((f) => f.startsWith('dist/types/') && !existsSync(join(ROOT, 'src', `${f.slice(11, -5)}.ts`)));
    expect(stale).toEqual([]);
    const targets = Object.values(pkg.exports).flatMap((e) => (typeof e === 'string' ? [] : [e.types, e.default]));
    for (const t of targets) expect(files, t).toContain(t.slice(2));
    for (const f of readdirSync(join(ROOT, 'docs', 'schema'))) expect(files).toContain(`docs/schema/${f}`);
    for (const f of readdirSync(join(ROOT, 'examples'))) expect(files).toContain(`examples/${f}`);
    expect(files).toEqual(expect.arrayContaining(['LICENSE', 'bin/hfi1-sdma.js', 'man/hfi1-sdma.8', 'dist/bundle/main.mjs']));
    expect(readFileSync(join(ROOT, 'LICENSE'), 'utf8')).toMatch(new RegExp(`^${pkg.license} License\n`));
  });

  it('the bundle carries no dependency: it imports each one by name from node_modules', () => {
    const meta = JSON.parse(readFileSync(join(ROOT, 'dist/bundle/metafile.json'), 'utf8')) as { inputs: Record<string, unknown> };
    expect(Object.keys(meta.inputs).filter((f) => f.includes('node_modules/'))).toEqual([]);
    const bundle = readdirSync(join(ROOT, 'dist/bundle'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.mjs'))
      .map((f) => readFileSync(join(ROOT, 'dist/bundle', f), 'utf8'))
      .join('\n');
    // By an import, or (koffi, a native module) by a require made with createRequire.
    const loaded = (name: string) => new RegExp(`(from|import\\(|\\))\\(?\\s*"${name}"`).test(bundle);
    expect(Object.keys(pkg.dependencies).filter((name) => !loaded(name))).toEqual([]);
  });

  it('installs into a fresh strict project where the README recipe passes as written and the typos do not compile', () => {
    const modules = join(project, 'node_modules');
    expect(existsSync(join(modules, 'hfi1-sdma', 'dist', 'bundle', 'main.mjs'))).toBe(true);
    // The recipe's dev dependencies, linked from this checkout.
    for (const name of ['typescript', '@types/node']) {
      mkdirSync(dirname(join(modules, name)), { recursive: true });
      symlinkSync(join(ROOT, 'node_modules', name), join(modules, name));
    }
    mkdirSync(join(modules, '.bin'), { recursive: true });
    symlinkSync('../typescript/bin/tsc', join(modules, '.bin', 'tsc'));

    const { commands } = writeRecipe(project);
    const r = run('sh', ['-ec', commands], project, join(work, 'home'));
    expect(
      r.stderr +
        r.stdout
          .split('\n')
          .filter((l) => /error|not ok/.test(l))
          .join('\n'),
    ).not.toMatch(/error TS|not ok/);
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toMatch(/^# pass 2$/m);
    expect(r.stdout).toMatch(/^# fail 0$/m);
    // The command, from the install: yargs parses its options, tar writes and reads a snapshot, both from node_modules.
    const bin = join(modules, '.bin', 'hfi1-sdma');
    const home = join(work, 'home');
    const snap = run(
      bin,
      ['--backend', 'emu', '--engines', '1', '--workload', 'idle', 'snapshot', '-o', 's.tar.gz'],
      project,
      home,
    );
    expect(snap.code, snap.stderr).toBe(0);
    const back = run(bin, ['--sysroot', 's.tar.gz', 'engines'], project, home);
    expect(back.code, back.stderr).toBe(0);
    expect(back.stdout).toMatch(/^hfi1_0\/0\s/m);
  });
});
