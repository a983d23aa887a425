// The race on the sysroot's own path at full length: the exporter (a child, as systemd runs it) serves a tree
// whose parameter and port state link to a secret outside it, while another process swaps the sysroot link
// with `/` thousands of times; then the exporter lists its units afresh (every 30 s), with the link back on the
// tree. No scrape and no line of its journal may hold the secret, during the race or after it. It takes a
// minute, so it runs under `npm run soak`; npm test runs the same race in process, shorter, with the units
// listed afresh every other scrape (boundary.test.ts).
import { type ChildProcess, spawn } from 'node:child_process';
import { renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startExporterChild } from '../support/child.js';
import { SOAK } from '../support/runs.js';
import { tempDirs } from '../support/temp.js';
import { emulatedHost } from './canary.js';

const temp = tempDirs('hfi1-boundary-race-');
const SECRET = 'zq9racesecret';
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
});

/** A child swapping `link` between `a` and `b` for `ms` by renaming new links over it, ending on `a`. */
function flip(link: string, a: string, b: string, ms: number): Promise<void> {
  const script = `
    const fs = require('node:fs');
    const [link, a, b, ms] = process.argv.slice(1);
    const end = Date.now() + Number(ms);
    for (let n = 0; Date.now() < end; n++) { fs.symlinkSync(n % 2 ? a : b, link + '.f'); fs.renameSync(link + '.f', link); }
    fs.symlinkSync(a, link + '.f'); fs.renameSync(link + '.f', link);`;
  const child = spawn(process.execPath, ['-e', script, link, a, b, String(ms)], { stdio: 'ignore' });
  children.push(child);
  return new Promise((resolve) => child.on('exit', () => resolve()));
}

describe.runIf(SOAK)('the exporter under a swap of its sysroot with / (a minute long: runs with SOAK=1 only)', () => {
  it('no scrape and no journal line holds the secret, during the race nor after the units are listed afresh', async () => {
    const base = temp();
    const secret = join(base, 'secret');
    writeFileSync(secret, `4: ${SECRET}\n`);
    const c = join(base, 'c');
    await emulatedHost(c);
    for (const rel of ['sys/module/hfi1/parameters/sdma_descq_cnt', 'sys/class/infiniband/hfi1_0/ports/1/state']) {
      const p = join(c, rel);
      renameSync(p, `${p}.aside`);
      symlinkSync(secret, p);
    }
    const tree = join(base, 'tree');
    symlinkSync('c', tree);
    const x = await startExporterChild(
      ['--sysroot', tree, '--backend', 'hw', 'export', '--listen', '127.0.0.1:0', '--min-interval-ms', '100'],
      children,
    );
    const bodies: string[] = [];
    const race = flip(tree, 'c', '/', 15_000);
    let racing = true;
    void race.then(() => {
      racing = false;
    });
    while (racing) {
      bodies.push(await x.scrape());
      await new Promise((r) => setTimeout(r, 300));
    }
    // The exporter lists its units afresh every 30 s: after that, with the link back on the tree.
    await new Promise((r) => setTimeout(r, 35_000));
    bodies.push(await x.scrape());
    for (const b of bodies) expect(b).not.toContain(SECRET);
    expect(bodies.at(-1)).toContain('hfi1_sdma_up{unit="hfi1_0"} 1');
    expect(x.stderr()).not.toContain(SECRET);
  }, 120_000);
});
