// The release artifact installs with no registry and runs with only Node present. The public API's reports are
// checked here too, on the analysis of the declarations that the artifact's are rolled up from (one analysis, not two).
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { extract } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PackageResult } from '../../scripts/package/build.js';
import { ROOT } from '../support/child.js';
import { runCli } from '../support/cli.js';
import { onPath } from '../support/on-path.js';
import { spawnSync } from '../support/spawn.js';
import { buildArtifact } from './artifact.js';
import { writeRecipe } from './consumer.js';

const repoVersion = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const npmFound = onPath('npm');
const manFound = onPath('man');

let art: PackageResult & { dir: string };

beforeAll(async () => {
  art = await buildArtifact();
}, 180_000);

afterAll(() => {
  if (art) rmSync(art.dir, { recursive: true, force: true });
});

/** Run a program with a minimal environment: no registry reachable, an empty npm cache and config. */
function run(cmd: string, args: string[], cwd: string) {
  const home = join(art.dir, 'home');
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
      npm_config_cache: join(art.dir, 'npm-cache'),
      npm_config_userconfig: join(home, '.npmrc'),
      npm_config_update_notifier: 'false',
      NO_COLOR: '1',
    },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

let unpackedArtifact: Promise<{ dir: string; entries: string[] }> | undefined;
/** The artifact unpacked once (what its tests read and run), with the paths of the entries it holds. */
function unpacked(): Promise<{ dir: string; entries: string[] }> {
  unpackedArtifact ??= (async () => {
    const dir = join(art.dir, 'unpacked');
    mkdirSync(dir);
    const entries: string[] = [];
    await extract({ file: art.tarball, cwd: dir, onReadEntry: (e) => entries.push(e.path) });
    return { dir, entries };
  })();
  return unpackedArtifact;
}

let prefixDir: string | undefined;
/** Install the artifact once, offline, into an empty prefix; returns the prefix. */
function installed(): string {
  if (prefixDir) return prefixDir;
  const prefix = join(art.dir, 'prefix');
  mkdirSync(prefix);
  const inst = run('npm', ['install', '-g', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', art.tarball], art.dir);
  expect(inst.stderr).not.toMatch(/ERR!/);
  expect(inst.code).toBe(0);
  prefixDir = prefix;
  return prefix;
}

describe('the public API', () => {
  it('its reports are current (else run npm run api and review the change), and it exports every type it reaches', () => {
    // From the analysis of the entry points' declarations that the artifact's were rolled up from.
    const { changed, forgotten } = art.api;
    expect(changed).toEqual([]);
    // API Extractor's ae-forgotten-export: a type a caller meets (a field's, a parameter's) that no entry exports.
    expect(forgotten).toEqual([]);
  });
});

// Generous bounds: each step spawns node or npm, which a loaded machine slows down.
describe('the artifact', { timeout: 180_000 }, () => {
  it('carries a manifest without dependencies, the bundle, koffi for linux-x64 and the man page', async () => {
    const { dir, entries } = await unpacked();
    expect(entries).toContain('package/package.json');
    expect(entries).toContain('package/bin/hfi1-sdma.js');
    expect(entries).toContain('package/lib/main.mjs');
    expect(entries).toContain('package/man/hfi1-sdma.8');
    expect(entries).toContain('package/LICENSE');
    expect(entries).toContain('package/THIRD_PARTY_NOTICES');
    // Not npm pack's name: neither overwrites the other.
    expect(art.tarball).toMatch(new RegExp(`hfi1-sdma-${repoVersion.replaceAll('.', '\\.')}-linux-x64\\.tgz$`));
    expect(entries).toContain('package/lib/node_modules/@koromix/koffi-linux-x64/linux_x64/koffi.node');
    expect(entries).toContain('package/lib/node_modules/@koromix/koffi-linux-x64/musl_x64/koffi.node');
    expect(entries.some((e) => (e.endsWith('.ts') && !e.endsWith('.d.ts')) || e.endsWith('.cc'))).toBe(false);
    for (const name of ['hfi1-sdma', 'hfi1-sdma-emulator', 'hfi1-sdma-progress', 'hfi1-sdma-contract']) {
      expect(entries).toContain(`package/lib/api/${name}.mjs`);
      expect(entries).toContain(`package/types/${name}.d.ts`);
    }
    const manifest = JSON.parse(readFileSync(join(dir, 'package', 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest.version).toBe(repoVersion);
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.optionalDependencies).toBeUndefined();
    expect(manifest.scripts).toBeUndefined();
    expect(manifest.man).toEqual(['man/hfi1-sdma.8']);
    // What it carries instead, by version, so an advisory can be checked against it.
    const version = (name: string) =>
      (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
    expect(manifest.hfi1Sdma).toMatchObject({
      bundled: { tar: version('tar'), yargs: version('yargs'), 'prom-client': version('prom-client') },
    });
    expect(manifest.exports).toMatchObject({
      '.': { types: './types/hfi1-sdma.d.ts', default: './lib/api/hfi1-sdma.mjs' },
      './progress': { types: './types/hfi1-sdma-progress.d.ts', default: './lib/api/hfi1-sdma-progress.mjs' },
    });
  });

  it('runs unpacked with node alone, loading koffi from the artifact to map an emulated BAR', async () => {
    const { dir } = await unpacked();
    const bin = join(dir, 'package', 'bin', 'hfi1-sdma.js');
    const v = run(process.execPath, [bin, '--version'], dir);
    expect(v).toMatchObject({ code: 0, stdout: `${repoVersion}\n` });
    // The tree it reads is written in this process (the artifact's emulator runs in the installed test below).
    const sysroot = join(art.dir, 'sysroot');
    const w = await runCli(['emu', 'write', '--engines', '4', '--sysroot', sysroot]);
    expect(w.code, w.stderr).toBe(0);
    const e = run(process.execPath, [bin, '--sysroot', sysroot, 'doctor'], dir);
    expect(e.stderr).toBe('');
    expect(e.stdout).toMatch(/BAR \(resource0\)\s+readable/);
    expect(e.stdout).toMatch(/LEN_GEN agrees/);
    // The snapshot chunk and the bundled tar: capture, then read the archive back.
    const archive = join(art.dir, 'capture.tar.gz');
    expect(run(process.execPath, [bin, '--sysroot', sysroot, 'snapshot', '-o', archive], dir).code).toBe(0);
    const back = run(process.execPath, [bin, '--sysroot', archive, 'engines'], dir);
    expect(back.code).toBe(0);
    expect(back.stdout.split('\n').filter((l) => /^hfi1_0\/\d+\s/.test(l))).toHaveLength(4);
  });

  it.skipIf(!npmFound)(
    'installs with npm install -g --offline into an empty prefix, registry unreachable (skipped: npm not on PATH)',
    () => {
      const prefix = installed();
      const bin = join(prefix, 'bin', 'hfi1-sdma');
      expect(run(bin, ['--version'], art.dir)).toMatchObject({ code: 0, stdout: `${repoVersion}\n` });
      // Idle: what runs is the installed command and its emulator, not traffic.
      const engines = run(bin, ['--backend', 'emu', '--engines', '4', '--workload', 'idle', 'engines'], art.dir);
      expect(engines.code).toBe(0);
      expect(engines.stdout.split('\n').filter((l) => /^hfi1_0\/\d+\s/.test(l))).toHaveLength(4);
      const page = join(prefix, 'share', 'man', 'man8', 'hfi1-sdma.8');
      expect(existsSync(page)).toBe(true);
      expect(realpathSync(page)).toBe(realpathSync(join(prefix, 'lib', 'node_modules', 'hfi1-sdma', 'man', 'hfi1-sdma.8')));
    },
  );

  it.skipIf(!npmFound || !manFound)('man hfi1-sdma reads the installed page (skipped: npm or man not on PATH)', () => {
    const prefix = installed();
    const m = spawnSync('man', ['-M', join(prefix, 'share', 'man'), 'hfi1-sdma'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', MANPAGER: 'cat', PAGER: 'cat', LC_ALL: 'C.UTF-8' },
    });
    expect(m.status).toBe(0);
    expect(m.stdout).toMatch(/^HFI1-SDMA\(8\)/m);
  });

  it.skipIf(!npmFound)(
    "installed, serves a strict TypeScript project as a library: the README recipe compiles on the artifact's rolled-up declarations and the typos do not (skipped: npm not on PATH)",
    () => {
      const project = join(art.dir, 'project');
      const modules = join(project, 'node_modules');
      mkdirSync(join(modules, '@types'), { recursive: true });
      writeFileSync(join(project, 'package.json'), '{"name": "ci-job", "version": "1.0.0", "type": "module", "private": true}\n');
      // The installed artifact, and the recipe's dev dependencies from this checkout.
      symlinkSync(join(installed(), 'lib', 'node_modules', 'hfi1-sdma'), join(modules, 'hfi1-sdma'));
      for (const name of ['typescript', '@types/node']) symlinkSync(join(ROOT, 'node_modules', name), join(modules, name));
      writeRecipe(project);
      // The compile alone: the npm package test runs the recipe as written (npx tsc, then node --test) on the packed
      // package, whose declarations it checks whole; what is the artifact's own is its declarations rolled up into
      // one file per entry point, and what a consumer meets of them (--skipLibCheck: the checkout's @types/node, which
      // is most of a full check, is not checked again).
      const r = run(
        process.execPath,
        [join(modules, 'typescript', 'bin', 'tsc'), '-p', '.', '--noEmit', '--skipLibCheck'],
        project,
      );
      expect(r.stdout.split('\n').filter((l) => /error TS/.test(l))).toEqual([]);
      expect(r.code, r.stderr).toBe(0);
    },
  );
});
