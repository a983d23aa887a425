// The consumer project of the package tests: the README's CI recipe, copied as written (its tsconfig.json, its test,
// its commands), and the type probes a strict consumer compiles beside it.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../support/child.js';

/** The fenced blocks of the README's section `heading`, by language, in order. */
function readmeBlocks(heading: string): Record<string, string[]> {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`README has no section ${heading}`);
  const rest = readme.slice(start + heading.length + 2);
  const section = rest.slice(0, rest.search(/\n#{2,3} /));
  const out: Record<string, string[]> = {};
  for (const m of section.matchAll(/```(\w+)\n([\s\S]*?)```/g)) {
    const lang = m[1] as string;
    out[lang] = [...(out[lang] ?? []), m[2] as string];
  }
  return out;
}

/**
 * Write the README's recipe into `project` (tsconfig.json, test/stall.test.ts) with the probes beside it
 * (test/probes.ts); returns the recipe's commands, to run in `project`.
 */
export function writeRecipe(project: string): { commands: string } {
  const recipe = readmeBlocks('### A CI test against the emulator');
  const [tsconfig, test, commands] = [recipe.json?.[0], recipe.ts?.[0], recipe.sh?.[0]];
  if (!tsconfig || !test || !commands) throw new Error('the README recipe lacks its tsconfig.json, its test or its commands');
  writeFileSync(join(project, 'tsconfig.json'), tsconfig);
  mkdirSync(join(project, 'test'), { recursive: true });
  writeFileSync(join(project, 'test', 'stall.test.ts'), test);
  writeFileSync(join(project, 'test', 'probes.ts'), PROBES);
  return { commands };
}

/**
 * Compiled with the recipe's tsconfig (strict, exactOptionalPropertyTypes): every `@ts-expect-error` must meet an
 * error, or tsc fails; the names a tool author needs are imported from the entry points.
 */
const PROBES = `import type {
  Classification,
  EmulatorOptions,
  Finding,
  FindingCode,
  PortCounters,
  QpStateName,
  Round,
  SeqSource,
  SourceName,
  UnitSettings,
} from 'hfi1-sdma';
import { openBackend } from 'hfi1-sdma';
import type { Emulator } from 'hfi1-sdma/emulator';
import type { EngineSample, FitReport, SubmitPath, Waiter, WaitersSample } from 'hfi1-sdma/progress';

export function probes(f: Finding, c: Classification, r: Round, emu: Emulator, s: EngineSample): unknown[] {
  // @ts-expect-error: no finding has the code SD1O1 (a letter O for a zero)
  const typo = f.code === 'SD1O1';
  // @ts-expect-error: idle is never given with chip-not-fetching
  const pair: Classification = { ...c, verdict: 'idle', reason: 'chip-not-fetching' };
  // @ts-expect-error: a misspelt fault
  const fault: EmulatorOptions = { faults: ['stop-fecth@1000:3'] };
  // @ts-expect-error: a misspelt workload
  const workload: EmulatorOptions = { workload: 'linerate' };
  // @ts-expect-error: exactOptionalPropertyTypes: an option is given or left out, never undefined
  const unset: EmulatorOptions = { seed: undefined };
  // @ts-expect-error: no such fault
  emu.injectFault('no-such-fault');
  // @ts-expect-error: a round's findings are read-only
  r.findings.push(f);
  // @ts-expect-error: so is a verdict
  r.units[0]!.engines[0]!.verdict.verdict = 'idle';
  const fine: EmulatorOptions = { faults: ['stop-fetch@1000:3', 'lost-wakeup:qp@50:1', 'link-down@500'], workload: 'mixed:gbps=10' };
  emu.injectFault('engine-error:GenMismatch', 3);
  const code: FindingCode = 'SD101';
  const counters: readonly PortCounters[] = r.units[0]?.portCounters ?? [];
  const settings: UnitSettings | undefined = r.units[0]?.info.settings;
  const source: SeqSource = s.seqSource;
  const sources: readonly SourceName[] = s.sources;
  const state: QpStateName = 'RTS';
  const fit: FitReport | null = null;
  const path: SubmitPath = 'txlist';
  const waiters: readonly Waiter[] = ([] as WaitersSample[]).flatMap((w) => w.waiters);
  return [typo, pair, fault, workload, unset, fine, code, counters, settings, source, sources, state, fit, path, waiters];
}

/** A backend closed when the block is left, however it is left. */
export async function unitsOf(sysroot: string): Promise<number> {
  await using backend = await openBackend({ sysroot });
  return (await backend.units()).length;
}
`;
