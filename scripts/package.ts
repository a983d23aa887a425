// `npm run package`: build hfi1-sdma-<version>-linux-x64.tgz in the repository root (or in the directory given).
import { fileURLToPath } from 'node:url';
import { buildPackage } from './package/build.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const outDir = process.argv[2] ?? root;
const r = await buildPackage(root, outDir);
const kib = (n: number) => `${(n / 1024).toFixed(0)} KiB`;
process.stdout.write(`${r.tarball}: ${kib(r.tarballBytes)} (bundle ${kib(r.bundleBytes)})\n`);
process.stdout.write(`install offline with: npm install -g ${r.tarball}\n`);
