// A test from a capture: the twin, minimised, as a .json fixture, and a vitest file beside it that builds the twin
// with the library (createEmuBackend({ from })), watches it as health would and asserts the capture's verdict. What
// makes it run the same anywhere is pinned in the fixture: the tool version and formats it was written with, the
// seed, the workload, faults, order and parameters. Before anything is written the test's own loop is run here, on
// the same fixture, and must give that verdict.
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { emuBackendOf } from '../emu/index.js';
import { EmuUnit } from '../emu/unit.js';
import { Hfi1SdmaError } from '../errors.js';
import { Monitor, rounds } from '../monitor/monitor.js';
import { observationMs } from '../monitor/observation.js';
import { checkOutputTarget } from '../output-file.js';
import { verdictOf } from './build.js';
import type { TwinFinding, TwinFixture, TwinRun } from './fixture.js';
import { TWIN_SETTLE_MS, twinUnitOptions } from './options.js';
import { findingPlace, sameVerdict } from './run.js';

/** How the emitted test samples: rounds this far apart (ms), this many. */
export function testPace(run: Pick<TwinRun, 'stallMs' | 'strandMs'>): { intervalMs: number; count: number } {
  const intervalMs = Math.max(1, Math.ceil(Math.min(run.stallMs, run.strandMs) / 2));
  return { intervalMs, count: Math.floor(observationMs(run.stallMs) / intervalMs) + 1 };
}

/** A finding as the emitted test lists it: `SD201 hfi1_0 sdma5`. */
function place(f: { code: string; unit: string | null; engine: number | null; port: number | null }): string {
  return findingPlace({ ...f, severity: '', text: '' });
}

/** The verdict the emitted test's loop gives for `f` (the same rounds, in process). */
export async function testLoopVerdict(f: TwinFixture, run: TwinRun): Promise<TwinFinding[]> {
  const unit = new EmuUnit(twinUnitOptions(f, { ...run, form: 'state' }));
  const backend = emuBackendOf(unit, TWIN_SETTLE_MS);
  const monitor = new Monitor(backend, { stallMs: run.stallMs, strandMs: run.strandMs, waiters: 'read' });
  const pace = testPace(run);
  let last: TwinFinding[] = [];
  try {
    for await (const round of rounds(monitor, { ...pace, sleep: async () => {} })) last = verdictOf(round.findings);
  } finally {
    await monitor.close();
  }
  return last;
}

/** The name the files take: the capture's, without its extension, in letters, digits, `-`, `_` and `.`. */
export function emitName(f: TwinFixture): string {
  const base = basename(f.source.file)
    .replace(/\.(tar\.gz|tgz|json)$/i, '')
    .replace(/\.twin$/, '');
  const safe = base.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^[.-]+/, '') || 'capture';
  return f.source.instant === f.source.instants - 1 ? safe : `${safe}-instant${f.source.instant}`;
}

/** A string as a single-quoted literal (the style most formatters keep). */
function quoted(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n')}'`;
}

/** The vitest file asserting the twin's verdict. */
export function testSource(f: TwinFixture, run: TwinRun, fixtureName: string): string {
  const s = f.source;
  const pace = testPace(run);
  const expected = f.verdict.map(place).sort();
  const title = expected.length === 0 ? 'OK (no finding)' : expected.join(', ');
  const when = s.capturedAt ? `captured ${s.capturedAt}` : 'capture time unknown';
  const by = s.toolVersion ? ` by hfi1-sdma ${s.toolVersion}` : '';
  const on = s.host ? ` on ${s.host}` : '';
  const lines = [
    `// The twin of ${basename(s.file)} (${f.unit.name}, instant ${s.instant} of ${s.instants}, ${when}${on}${by}), written by`,
    `// hfi1-sdma ${f.toolVersion} ('emu twin --emit-test'): built from ${fixtureName}, watched as health watches, it reaches the`,
    `// capture's verdict. Pinned in the fixture: capture format ${s.format}, twin format ${f.format}, seed ${run.seed}, workload`,
    `// ${run.workload}${run.faults.length ? `, faults ${run.faults.join(' ')}` : ''}, order ${run.variant}.`,
    "import { readFileSync } from 'node:fs';",
    "import { createMonitor } from 'hfi1-sdma';",
    "import { createEmuBackend } from 'hfi1-sdma/emulator';",
    "import { expect, it } from 'vitest';",
    '',
    `const fixture = JSON.parse(readFileSync(new URL('./${fixtureName}', import.meta.url), 'utf8'));`,
    '',
    `it(${quoted(`the twin of ${basename(s.file)} reaches ${title}`)}, async () => {`,
    '  const emu = await createEmuBackend({ from: fixture });',
    `  const monitor = createMonitor(emu, { stallMs: ${run.stallMs}, strandMs: ${run.strandMs} });`,
    '  try {',
    '    let verdict: string[] = [];',
    `    for await (const round of monitor.rounds({ intervalMs: ${pace.intervalMs}, count: ${pace.count} })) {`,
    '      verdict = round.findings',
    "        .filter((f) => f.severity !== 'note')",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the emitted test's own template literals
    '        .map((f) => [f.code, f.unit, f.engine === null ? null : `sdma${f.engine}`, f.port === null ? null : `port ${f.port}`])',
    "        .map((parts) => parts.filter((x) => x !== null).join(' '));",
    '    }',
    `    expect(verdict.sort()).toEqual([${expected.map(quoted).join(', ')}]);`,
    '  } finally {',
    '    await monitor.close();',
    '    await emu.close();',
    '  }',
    '});',
    '',
  ];
  return lines.join('\n');
}

/** Write `data` to `path` through a temporary beside it, renamed into place when whole. */
function writeWhole(path: string, data: string, option: string): void {
  checkOutputTarget(path, option);
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    writeFileSync(tmp, data, { mode: 0o644 });
    checkOutputTarget(path, option);
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    if (e instanceof Hfi1SdmaError) throw e;
    const code = (e as NodeJS.ErrnoException).code ?? String(e);
    throw new Hfi1SdmaError('E_CANT_CREATE', `${option}: cannot write ${path} (${code}): name a directory you can write to`, {
      cause: e,
    });
  }
}

/** Write the fixture and its test into `dir` (made when missing); returns their paths. */
export async function emitTest(f: TwinFixture, run: TwinRun, dir: string): Promise<{ fixture: string; test: string }> {
  const got = await testLoopVerdict(f, run);
  if (!sameVerdict(got, f.verdict)) {
    throw new Hfi1SdmaError(
      'E_UNAVAILABLE',
      `the twin of ${f.source.file} gives ${got.map(findingPlace).join(', ') || 'OK'} where the capture gives ${f.verdict.map(findingPlace).join(', ') || 'OK'}: no test is written (one that fails from the start pins nothing)`,
    );
  }
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? String(e);
    throw new Hfi1SdmaError('E_CANT_CREATE', `--emit-test ${dir}: cannot make the directory (${code})`, { cause: e });
  }
  const name = emitName(f);
  const fixture = join(dir, `${name}.twin.json`);
  const test = join(dir, `${name}.test.ts`);
  // The capture is named by its file name only: where it lay on this host (a home directory, say) stays here.
  const kept: TwinFixture = { ...f, source: { ...f.source, file: basename(f.source.file) } };
  writeWhole(fixture, `${JSON.stringify({ ...kept, run }, null, 2)}\n`, '--emit-test');
  writeWhole(test, testSource(f, run, `${name}.twin.json`), '--emit-test');
  return { fixture, test };
}
