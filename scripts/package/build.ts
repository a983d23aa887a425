// Build the offline release artifact hfi1-sdma-<version>-linux-x64.tgz (a name of its own: `npm pack` writes
// hfi1-sdma-<version>.tgz): one minified ESM bundle (split at the CLI's lazy imports) with yargs, prom-client and tar
// inside, koffi and its linux-x64 binaries vendored beside it, the man page, the licences and versions of what it
// carries, and a package.json without dependencies, so that `npm install -g ./hfi1-sdma-<version>-linux-x64.tgz`
// needs no registry.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Plugin } from 'esbuild';
import { create } from 'tar';
import { API_ENTRIES, type ApiCheck, emitDeclarations, rollUpDeclarations } from '../api.js';
import { bundleCli, STANDALONE_ENTRIES } from '../bundle.js';
import { renderManPage } from '../man.js';
import { carriedPackages, thirdPartyNotices } from './notices.js';
import { KOFFI_PLATFORMS, vendorKoffi } from './vendor.js';

/** What one build produced. */
export interface PackageResult {
  tarball: string;
  version: string;
  tarballBytes: number;
  /** Bytes of JavaScript in lib/ (entry and chunks), without the vendored koffi. */
  bundleBytes: number;
  /** What the analysis the declarations were rolled up from found: the API reports that differ, the forgotten exports. */
  api: ApiCheck;
}

/** The fixed time stamp npm gives every entry of a package tarball (reproducible archives). */
const TARBALL_MTIME = new Date('1985-10-26T08:15:00Z');

/**
 * Build the artifact from the sources under `rootDir` into `outDir`; returns its path and sizes. `declarationsEmitted`:
 * dist/types is already current (tsconfig.api.json was just compiled), so it is rolled up without compiling again.
 */
export async function buildPackage(
  rootDir: string,
  outDir: string,
  o: { declarationsEmitted?: boolean } = {},
): Promise<PackageResult> {
  const repoPkg = JSON.parse(readFileSync(join(rootDir, 'package.json'), 'utf8')) as Record<string, unknown>;
  const version = String(repoPkg.version);
  const stage = mkdtempSync(join(tmpdir(), 'hfi1-sdma-package-'));
  try {
    const pkgDir = join(stage, 'package');
    const libDir = join(pkgDir, 'lib');
    const result = await bundleCli(rootDir, libDir, {
      plugins: [fixedVersion(version)],
      entries: Object.fromEntries(API_ENTRIES.map((e) => [`api/${e.report}`, join('src', e.types.replace(/\.d\.ts$/, '.ts'))])),
      standalone: STANDALONE_ENTRIES,
    });
    // The library's types: one self-contained declaration file per entry point.
    if (!o.declarationsEmitted) emitDeclarations(rootDir);
    const api = rollUpDeclarations(rootDir, join(pkgDir, 'types'));
    let bundleBytes = 0;
    for (const [file, out] of Object.entries(result.metafile.outputs)) if (file.endsWith('.mjs')) bundleBytes += out.bytes;

    vendorKoffi(rootDir, join(libDir, 'node_modules'));
    mkdirSync(join(pkgDir, 'bin'), { recursive: true });
    writeFileSync(join(pkgDir, 'bin', 'hfi1-sdma.js'), "#!/usr/bin/env node\nimport '../lib/main.mjs';\n");
    chmodSync(join(pkgDir, 'bin', 'hfi1-sdma.js'), 0o755);
    mkdirSync(join(pkgDir, 'man'), { recursive: true });
    writeFileSync(join(pkgDir, 'man', 'hfi1-sdma.8'), renderManPage(rootDir));
    writeFileSync(join(pkgDir, 'README.md'), readFileSync(join(rootDir, 'README.md')));
    writeFileSync(join(pkgDir, 'LICENSE'), readFileSync(join(rootDir, 'LICENSE')));
    const inputs = Object.keys(result.metafile.inputs);
    writeFileSync(join(pkgDir, 'THIRD_PARTY_NOTICES'), thirdPartyNotices(rootDir, inputs));
    const carried = Object.fromEntries(carriedPackages(rootDir, inputs).map((p) => [p.name, p.version]));
    writeFileSync(join(pkgDir, 'package.json'), `${JSON.stringify(artifactManifest(repoPkg, carried), null, 2)}\n`);

    mkdirSync(outDir, { recursive: true });
    const tarball = join(outDir, artifactName(version));
    await create({ gzip: { level: 9 }, file: tarball, cwd: stage, portable: true, mtime: TARBALL_MTIME }, ['package']);
    return { tarball, version, tarballBytes: statSync(tarball).size, bundleBytes, api };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** The artifact's file name: not `npm pack`'s, so that neither overwrites the other. */
export function artifactName(version: string): string {
  return `hfi1-sdma-${version}-${KOFFI_PLATFORMS.join('-')}.tgz`;
}

/**
 * The artifact's package.json: the repository's identity, its bin and man page, no dependencies, and the packages it
 * carries with their versions (`carried`: name → version; their licences are in THIRD_PARTY_NOTICES).
 */
export function artifactManifest(repoPkg: Record<string, unknown>, carried: Record<string, string>): Record<string, unknown> {
  return {
    name: repoPkg.name,
    version: repoPkg.version,
    description: repoPkg.description,
    type: 'module',
    license: repoPkg.license,
    engines: repoPkg.engines,
    bin: { 'hfi1-sdma': 'bin/hfi1-sdma.js' },
    exports: {
      ...Object.fromEntries(
        API_ENTRIES.map((e) => [e.path, { types: `./types/${e.report}.d.ts`, default: `./lib/api/${e.report}.mjs` }]),
      ),
      './package.json': './package.json',
    },
    types: './types/hfi1-sdma.d.ts',
    man: ['man/hfi1-sdma.8'],
    hfi1Sdma: {
      bundled: Object.fromEntries(Object.entries(carried).filter(([name]) => name !== 'koffi')),
      vendored: {
        koffi: `${carried.koffi} with its prebuilt binaries for ${KOFFI_PLATFORMS.join(', ')} (glibc and musl), in lib/node_modules`,
      },
      licences: 'THIRD_PARTY_NOTICES',
    },
  };
}

/** src/version.ts reads package.json beside the build; in the bundle the version is a constant. */
function fixedVersion(version: string): Plugin {
  return {
    name: 'fixed-version',
    setup(b) {
      b.onLoad({ filter: /[\\/]src[\\/]version\.ts$/ }, () => ({
        contents: `/** hfi1-sdma's version (fixed when the artifact was built). */\nexport function version(): string { return ${JSON.stringify(version)}; }\n`,
        loader: 'ts',
      }));
    },
  };
}
