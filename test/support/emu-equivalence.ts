// The fast model against its oracle: one scenario run by the fast model and by the stepped one side by side, compared
// at every sample instant on everything a reader can see: every engine's sample (heads, tail, free count, sequence,
// state, counters, registers), the decoded rings, the waiters, the ports' links and counters, the totals, the event
// log's digest, the kernel log, and the rendered sysroot, file by file and byte by byte.
import { closeSync, mkdtempSync, openSync, readdirSync, readlinkSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closeSysroot, writeSysroot } from '../../src/emu/sysroot.js';
import { EmuUnit, type EmuUnitOptions } from '../../src/emu/unit.js';

/** One scenario: the unit's options (model aside) and the instants (virtual ms) it is compared at. */
export interface Scenario {
  name: string;
  opts: EmuUnitOptions;
  atMs: readonly number[];
  /** Also render both sysroots and compare them byte for byte (slower): at every instant, or at the last one. */
  render?: boolean | 'last';
}

/** What differed first, or null when the two models agreed at every instant; and what the fast model skipped. */
export interface Verdict {
  difference: string | null;
  skippedNs: number;
  periods: number;
}

const json = (x: unknown): string => JSON.stringify(x, (_k, v) => (typeof v === 'bigint' ? `0x${v.toString(16)}` : v));

/** Everything a reader can see of a unit now, as named texts. */
async function view(u: EmuUnit): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const samples = await u.sample();
  samples.forEach((s, i) => {
    out.set(`sample of engine ${u.info.engineIds[i]}`, json(s));
  });
  for (const id of u.info.engineIds) out.set(`ring of engine ${id}`, json(await u.ring(id)));
  out.set('waiters', json(await u.waiters()));
  out.set('links', json(await u.links()));
  out.set('port counters', json(await u.portCounters()));
  out.set('totals', json({ ...u.totals(), virtualMs: 0 }));
  out.set('event log digest', u.logHash());
  out.set('kernel log', json({ lines: u.host.kernelLog, us: u.host.kernelLogUs, seq: u.host.kernelLogSeq }));
  out.set('vector counts', json(u.vectorCounts));
  return out;
}

/** Every file (its path) and link (its target) under `dir`, by relative path. */
function files(
  dir: string,
  rel = '',
  out = new Map<string, { file: string } | string>(),
): Map<string, { file: string } | string> {
  for (const e of readdirSync(join(dir, rel), { withFileTypes: true })) {
    const p = rel === '' ? e.name : `${rel}/${e.name}`;
    if (e.name.startsWith('.hfi1-sdma')) continue; // the writer's own mark (names its directory and process)
    if (e.isDirectory()) files(dir, p, out);
    else if (e.isSymbolicLink()) out.set(p, `-> ${readlinkSync(join(dir, p))}`);
    else if (e.isFile()) out.set(p, { file: join(dir, p) });
  }
  return out;
}

const CHUNK = 1 << 20;
const chunks = [Buffer.alloc(CHUNK), Buffer.alloc(CHUNK)] as const;

/** Whether two files hold the same bytes, read a chunk at a time (a BAR image is 64 or 128 MiB, mostly holes). */
function sameBytes(a: string, b: string): boolean {
  if (statSync(a).size !== statSync(b).size) return false;
  const fa = openSync(a, 'r');
  const fb = openSync(b, 'r');
  try {
    for (;;) {
      const n = readSync(fa, chunks[0], 0, CHUNK, null);
      const m = readSync(fb, chunks[1], 0, CHUNK, null);
      if (n !== m || !chunks[0].subarray(0, n).equals(chunks[1].subarray(0, m))) return false;
      if (n === 0) return true;
    }
  } finally {
    closeSync(fa);
    closeSync(fb);
  }
}

function firstDifference(a: Map<string, { file: string } | string>, b: Map<string, { file: string } | string>): string | null {
  for (const [k, v] of a) {
    const w = b.get(k);
    if (w === undefined) return `${k} only in the fast model's`;
    const same = typeof v === 'string' || typeof w === 'string' ? v === w : sameBytes(v.file, w.file);
    if (!same) return `${k} differs`;
  }
  for (const k of b.keys()) if (!a.has(k)) return `${k} only in the stepped model's`;
  return null;
}

/** Run `s` on both models and compare them at each of its instants. */
export async function compareModels(s: Scenario): Promise<Verdict> {
  const fast = new EmuUnit({ ...s.opts, model: 'fast' });
  const stepped = new EmuUnit({ ...s.opts, model: 'stepped' });
  const dirs = s.render ? [mkdtempSync(join(tmpdir(), 'hfi1-eq-fast-')), mkdtempSync(join(tmpdir(), 'hfi1-eq-stepped-'))] : [];
  try {
    for (const t of s.atMs) {
      fast.runUntilMs(t);
      stepped.runUntilMs(t);
      const a = await view(fast);
      const b = await view(stepped);
      for (const [k, v] of a) {
        if (b.get(k) !== v)
          return verdict(fast, `at ${t} ms, ${k}: fast ${v.slice(0, 400)} / stepped ${(b.get(k) ?? '').slice(0, 400)}`);
      }
      if (s.render === true || (s.render === 'last' && t === s.atMs[s.atMs.length - 1])) {
        const [df, ds] = dirs as [string, string];
        await writeSysroot(fast, df);
        await writeSysroot(stepped, ds);
        const d = firstDifference(files(df), files(ds));
        if (d !== null) return verdict(fast, `at ${t} ms, the rendered sysroot: ${d}`);
      }
    }
    return verdict(fast, null);
  } finally {
    if (s.render) {
      closeSysroot(fast, dirs[0] as string);
      closeSysroot(stepped, dirs[1] as string);
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    }
  }
}

function verdict(fast: EmuUnit, difference: string | null): Verdict {
  const k = fast.skipped();
  return { difference, skippedNs: k.skippedNs, periods: k.periods };
}

/** The flavours compared: WFR under the upstream driver, JKR under the Cornelis hfi1, JKR under hfi2 with two ports. */
export const FLAVOURS: readonly { name: string; opts: EmuUnitOptions }[] = [
  { name: 'wfr-upstream', opts: { chip: 'wfr', driver: 'upstream' } },
  { name: 'jkr-cornelis', opts: { chip: 'jkr', driver: 'cornelis' } },
  { name: 'jkr-hfi2', opts: { chip: 'jkr', driver: 'hfi2', ports: 2 } },
];
