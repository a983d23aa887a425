// The matrix's paths (test/e2e/matrix*.test.ts): for each scenario, health (three runs carrying a state), the
// exporter's series under the shipped rules (promtool) and watch, through the rendered sysroot and the live reader,
// and what they must agree on. The tables of scenarios are the test files'.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend.js';
import { type EmuCliOptions, emuUnitFromOptions } from '../../src/emu/index.js';
import { writeSysroot } from '../../src/emu/sysroot.js';
import type { EmuUnit } from '../../src/emu/unit.js';
import { Sampler } from '../../src/export/sampler.js';
import { openHwBackend } from '../../src/hw/index.js';
import { runCli } from '../support/cli.js';
import { hasPromtool, promtoolAlertsEach } from '../support/promtool.js';
import { emuOptions } from '../support/rendered-host.js';

/** Rounds of every path: 5 rounds 200 ms apart (health's five samples at --stall-ms 400). */
const ROUNDS = 5;
const STEP_MS = 200;
const HEALTH = ['--stall-ms', '400', '--strand-ms', '200'];

export interface Scenario {
  what: string;
  opts: Partial<EmuCliOptions>;
  /** Virtual time of the first round (past the fault). */
  atMs: number;
  /** Time between the rounds of watch and the exporter (STEP_MS when absent): a halt needs 2 s of them. */
  stepMs?: number;
  /** health's exit status by the third run, and a finding code its status line must name (or none). */
  health: number;
  code?: string;
  /** The alerts the exporter's series fire (name and engine or unit), and what watch shows. */
  alerts: Record<string, string>[];
  verdict?: { engine: number; is: RegExp };
  /** The cause watch gives the stalled engines (every one), and the port it names. */
  cause?: { is: 'host' | 'fabric' | 'link'; port: number };
  /** What neither health nor watch may say. */
  mustNot?: RegExp;
  /** A finding code (besides the first) health must also give. */
  alsoCode?: string;
  /** The port's XmitWait rises over the exporter's rounds (a busy port waits for credits now and then). */
  xmitWaitRises?: boolean;
}

interface WatchedEngine {
  verdict: string;
  strandedWaiters: number | null;
  cause: { cause: string; port: number | null } | null;
}

/** Engine → verdict of the last round of `watch --json`. */
function watchVerdicts(ndjson: string): Map<number, WatchedEngine> {
  const lines = ndjson
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const last = lines.slice(-lines.filter((l) => l.t === lines.at(-1).t).length);
  return new Map(last.map((l) => [l.engine, { verdict: l.verdict, strandedWaiters: l.strandedWaiters, cause: l.cause }]));
}

/** Engine → verdict as the exporter serves it, and the engines it serves a stranded waiter on. */
function exportedVerdicts(text: string) {
  const verdicts = new Map<number, string>();
  for (const m of text.matchAll(/^hfi1_sdma_verdict\{unit="[^"]+",engine="(\d+)",verdict="([^"]+)",reason="[^"]+"\} 1$/gm)) {
    verdicts.set(Number(m[1]), m[2] as string);
  }
  const stranded = [...text.matchAll(/^hfi1_sdma_stranded_waiters\{unit="[^"]+",engine="(\d+)"\} ([1-9]\d*)$/gm)].map((m) =>
    Number(m[1]),
  );
  return { verdicts, stranded };
}

/** Small rings: the matrix is about verdicts, and every path renders and reads the whole ring each round. */
const RING = { descqCnt: 256 };

/** A reader of a shared host: a live backend of its own, whose advanceMs waits for the others. */
type Reader = Backend & { advanceMs(ms: number): Promise<void>; leave(): Promise<void> };

/**
 * One emulated host rendered under `root` (run to `atMs` first) that `readers` readers walk through together, each
 * through a live backend of its own: the emulator moves on only when every reader still reading waits for time to
 * pass, to the earliest instant one of them asked for, and renders once for them all. Readers taking the same
 * instants read the same tree: what two hosts of the same options and seed show, emulated and rendered once.
 */
async function sharedHost(root: string, opts: Partial<EmuCliOptions>, atMs: number, readers: number) {
  const u = emuUnitFromOptions(emuOptions(opts));
  u.runUntilMs(atMs);
  await writeSysroot(u, root);
  let reading = readers;
  let moving = false;
  const waiting: { atMs: number; resume: () => void }[] = [];
  const move = async () => {
    if (moving || waiting.length === 0 || waiting.length < reading) return;
    moving = true;
    u.runUntilMs(Math.min(...waiting.map((w) => w.atMs)));
    await writeSysroot(u, root);
    moving = false;
    for (const w of waiting.filter((x) => x.atMs <= u.nowMs)) {
      waiting.splice(waiting.indexOf(w), 1);
      w.resume();
    }
  };
  const reader = async (): Promise<Reader> => {
    const hw = await openHwBackend({ sysroot: root, clock: { nowMs: () => u.nowMs } });
    let left = false;
    return {
      kind: hw.kind,
      ...(hw.origin ? { origin: hw.origin } : {}),
      units: () => hw.units(),
      unit: (id) => hw.unit(id),
      // Each command closes its backend; the reader's runs share one until it leaves.
      close: async () => {},
      advanceMs: (ms: number) =>
        new Promise<void>((resume) => {
          waiting.push({ atMs: u.nowMs + ms, resume });
          void move();
        }),
      async leave() {
        if (left) return;
        left = true;
        reading--;
        await hw.close();
        await move();
      },
    };
  };
  return { emu: u as EmuUnit, reader };
}

/**
 * watch's NDJSON, and what the exporter served at each of its rounds: the shared tree, read by watch and by the
 * exporter's sampler (each through a live backend of its own) at the same instants.
 */
async function watchedAndExported(
  root: string,
  shared: Awaited<ReturnType<typeof sharedHost>>,
  s: Scenario,
): Promise<{ ndjson: string; texts: string[] }> {
  const host = await shared.reader();
  const own = await openHwBackend({ sysroot: root, clock: { nowMs: () => shared.emu.nowMs } });
  const sampler = new Sampler({
    backend: own,
    buildInfo: { version: '0.0.0', backend: 'hw' },
    minIntervalMs: 0,
    stallMs: 400,
    strandMs: 200,
    nowMs: () => shared.emu.nowMs,
    log: () => {},
  });
  const texts: string[] = [];
  const serve = async () => {
    await sampler.refresh();
    texts.push(await sampler.metrics.text.metrics());
  };
  await serve();
  const advance = host.advanceMs;
  host.advanceMs = async (ms: number) => {
    await advance(ms);
    if (texts.length < ROUNDS) await serve();
  };
  try {
    const r = await runCli(
      ['watch', '--json', '--count', String(ROUNDS), '--interval-ms', String(s.stepMs ?? STEP_MS), '--stall-ms', '400'],
      {},
      false,
      '',
      host,
    );
    // watch takes its last sample without moving time on: the exporter's rounds are the same instants.
    while (texts.length < ROUNDS) await host.advanceMs(s.stepMs ?? STEP_MS);
    return { ndjson: r.stdout, texts };
  } finally {
    await own.close();
    await host.leave();
  }
}

/** Three health runs carrying a state, 500 ms apart, the first over the shared host's first rounds; the last run's result. */
async function checked(tmp: () => string, shared: Awaited<ReturnType<typeof sharedHost>>) {
  const host = await shared.reader();
  const state = join(tmp(), 'health.state');
  let r: Awaited<ReturnType<typeof runCli>>;
  try {
    r = await runCli(['health', ...HEALTH, '--state', state, '--json'], {}, false, '', host);
    for (let i = 0; i < 2; i++) {
      await host.advanceMs(500);
      r = await runCli(['health', ...HEALTH, '--state', state, '--json'], {}, false, '', host);
    }
  } finally {
    await host.leave();
  }
  return {
    last: r,
    doc: JSON.parse(r.stdout) as {
      status: string;
      findings: { code: string; kind: string; engine: number | null; port?: number | null; text: string }[];
    },
  };
}

/**
 * The matrix's tests for `scenarios` (temporary directories from the test file's `tmp`): health, the exporter and watch
 * agree and say what happened in each, then the shipped rules over every scenario's rounds in one promtool run.
 */
export function describeMatrix(title: string, scenarios: readonly Scenario[], tmp: () => string): void {
  /** What each scenario's exporter served, round by round: the shipped rules' input, run once for every scenario. */
  const served = new Map<Scenario, string[]>();

  // In this order, even under --sequence.shuffle: the last test reads what the others served.
  describe(title, { shuffle: false }, () => {
    for (const s of scenarios) {
      it(s.what, async () => {
        // One host for both: health's first run and watch (with the exporter) read the same instants.
        const root = tmp();
        const shared = await sharedHost(root, { ...RING, ...s.opts }, s.atMs, 2);
        const [{ texts, ndjson }, h] = await Promise.all([watchedAndExported(root, shared, s), checked(tmp, shared)]);
        served.set(s, texts);
        const text = texts.at(-1) as string;
        // health, by the third run.
        expect(h.last.code, h.last.stdout).toBe(s.health);
        if (s.code) expect(h.doc.findings[0]?.code, h.last.stdout).toBe(s.code);
        // Notes of what cannot be seen (a kind of waiter, the reduced view, a busy unit's PSM writers whose engine
        // nothing names) are no findings about the host.
        else
          expect(
            h.doc.findings.filter((f) => f.kind !== 'invisible' && f.kind !== 'reduced' && f.kind !== 'psmUnjudged'),
            h.last.stdout,
          ).toEqual([]);
        if (s.alsoCode)
          expect(
            h.doc.findings.map((f) => f.code),
            h.last.stdout,
          ).toContain(s.alsoCode);
        if (s.mustNot) {
          for (const f of h.doc.findings) expect(`${f.code} ${f.text}`).not.toMatch(s.mustNot);
          for (const l of ndjson.trim().split('\n')) {
            const e = JSON.parse(l);
            expect(`${e.verdict} ${e.reason} ${e.cause?.why ?? ''}`).not.toMatch(s.mustNot);
          }
        }
        if (s.code === 'SD301') return;
        if (s.xmitWaitRises) {
          const wait = (t: string) => Number(/^hfi1_sdma_port_xmit_wait_total\{device="hfi1_0",port="1"\} (\d+)$/m.exec(t)?.[1]);
          expect(wait(text)).toBeGreaterThan(wait(texts[0] as string));
        }
        // The same samples, the same verdicts: watch's last round is what the exporter serves.
        const w = watchVerdicts(ndjson);
        const x = exportedVerdicts(text);
        expect(new Map([...w].map(([e, v]) => [e, v.verdict]))).toEqual(x.verdicts);
        expect([...w].filter(([, v]) => (v.strandedWaiters ?? 0) > 0).map(([e]) => e)).toEqual(x.stranded);
        const stalledByWatch = [...w].filter(([, v]) => v.verdict === 'stalled').map(([e]) => e);
        if (s.cause?.is === 'fabric' || s.cause?.is === 'link') {
          // Said once for the port, with every engine it stalled.
          const byPort = h.doc.findings.filter((f) => f.code === s.code);
          expect(byPort.map((f) => f.port)).toEqual([s.cause.port]);
          expect(h.doc.findings.filter((f) => f.kind === 'stalled')).toEqual([]);
        } else {
          const stalledByHealth = h.doc.findings.filter((f) => f.kind === 'stalled').map((f) => f.engine);
          // health's last run saw later samples; a stall is the same stall in both.
          expect(stalledByHealth).toEqual(stalledByWatch);
        }
        if (s.cause) {
          expect(stalledByWatch.length).toBeGreaterThan(0);
          for (const e of stalledByWatch) expect(w.get(e)?.cause).toMatchObject({ cause: s.cause.is, port: s.cause.port });
        }
        if (s.verdict) expect(w.get(s.verdict.engine)?.verdict).toMatch(s.verdict.is);
      });
    }

    // One promtool run for every scenario (a test group each): promtool's start and the rules' load are most of a run.
    it.skipIf(!hasPromtool)(
      "the shipped rules fire, over each scenario's rounds, nothing on a healthy host and on a faulted one only what the fault is (skipped only when promtool is not installed)",
      () => {
        expect(
          scenarios.filter((s) => !served.has(s)).map((s) => s.what),
          'scenarios whose exporter served nothing',
        ).toEqual([]);
        const verdicts = promtoolAlertsEach(
          tmp(),
          scenarios.map((s) => ({ text: served.get(s) as string[], alerts: s.alerts })),
        );
        expect(verdicts.flatMap((v, i) => (v.ok ? [] : [`${scenarios[i]?.what}:\n${v.out}`])).join('\n')).toBe('');
      },
    );
  });
}
