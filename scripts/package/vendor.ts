// The files of the packages the bundle loads at run time instead of bundling: koffi is required by
// name from src/hw/ffi.ts and loads a prebuilt native module from its platform package.
import { cpSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

/** Platform packages of koffi the artifact carries (each holds a glibc and a musl build). */
export const KOFFI_PLATFORMS = ['linux-x64'] as const;

/** Copy koffi's JavaScript loader (no C++ sources, headers or docs) and its platform binaries into `nodeModulesDir`. */
export function vendorKoffi(rootDir: string, nodeModulesDir: string): string[] {
  const copied: string[] = [];
  const koffi = join(rootDir, 'node_modules', 'koffi');
  const keep = (p: string) => /\.(c?js|json)$/.test(p) || /LICENSE/.test(p);
  for (const file of walk(koffi)) {
    const rel = relative(koffi, file);
    if (rel.startsWith('vendor/') || rel.startsWith('doc/') || rel.startsWith('lib/') || !keep(rel)) continue;
    copyInto(file, join(nodeModulesDir, 'koffi', rel));
    copied.push(`koffi/${rel}`);
  }
  for (const platform of KOFFI_PLATFORMS) {
    const name = `@koromix/koffi-${platform}`;
    const src = join(rootDir, 'node_modules', name);
    if (!existsSync(src)) throw new Error(`${src} is missing: run 'npm ci' on a ${platform} machine before packaging`);
    cpSync(src, join(nodeModulesDir, name), { recursive: true });
    copied.push(name);
  }
  return copied;
}

function copyInto(from: string, to: string): void {
  mkdirSync(dirname(to), { recursive: true });
  cpSync(from, to);
}

function* walk(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* walk(p);
    else yield p;
  }
}
