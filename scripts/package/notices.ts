// THIRD_PARTY_NOTICES for the artifact: the licence text of every package whose code the bundle
// carries, found from the bundler's list of inputs, plus the vendored koffi.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A package whose code the artifact carries. */
export interface CarriedPackage {
  name: string;
  version: string;
  license: string;
  dir: string;
}

/** The packages among the bundler's `inputs` (paths relative to `rootDir`), and koffi (vendored), by name. */
export function carriedPackages(rootDir: string, inputs: readonly string[]): CarriedPackage[] {
  const names = new Set<string>(['koffi']);
  for (const input of inputs) {
    const m = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (m?.[1]) names.add(m[1]);
  }
  return [...names].sort().map((name) => {
    const dir = join(rootDir, 'node_modules', name);
    const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version?: string; license?: string };
    return { name, version: pkg.version ?? '', license: pkg.license ?? 'unknown', dir };
  });
}

/** The notices text for the packages among `inputs` (paths relative to `rootDir`) and koffi. */
export function thirdPartyNotices(rootDir: string, inputs: readonly string[]): string {
  const parts: string[] = [];
  for (const { name, version, license, dir } of carriedPackages(rootDir, inputs)) {
    const licenceFile = existsSync(dir) ? readdirSync(dir).find((f) => /^(licen[cs]e|copying)/i.test(f)) : undefined;
    const text = licenceFile ? readFileSync(join(dir, licenceFile), 'utf8').trim() : `License: ${license}`;
    parts.push(`${name} ${version} (${license})\n\n${text}\n`);
  }
  return `hfi1-sdma carries code from the following packages.\n\n${parts.join(`\n${'-'.repeat(72)}\n\n`)}`;
}
