// The boundary of a sysroot is the tree opened when the run starts, held as a directory descriptor: a user who
// owns the directory holding --sysroot and points it at `/` (or at another tree) later moves nothing. Links out
// of the tree stay refused, the files read stay the tree's, and no secret reaches a reading, a snapshot or a
// metric, whichever resolver is in use (the kernel's openat2, or the walk where openat2 is missing). A short
// race with a real flipper runs here; the long one is in boundary-race.prop.test.ts.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Sampler } from '../../src/export/sampler.js';
import { containmentMode, holdContainment, OutsideTreeError, useWalkResolver } from '../../src/hw/contain.js';
import { hwFsFor } from '../../src/hw/fsio.js';
import { openHwBackend } from '../../src/hw/index.js';
import { captureSnapshot } from '../../src/snapshot/capture.js';
import { tempDirs } from '../support/temp.js';
import { copyTree, EMULATED_ENGINES, emulatedHost } from './canary.js';

const temp = tempDirs('hfi1-boundary-');
const SECRET = 'zq9boundarysecret';
const PARAM = 'sys/module/hfi1/parameters/sdma_descq_cnt';
const STATE = 'sys/class/infiniband/hfi1_0/ports/1/state';

let pristine = '';
beforeAll(async () => {
  pristine = join(temp(), 'host');
  await emulatedHost(pristine);
});

/** Point the link `at` to `target` atomically (a new link renamed over the old one). */
function point(at: string, target: string): void {
  symlinkSync(target, `${at}.new`);
  renameSync(`${at}.new`, at);
}

/**
 * A tree `c` holding links out of it (a parameter and a port state to a secret outside), a second tree `other`
 * holding the secret as plain files at the same places, and the sysroot `tree`, a link to `c`.
 */
function setUp(): { base: string; tree: string; secret: string; other: string } {
  const base = temp();
  const secret = join(base, 'secret');
  writeFileSync(secret, `4: ${SECRET}\n`);
  const c = join(base, 'c');
  // A copy of the one rendered host (holes kept: its BAR image is sparse).
  copyTree(pristine, c);
  for (const rel of [PARAM, STATE]) {
    const p = join(c, rel);
    renameSync(p, `${p}.aside`);
    symlinkSync(secret, p);
  }
  const other = join(base, 'other');
  for (const rel of [PARAM, STATE]) {
    mkdirSync(join(other, rel, '..'), { recursive: true });
    writeFileSync(join(other, rel), `4: ${SECRET}\n`);
  }
  const tree = join(base, 'tree');
  symlinkSync('c', tree);
  return { base, tree, secret, other };
}

afterEach(() => useWalkResolver(false));

for (const resolver of ['openat2', 'walk'] as const) {
  describe(`with the ${resolver} resolver`, () => {
    it('the sysroot pointed at / or at another tree after the start: links out stay refused, files stay the tree’s', async () => {
      if (resolver === 'walk') useWalkResolver(true);
      const { tree, other } = setUp();
      const b = await openHwBackend({ sysroot: tree });
      try {
        if (resolver === 'openat2') expect(containmentMode()).toBe('openat2');
        const fs = hwFsFor(tree);
        for (const target of ['/', other]) {
          point(tree, target);
          await expect(fs.readFile(join(tree, PARAM))).rejects.toThrow(OutsideTreeError);
          await expect(fs.readFile(join(tree, STATE))).rejects.toThrow(/is a symbolic link to .*secret, outside the tree/);
          // What only the tree opened holds is still read; what only the new target holds is not there.
          expect(Buffer.from(await fs.readFile(join(tree, '.hfi1-sdma-emulated'))).length).toBeGreaterThanOrEqual(0);
          await expect(fs.readFile(join(tree, 'etc/hostname'))).rejects.toMatchObject({ code: 'ENOENT' });
          const unit = await b.unit(0);
          expect((await unit.sample()).length).toBe(EMULATED_ENGINES);
        }
      } finally {
        point(tree, 'c');
        await b.close();
      }
    });

    it.runIf(resolver === 'openat2')(
      'a snapshot taken while the sysroot points at another tree holds the first tree’s files, never the secret (with openat2: the walk reads through the same calls)',
      async () => {
        const { base, tree, other } = setUp();
        const out = join(base, 's.tar.gz');
        let k = 0;
        const m = await captureSnapshot(
          tree,
          out,
          { host: 'h', toolVersion: '0', now: new Date(0) },
          {
            samples: 3,
            intervalMs: 10,
            clock: { nowMs: () => k * 10 },
            sleep: async () => {
              k += 1;
              point(tree, k === 1 ? other : '/');
            },
          },
        );
        point(tree, 'c');
        const tar = gunzipSync(readFileSync(out)).toString('latin1');
        expect(tar).not.toContain(SECRET);
        for (const inst of m.instants) {
          expect(inst.sources.find((s) => s.path === STATE)).toMatchObject({ captured: false });
          expect(inst.sources.find((s) => s.path === 'proc/interrupts')).toMatchObject({ captured: true });
        }
      },
    );
  });
}

describe('the directory is held while anything holds it', () => {
  it('opened once at the first hold; after the last one lets go, a later read opens the tree then named', async () => {
    const { tree, other } = setUp();
    const release = holdContainment(tree);
    point(tree, other);
    await expect(hwFsFor(tree).readFile(join(tree, STATE))).rejects.toThrow(OutsideTreeError);
    release();
    // A new run: the sysroot is opened again, and it now names the other tree (plain files there).
    const again = holdContainment(tree);
    try {
      expect(Buffer.from(await hwFsFor(tree).readFile(join(tree, STATE))).toString()).toContain(SECRET);
    } finally {
      again();
      point(tree, 'c');
    }
  });
});

/** A child flipping `link` between `a` and `b` as fast as it can for `ms`, by renaming new links over it. */
function flipper(link: string, a: string, b: string, ms: number): Promise<number> {
  const script = `
    const fs = require('node:fs');
    const [link, a, b, ms] = process.argv.slice(1);
    const end = Date.now() + Number(ms);
    let n = 0;
    while (Date.now() < end) {
      fs.symlinkSync(n % 2 ? a : b, link + '.f');
      fs.renameSync(link + '.f', link);
      n++;
    }
    fs.symlinkSync(a, link + '.f');
    fs.renameSync(link + '.f', link);
    console.log(n);`;
  const child = spawn(process.execPath, ['-e', script, link, a, b, String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => {
    out += String(d);
  });
  return new Promise((resolve) => child.on('exit', () => resolve(Number(out.trim()))));
}

describe('a race with a real flipper (the sysroot swapped with / thousands of times while the exporter scrapes)', () => {
  it('no scrape, log line or label holds the secret, and every scrape reads the tree opened at the start', async () => {
    const { tree } = setUp();
    const logs: string[] = [];
    let now = 0;
    const b = await openHwBackend({ sysroot: tree, clock: { nowMs: () => now } });
    // A short race (thousands of flips all the same); the long one, against an exporter child, is the soak's.
    const flips = flipper(tree, 'c', '/', 150);
    try {
      const sampler = new Sampler({
        backend: b,
        buildInfo: { version: '0', backend: 'hw' },
        minIntervalMs: 0,
        stallMs: 1000,
        nowMs: () => now,
        log: (l) => logs.push(l),
        // The units are listed afresh (the backend opened again) every other scrape, as the exporter does every 30 s.
        reopen: () => openHwBackend({ sysroot: tree, clock: { nowMs: () => now } }),
        rediscoverMs: 150,
      });
      let scrapes = 0;
      let done = false;
      void flips.then(() => {
        done = true;
      });
      while (!done || scrapes < 3) {
        now += 100;
        await sampler.refresh();
        const text = await sampler.metrics.text.metrics();
        expect(text).not.toContain(SECRET);
        expect(text).toContain('hfi1_sdma_up{unit="hfi1_0"} 1');
        scrapes++;
        // The reads are synchronous: let the child's exit through between scrapes.
        await new Promise((r) => setImmediate(r));
      }
      expect(await flips).toBeGreaterThan(10);
      expect(logs.join('\n')).not.toContain(SECRET);
      await sampler.monitor.close();
    } finally {
      await b.close();
    }
  });
});
