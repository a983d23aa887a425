// How many random cases a property runs: a fixed-seed share in `npm test`, thousands in `npm run soak`.

/** True under `npm run soak`. */
export const SOAK = process.env.SOAK === '1';

/** numRuns for fast-check: `ci` in npm test, `soak` under npm run soak. */
export function runs(ci: number, soak: number): number {
  return SOAK ? soak : ci;
}

/** fast-check parameters: fixed seed in npm test (repeatable CI), random under soak. */
export function fcParams(ci: number, soak: number): { numRuns: number; seed?: number } {
  return SOAK ? { numRuns: soak } : { numRuns: ci, seed: 20261129 };
}
