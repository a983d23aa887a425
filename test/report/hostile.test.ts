// `report` on hostile input and into hostile places: a snapshot whose strings hold markup and quotes (its host,
// firmware and board names, its kernel log lines) renders them as text, never as markup; a snapshot that every
// other reader refuses is refused with the same message and nothing is written; -o over a link, a directory, a
// FIFO or a device, or into a missing directory, exits 73 and leaves the place as it was; a regular file is
// replaced whole, with no temporary left beside it.
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { entriesOf, type RawEntry, writeArchive } from '../snapshot/craft.js';
import { runCli } from '../support/cli.js';
import { spawnSync } from '../support/spawn.js';
import { tempDirs } from '../support/temp.js';
import { emulatedCapture, SCENARIOS } from './capture.js';

const IS_ROOT = process.getuid?.() === 0;
const tmp = tempDirs('report-hostile-');
let dir: string;
let healthy: string;

const MARKUP = `<script>alert("x")</script><img src=x onerror='alert(1)'>&amp;"'`;

beforeAll(async () => {
  dir = tmp();
  // The healthy host of the report test, in 2 instants (what is crafted here is in the first).
  healthy = await emulatedCapture(dir, 'healthy', SCENARIOS.healthy.units, { ...SCENARIOS.healthy.plan, samples: 2 });
}, 60_000);

/** The healthy capture with `edit` applied to its entries, written as `name`. */
function crafted(name: string, edit: (entries: RawEntry[]) => RawEntry[]): string {
  return writeArchive(join(dir, name), edit(entriesOf(healthy)));
}

function replaceEntry(entries: RawEntry[], path: string, data: (old: string) => string): RawEntry[] {
  let hit = false;
  const out = entries.map((e) => {
    if (e.path !== path) return e;
    hit = true;
    return { ...e, data: data(String(e.data ?? '')) };
  });
  if (!hit) throw new Error(`test archive: no entry ${path}`);
  return out;
}

describe('report of a snapshot whose strings hold markup', () => {
  it('shows the host, firmware, board and log lines as text: no element, no attribute of theirs reaches the page', async () => {
    const file = crafted('markup.tar.gz', (entries) => {
      let e = replaceEntry(entries, 'snapshot.json', (json) => {
        const m = JSON.parse(json);
        m.host = MARKUP;
        m.toolVersion = `9.9.9 ${MARKUP}`;
        return JSON.stringify(m);
      });
      e = replaceEntry(e, 'instants/0/sys/class/infiniband/hfi1_0/fw_ver', () => `${MARKUP}\n`);
      e = replaceEntry(e, 'instants/0/sys/class/infiniband/hfi1_0/board_id', () => `"><svg onload=alert(2)>\n`);
      return replaceEntry(
        e,
        'instants/0/kmsg-hfi1.txt',
        (log) =>
          `${log}[    0.150000] hfi1 0000:05:00.0: hfi1_0: SDMA (2) ${MARKUP}\n[    0.160000] hfi1 0000:05:00.0: hfi1_0: SDMA (3) engine error: 0x2 state </td></tr></table><script>alert(3)</script>\n`,
      );
    });
    const out = join(dir, 'markup.html');
    const r = await runCli(['report', file, '-o', out]);
    expect(r.code, r.stderr).toBe(0);
    const html = readFileSync(out, 'utf8');
    // Every tag of the page is one the renderer writes.
    const tags = new Set([...html.matchAll(/<\/?([a-zA-Z][a-zA-Z0-9]*)/g)].map((m) => (m[1] as string).toLowerCase()));
    const ours =
      'html head meta title style body header h1 h2 h3 p dl dt dd table tr th td a code section span ol li b ul details summary div figure figcaption svg rect path text br footer';
    expect([...tags].filter((t) => !ours.split(' ').includes(t))).toEqual([]);
    expect(html).not.toMatch(/<script|<img|<svg onload|<[^>]*\son\w+=/i);
    const shown =
      '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=&#39;alert(1)&#39;&gt;&amp;amp;&quot;&#39;';
    expect(html).toContain(`<dt>host</dt><dd>${shown}</dd>`);
    expect(html).toContain(`<dt>firmware</dt><dd>${shown}</dd>`);
    expect(html).toContain('<dt>board</dt><dd>&quot;&gt;&lt;svg onload=alert(2)&gt;</dd>');
    expect(html).toContain(`(not decoded) SDMA (2) ${shown}`);
    expect(html).toContain('in &lt;/td&gt;&lt;/tr&gt;&lt;/table&gt;&lt;script&gt;alert(3)&lt;/script&gt;:');
    expect(html).toContain(`<title>hfi1-sdma report: ${shown}, 2026-01-02 03:04:05 UTC</title>`);
  });
});

describe('report of a snapshot every reader refuses', () => {
  const cases: [string, (entries: RawEntry[]) => RawEntry[]][] = [
    ['an entry that climbs out of the tree', (e) => [...e, { path: '../escape', data: 'x' }]],
    ['a manifest that is not JSON', (e) => replaceEntry(e, 'snapshot.json', () => '{ not json')],
    [
      'a manifest naming a unit that is not a unit',
      (e) => replaceEntry(e, 'snapshot.json', (j) => j.replace(/"hfi1_0"/g, '"<b>x</b>"')),
    ],
  ];
  for (const [what, edit] of cases) {
    it(`${what}: exit 65 with the message 'engines' gives, nothing written`, async () => {
      const file = crafted(`bad-${what.replace(/\W+/g, '-')}.tar.gz`, edit);
      const out = join(dir, `bad-${what.replace(/\W+/g, '-')}.html`);
      const engines = await runCli(['--sysroot', file, 'engines']);
      const r = await runCli(['report', file, '-o', out]);
      expect(engines.code).toBe(65);
      expect(r.code).toBe(65);
      expect(r.stderr).toBe(engines.stderr);
      expect(existsSync(out)).toBe(false);
    });
  }
});

describe('report -o into places it must not write', () => {
  /** The entries of `d` that look like a temporary of ours. */
  const temporaries = (d: string) => readdirSync(d).filter((n) => n.startsWith('.hfi1-sdma'));

  it('a symbolic link, a directory, a FIFO: 73, each left as it was', async () => {
    const d = join(dir, 'places');
    mkdirSync(d);
    const victim = join(d, 'victim.txt');
    writeFileSync(victim, 'keep me\n');
    symlinkSync(victim, join(d, 'link.html'));
    mkdirSync(join(d, 'dir.html'));
    expect(spawnSync('mkfifo', [join(d, 'fifo.html')]).status).toBe(0);
    const places: [string, string][] = [
      ['link.html', 'a symbolic link'],
      ['dir.html', 'a directory'],
      ['fifo.html', 'a FIFO (named pipe)'],
    ];
    for (const [name, kind] of places) {
      const target = join(d, name);
      const r = await runCli(['report', healthy, '-o', target]);
      expect(r.code, name).toBe(73);
      expect(r.stderr).toContain(`-o ${target}: is ${kind}, not a regular file: it is left as it is`);
    }
    expect(readlinkSync(join(d, 'link.html'))).toBe(victim);
    expect(readFileSync(victim, 'utf8')).toBe('keep me\n');
    expect(readdirSync(join(d, 'dir.html'))).toEqual([]);
    expect(lstatSync(join(d, 'fifo.html')).isFIFO()).toBe(true);
    expect(temporaries(d)).toEqual([]);
  });

  it.runIf(IS_ROOT)('a device node: 73, the node untouched (runs as root: makes a node with mknod)', async () => {
    const d = join(dir, 'dev');
    mkdirSync(d);
    const node = join(d, 'null.html');
    expect(spawnSync('mknod', [node, 'c', '1', '3']).status).toBe(0);
    const r = await runCli(['report', healthy, '-o', node]);
    expect(r.code).toBe(73);
    expect(r.stderr).toContain(`-o ${node}: is a character device`);
    expect(statSync(node).isCharacterDevice()).toBe(true);
  });

  it('a directory that does not exist: 73; an existing page: replaced whole, no temporary left', async () => {
    const missing = join(dir, 'no-such-dir', 'r.html');
    const r = await runCli(['report', healthy, '-o', missing]);
    expect(r.code).toBe(73);
    expect(r.stderr).toContain('is not an existing directory: create it first');
    const d = join(dir, 'replace');
    mkdirSync(d);
    const page = join(d, 'r.html');
    writeFileSync(page, 'an older page\n');
    const ok = await runCli(['report', healthy, '-o', page]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(readFileSync(page, 'utf8')).toMatch(/^<!DOCTYPE html>[\s\S]*<\/html>\n$/);
    expect(readdirSync(d)).toEqual(['r.html']);
  });
});
