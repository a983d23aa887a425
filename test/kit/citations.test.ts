// What users read cites only documents the repository holds (or kernel functions by name): no
// "DESIGN.md", no reference/ file, no "§b.8" section marks, in --help, the README, the man page,
// the JSON page, the systemd units or the exporter's metric descriptions.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Sampler } from '../../src/export/server.js';
import { ROOT } from '../support/child.js';
import { FakeBackend } from '../support/fake-backend.js';
import { cliSurface, helpText } from './cli-surface.js';

const CITATION = /DESIGN\.md|reference\/|§/;

/** Lines of `text` that cite a document outside the repository, as "where: line". */
function citations(where: string, text: string): string[] {
  return text
    .split('\n')
    .filter((l) => CITATION.test(l))
    .map((l) => `${where}: ${l.trim()}`);
}

/** Offenders allowed for now: none. Any offender fails the test. */
const PENDING: readonly (readonly [where: string, text: string])[] = [];
const pending = (offender: string) =>
  PENDING.some(([where, text]) => offender.startsWith(`${where}: `) && offender.includes(text));

async function everything(): Promise<string[]> {
  const found: string[] = [];
  const surface = await cliSurface();
  for (const path of [[], ...[...surface.commands.keys()].map((c) => c.split(' '))]) {
    found.push(...citations(['hfi1-sdma', ...path, '--help'].join(' '), await helpText(path)));
  }
  for (const file of ['README.md', 'man/hfi1-sdma.8.md', 'docs/json.md']) {
    found.push(...citations(file, readFileSync(join(ROOT, file), 'utf8')));
  }
  for (const unit of ['hfi1-sdma-exporter.service', 'hfi1-sdma-textfile.service', 'hfi1-sdma-textfile.timer']) {
    found.push(...citations(`deploy/systemd/${unit}`, readFileSync(join(ROOT, 'deploy', 'systemd', unit), 'utf8')));
  }
  const sampler = new Sampler({
    backend: new FakeBackend(() => ({ dh: 0, dt: 0 }), 1),
    buildInfo: { version: '0.0.0', backend: 'hw' },
    minIntervalMs: 0,
    stallMs: 1000,
    nowMs: () => 0,
    log: () => {},
  });
  await sampler.refresh();
  found.push(...citations('exporter metrics', await sampler.metrics.text.metrics()));
  return found;
}

describe('citations', { timeout: 120_000 }, () => {
  it('nothing a user reads points at a document the repository does not hold (the list is what does)', async () => {
    const found = await everything();
    expect(found.filter((f) => !pending(f))).toEqual([]);
  });

  it('finds a section mark and a DESIGN.md reference', () => {
    expect(citations('x', 'fine\nsee §b.8\nper DESIGN.md\nreference/hfi1-sdma.md')).toEqual([
      'x: see §b.8',
      'x: per DESIGN.md',
      'x: reference/hfi1-sdma.md',
    ]);
  });
});
