// Measure how long each test file takes and write test/setup/durations.json, the order the suite starts its files in
// (test/setup/sequencer.ts): `npm run test:durations` runs the suite once with vitest's JSON report and keeps every
// file that took a second or more. Run it at rest, on the machine the times should describe, after adding or growing a
// slow file; a file it does not list starts after those it does.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'test/setup/durations.json');
/** Files quicker than this are left out: among them the order hardly matters, and the table stays short. */
const MIN_SECONDS = 1;

interface Report {
  success: boolean;
  testResults: { name: string; startTime: number; endTime: number }[];
}

const dir = mkdtempSync(join(tmpdir(), 'hfi1-sdma-durations-'));
try {
  const report = join(dir, 'report.json');
  const run = spawnSync('npx', ['vitest', 'run', '--reporter=dot', '--reporter=json', `--outputFile.json=${report}`], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  const r = existsSync(report) ? (JSON.parse(readFileSync(report, 'utf8')) as Report) : null;
  if (run.status !== 0 || r === null || !r.success) {
    console.error('test:durations: the suite did not pass; test/setup/durations.json is left as it was');
    process.exitCode = 1;
  } else {
    const files = r.testResults
      .map((t) => [relative(ROOT, t.name), Math.round((t.endTime - t.startTime) / 100) / 10] as const)
      .filter(([, s]) => s >= MIN_SECONDS)
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    writeFileSync(OUT, `${JSON.stringify({ files: Object.fromEntries(files) }, null, 2)}\n`);
    console.log(`test:durations: ${files.length} files of ${r.testResults.length} in ${relative(ROOT, OUT)}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
