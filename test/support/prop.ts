// Properties as vitest tests: `test.prop(arbitraries, params)(name, predicate)` runs fast-check's assert of the
// predicate as one test, named with its seed (the spelling of @fast-check/vitest, which built its `test` by
// walking every chain of vitest's modifiers as it loaded: 3 s of CPU in each worker).
import fc from 'fast-check';
import { test as vitestTest } from 'vitest';

export { fc };

type Arbitraries<Ts extends unknown[]> = { [K in keyof Ts]: fc.Arbitrary<Ts[K]> };
type Predicate<Ts extends unknown[]> = (...args: Ts) => boolean | undefined | PromiseLike<boolean | undefined>;

/** A property over `arbitraries` as one vitest test; without a seed in `params`, a fresh one each run (in the name). */
function prop<Ts extends [unknown, ...unknown[]]>(arbitraries: Arbitraries<Ts>, params: fc.Parameters<Ts> = {}) {
  return (name: string, predicate: Predicate<Ts>, timeoutMs?: number): void => {
    const seed = params.seed ?? Date.now() ^ (Math.random() * 0x1_0000_0000);
    vitestTest(
      `${name} (with seed=${seed})`,
      async () => {
        const property = fc.asyncProperty(...arbitraries, async (...args: Ts) => predicate(...args)) as fc.IAsyncProperty<Ts>;
        await fc.assert(property, { ...params, seed });
      },
      timeoutMs,
    );
  };
}

/** `test.prop`, as the property files spell it. */
export const test = { prop };
