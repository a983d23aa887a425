// A file-backed BAR (a sysroot's or snapshot's resource0) truncated while open: reading a mapping of it would
// raise SIGBUS. Each sample checks the file's size first and reports the device gone instead.
// The backend runs in a child so that a fault shows as the child's signal, not a dead test worker.
import { truncateSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { openSdmaWindow } from '../../src/hw/regs.js';
import { ROOT } from '../support/child.js';
import { spawnSync } from '../support/spawn.js';
import { CHILD_LIMIT_MS, goodBar, goodTree, tempRoots } from './sources-tree.js';

const fresh = tempRoots();

/** For each tree: sample, truncate its resource0 to `size`, sample again; in one child, as JSON (one entry per tree). */
function sampleAcrossTruncation(trees: { root: string; resource0: string; size: number }[]) {
  const script = `
    import { truncateSync } from 'node:fs';
    import { openHwBackend } from ${JSON.stringify(`${ROOT}dist/src/hw/index.js`)};
    const show = (ss) => ss.map((s) => ({ gone: s.gone, state: s.state, csr: s.csr === null ? null : 'set', sources: s.sources }));
    const out = [];
    for (const { root, resource0, size } of JSON.parse(process.argv[1])) {
      const b = await openHwBackend({ sysroot: root });
      const u = await b.unit(0);
      const before = await u.sample();
      truncateSync(resource0, size);
      const after = await u.sample();
      const again = await u.sample();
      await b.close();
      out.push({ before: show(before), after: show(after), again: show(again), warnings: u.warnings() });
    }
    console.log(JSON.stringify(out));
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(trees)], {
    encoding: 'utf8',
    timeout: CHILD_LIMIT_MS,
  });
  return { status: r.status, signal: r.signal, stderr: r.stderr, out: r.status === 0 ? JSON.parse(r.stdout) : null };
}

const CUTS: [string, number][] = [
  ['to one page', 4096],
  ['to nothing', 0],
];

describe('resource0 truncated while mapped', () => {
  // One child for both cuts, so that a fault shows as the child's signal, not a dead test worker.
  let r: ReturnType<typeof sampleAcrossTruncation>;
  const trees: { root: string; resource0: string; size: number }[] = [];
  beforeAll(() => {
    for (const [, size] of CUTS) {
      const t = goodTree(fresh(), { bar: goodBar });
      trees.push({ root: t.root, resource0: t.resource0, size });
    }
    r = sampleAcrossTruncation(trees);
  });

  it.each(CUTS.map(([what, size], i) => [what, size, i] as const))(
    '%s: the next samples are gone (E_DEVICE_GONE), no SIGBUS',
    (_what, size, i) => {
      expect(r.signal, r.stderr).toBeNull();
      expect(r.status, r.stderr).toBe(0);
      const one = r.out[i];
      expect(one.before.map((s: { gone: boolean }) => s.gone)).toEqual([false, false]);
      expect(one.before[0].sources).toContain('bar');
      for (const s of [...one.after, ...one.again]) expect(s).toMatchObject({ gone: true, state: null, csr: null });
      const w = one.warnings.find((x: { key: string }) => x.key === 'bar:gone');
      expect(w?.message).toContain(`${trees[i]?.resource0}: shrank to ${size} bytes while `);
    },
  );

  it('the window itself: check() passes on a whole file and throws E_DEVICE_GONE once it shrank', () => {
    const t = goodTree(fresh(), { bar: goodBar });
    const win = openSdmaWindow(t.resource0);
    try {
      expect(() => win.check()).not.toThrow();
      truncateSync(t.resource0, 1 << 20);
      expect(() => win.check()).toThrow(expect.objectContaining({ code: 'E_DEVICE_GONE' }));
    } finally {
      win.close();
    }
  });
});
