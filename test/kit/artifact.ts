// The release artifact, built once per test file into a temporary directory.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildPackage, type PackageResult } from '../../scripts/package/build.js';
import { ROOT } from '../support/child.js';

/** Build hfi1-sdma-<version>.tgz from this checkout into a fresh temporary directory. */
export async function buildArtifact(): Promise<PackageResult & { dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'hfi1-sdma-artifact-'));
  // The test run's global setup has just emitted the declarations (tsconfig.api.json) that the artifact rolls up.
  return { ...(await buildPackage(ROOT, dir, { declarationsEmitted: true })), dir };
}
