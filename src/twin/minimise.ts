// A twin cut down to what its verdict needs, as a fuzzer minimises a reproducer: the later instants go (the
// verdict is reached from the seed alone), then the captured traffic, each waiter, each engine's state, the
// descriptor sizes of the engines kept and each port, one at a time, each kept out when the twin still reaches the
// same verdict without it. An engine left out
// starts as at driver load (running, empty); a port, up when in use.
import type { SeedEngine, SeedPort, SeedWaiter, UnitSeed } from '../emu/seed.js';
import { Hfi1SdmaError } from '../errors.js';
import { engineIdsText } from '../progress/engine-ids.js';
import { seedWaiterKey } from './build.js';
import type { TwinFixture } from './fixture.js';
import type { TwinRunOptions } from './options.js';
import { findingPlace, type JudgeWindows, runTwin, sameVerdict } from './run.js';

/** What minimising left out, in words. */
export interface Minimised {
  readonly fixture: TwinFixture;
  readonly dropped: readonly string[];
  /** Twin runs it took. */
  readonly runs: number;
}

/** Minimise `f` for runs with `o`; E_USAGE-free: a twin that does not reach its verdict is an error saying so. */
export async function minimise(f: TwinFixture, o: TwinRunOptions, w: JudgeWindows): Promise<Minimised> {
  let runs = 0;
  const holds = async (x: TwinFixture) => {
    runs++;
    return sameVerdict((await runTwin(x, o, w)).verdict, x.verdict);
  };
  let cur: TwinFixture = { ...f, observations: [] };
  if (!(await holds(cur))) {
    throw new Hfi1SdmaError(
      'E_UNAVAILABLE',
      `the twin of ${f.source.file} does not reach the capture's verdict (${f.verdict.map(findingPlace).join(', ') || 'OK'}) from instant ${f.source.instant}: there is no verdict to pin in a test; see 'hfi1-sdma emu twin --from ${f.source.file}' for where it diverges`,
    );
  }
  const dropped: string[] = [];
  if (f.observations.length > 0) dropped.push(`${f.observations.length} later instant(s)`);
  const tryWith = async (seed: UnitSeed, traffic: TwinFixture['traffic'], what: string) => {
    const next: TwinFixture = { ...cur, seed, traffic };
    if (await holds(next)) {
      cur = next;
      dropped.push(what);
      return true;
    }
    return false;
  };
  if (cur.traffic.length > 0 && !(await tryWith(cur.seed, [], `the traffic (${cur.traffic.length} sender(s))`))) {
    for (const t of [...cur.traffic]) {
      await tryWith(
        cur.seed,
        cur.traffic.filter((x) => x !== t),
        `the traffic on sdma${t.engine}`,
      );
    }
  }
  for (const wt of [...cur.seed.waiters]) {
    const waiters = cur.seed.waiters.filter((x: SeedWaiter) => x !== wt);
    await tryWith({ ...cur.seed, waiters }, cur.traffic, `the waiter ${seedWaiterKey(wt)}`);
  }
  for (const e of [...cur.seed.engines]) {
    const engines = cur.seed.engines.filter((x: SeedEngine) => x !== e);
    if (cur.seed.waiters.some((w) => w.engine === e.engine && w.ownPending > 0)) continue;
    await tryWith({ ...cur.seed, engines }, cur.traffic, `sdma${e.engine}'s state`);
  }
  // The descriptors' byte counts of the engines kept: their requests by count alone, where the verdict holds so.
  for (const e of [...cur.seed.engines]) {
    if (!e.inFlight.some((t) => t.lens !== undefined)) continue;
    const bare: SeedEngine = { ...e, inFlight: e.inFlight.map((t) => ({ numDesc: t.numDesc })) };
    const engines = cur.seed.engines.map((x: SeedEngine) => (x === e ? bare : x));
    await tryWith({ ...cur.seed, engines }, cur.traffic, `sdma${e.engine}'s descriptor sizes`);
  }
  for (const p of [...cur.seed.ports]) {
    const ports = cur.seed.ports.filter((x: SeedPort) => x !== p);
    if (cur.seed.conditions.some((c) => c.port === p.port)) continue;
    await tryWith({ ...cur.seed, ports }, cur.traffic, `port ${p.port}'s link and counters`);
  }
  return { fixture: cur, dropped: grouped(dropped), runs };
}

/** What was left out, an engine's items of one kind told once for all the engines (`sdma0-15's state`). */
function grouped(dropped: readonly string[]): string[] {
  const kinds = [
    { re: /^the traffic on sdma(\d+)$/, say: (e: string) => `the traffic on sdma${e}` },
    { re: /^sdma(\d+)'s state$/, say: (e: string) => `sdma${e}'s state` },
    { re: /^sdma(\d+)'s descriptor sizes$/, say: (e: string) => `sdma${e}'s descriptor sizes` },
  ];
  const out: string[] = [];
  const told = new Set<(typeof kinds)[number]>();
  const waiters = dropped.filter((d) => d.startsWith('the waiter '));
  for (const d of dropped) {
    const kind = kinds.find((k) => k.re.test(d));
    if (kind) {
      if (told.has(kind)) continue;
      told.add(kind);
      const ids = dropped.flatMap((x) => {
        const m = kind.re.exec(x);
        return m ? [Number(m[1])] : [];
      });
      out.push(kind.say(engineIdsText(ids)));
      continue;
    }
    if (d.startsWith('the waiter ') && waiters.length > 3) {
      if (d === waiters[0]) out.push(`${waiters.length} waiters`);
      continue;
    }
    out.push(d);
  }
  return out;
}
