// `report`: the page of a capture. Emulated captures (a stall with an engine error logged during it, a stranded
// QP, an hfi2 window 8-15, a healthy host) render their findings first, every engine and only those, the
// waiters judged and the kernel log on the capture's time axis; headless Chromium builds the same DOM from
// them with no console message and paints a page that is not blank. A live read of the emulator and of a
// rendered tree places the log too. Usage errors exit 64.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Chromium, type LoadedPage } from '../support/chromium.js';
import { runCli } from '../support/cli.js';
import { onPath } from '../support/on-path.js';
import { decodePng, rgbCounts } from '../support/png.js';
import { tempDirs } from '../support/temp.js';
import { onTrack, readTrace, type TraceDoc, traceProblems } from '../support/trace.js';
import { emulatedCapture, SCENARIOS } from './capture.js';

const tmp = tempDirs('report-');
let dir: string;
const files: Record<keyof typeof SCENARIOS, string> = { stall: '', stranded: '', window: '', healthy: '' };
const pages: Record<keyof typeof SCENARIOS, string> = { stall: '', stranded: '', window: '', healthy: '' };

beforeAll(async () => {
  dir = tmp();
  for (const [name, s] of Object.entries(SCENARIOS) as [keyof typeof SCENARIOS, (typeof SCENARIOS)['stall']][]) {
    files[name] = await emulatedCapture(dir, name, s.units, s.plan);
    const out = join(dir, `${name}.html`);
    const r = await runCli(['report', files[name], '-o', out, '--trace', join(dir, `${name}.json`), ...s.args]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^wrote ${out.replace(/[.]/g, '\\.')} \\(\\d+ KiB\\): `));
    expect(r.stdout).toMatch(/\nwrote \S+\.json \(\d+ trace events\)\n$/);
    pages[name] = readFileSync(out, 'utf8');
  }
}, 60_000);

/** The figure ids of the engines drawn, in order. */
const engineIds = (html: string) => [...html.matchAll(/<figure class="eng[^"]*" id="([^"]+)"/g)].map((m) => m[1]);

describe('report of an emulated capture', () => {
  it('is one page with no script, no address outside it and a policy that forbids both', () => {
    for (const html of Object.values(pages)) {
      expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
      expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'`);
      expect(html).not.toMatch(/<script|<link|<img|<iframe|\bsrc=|\bhref="(?!#)|url\(|@import|javascript:/i);
    }
  });

  it('a stall: SD101 on sdma3 first, every engine drawn, the engine error logged during the capture placed on its axis', () => {
    const html = pages.stall;
    expect(engineIds(html)).toEqual(['hfi1_0-sdma0', 'hfi1_0-sdma1', 'hfi1_0-sdma2', 'hfi1_0-sdma3']);
    const findings = html.indexOf('<h3>Findings</h3>');
    const engines = html.indexOf('<h3>Engines');
    const sd101 = html.indexOf('<code>SD101</code> hfi1_0 sdma3 stalled (chip-not-fetching)', findings);
    expect(findings).toBeGreaterThan(0);
    expect(sd101).toBeGreaterThan(findings);
    expect(sd101).toBeLessThan(engines);
    // Worst first: the critical finding is the first item of the list.
    expect(html.slice(findings).match(/<li class="(\w+)"/)?.[1]).toBe('critical');
    expect(html).toMatch(/<p class="action">capture &#39;hfi1-sdma snapshot&#39; before any reset/);
    expect(html).toMatch(/<figure class="eng bad" id="hfi1_0-sdma3"><figcaption><b>sdma3<\/b> <b class="v-stalled">stalled<\/b>/);
    // The engine error at 450 ms of virtual time, 350 ms after the first instant (100 ms).
    expect(html).toMatch(
      /<tr><td class="num">350 ms<\/td><td class="mono">0\.45000\d<\/td><td class="num">2<\/td><td>engine error 0x2/,
    );
    expect(html).toContain('<svg class="timeline"');
    expect(html).toContain('<dt>judged with</dt><dd>stall window 300 ms, strand window 200 ms</dd>');
    expect(html).toMatch(/<b>sdma2<\/b>[\s\S]*?2 log events/);
  });

  it('a stranded QP: SD201 with its next step, and the waiter stranded on engine 5 in the waiters table', () => {
    const html = pages.stranded;
    expect(html).toMatch(
      /<li class="critical"><span class="sev">CRITICAL<\/span><code>SD201<\/code> hfi1_0 sdma5 QP 0x[0-9a-f]+ \w+ \(pid \d+ [\w-]+, user \w+\) stranded/,
    );
    expect(html).toMatch(/<p class="action">run &#39;hfi1-sdma --unit hfi1_0 waiters 5&#39; for the evidence and the owner/);
    expect(html).toMatch(
      /<tr><td>QP 0x[0-9a-f]+ \w+<\/td><td>qp<\/td><td class="num">5<\/td><td class="v-stalled"><b>stranded<\/b><\/td><td>lost-wakeup<\/td>.*?<td>dma-desc<\/td><td>pid \d+ [\w-]+, user \w+<\/td>/,
    );
    expect(engineIds(html)).toHaveLength(8);
  });

  it('an hfi2 window reads 8-15: its chip, build and window, engines 8 to 15 and no other, the stall on engine 8', () => {
    const html = pages.window;
    expect(html).toContain('<td>jkr (CN5000)</td><td>hfi2 / hfi2</td><td class="num">2</td><td>8-15</td>');
    expect(html).toContain('<dt>engines</dt><dd>8-15 (8)</dd>');
    expect(html).toContain('<h3>Engines 8-15</h3>');
    expect(engineIds(html)).toEqual([8, 9, 10, 11, 12, 13, 14, 15].map((e) => `hfi2_0-sdma${e}`));
    expect(html).toContain('<code>SD101</code> hfi2_0 sdma8 stalled');
    expect(html).not.toMatch(/sdma[0-7]\b/);
  });

  it('a healthy host: no finding to act on, every engine drawn, its provenance in the header', () => {
    const html = pages.healthy;
    expect(html).toContain('<p class="ok">Nothing to act on at the end of the capture.</p>');
    expect(html).not.toMatch(/<li class="(critical|warning|unknown)"/);
    // A snapshot holds the unit's netdevs and the writers' /proc: every kind of waiter is seen, so no note says otherwise.
    expect(html).not.toContain('<code>SD401</code>');
    expect(engineIds(html)).toHaveLength(4);
    expect(html).toContain('<dt>host</dt><dd>node17</dd>');
    expect(html).toContain('<dt>captured</dt><dd>2026-01-02 03:04:05 UTC</dd>');
    expect(html).toContain('<dt>instants</dt><dd>4 over 300 ms</dd>');
    expect(html).toContain('<dt>captured by</dt><dd>hfi1-sdma 0.0.0-test</dd>');
    expect(html).toContain('<dt>numbers from</dt><dd>the emulator: not an adapter</dd>');
  });

  it('--json says what was written and the findings at the end', async () => {
    const out = join(dir, 'healthy-json.html');
    const r = await runCli(['report', files.healthy, '-o', out, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ file: out, instants: 4, spanMs: 300, provenance: { backend: 'snapshot', host: 'node17' } });
    expect(doc.bytes).toBe(readFileSync(out).length);
    // Not even a note: the snapshot shows every kind of waiter the host showed.
    expect(doc.units[0].findings).toEqual([]);
  });
});

describe('report --trace of each capture', () => {
  /** The verdict spans begun on an engine's track: name and finding codes. */
  const verdicts = (doc: TraceDoc, engine: string) =>
    onTrack(doc, engine)
      .filter((e) => e.ph === 'b' && e.cat === 'verdict')
      .map((e) => [e.name, (e.args as { codes: string[] }).codes]);

  it("validates, and shows the sick engine's span with its code on epoch time; a healthy host shows none", () => {
    const docs = Object.fromEntries(Object.keys(files).map((n) => [n, readTrace(join(dir, `${n}.json`))])) as Record<
      keyof typeof files,
      TraceDoc
    >;
    for (const doc of Object.values(docs)) {
      expect(traceProblems(doc)).toEqual([]);
      expect(doc.otherData.clock).toBe('epoch');
      // The capture began at META.now (2026-01-02T03:04:05Z): epoch microseconds.
      const first = Math.min(...doc.traceEvents.filter((e) => e.ph === 'X').map((e) => e.ts));
      expect(first).toBe(Date.parse('2026-01-02T03:04:05.000Z') * 1000);
    }
    expect(verdicts(docs.stall, 'sdma3')).toContainEqual(['stalled', ['SD101']]);
    expect(onTrack(docs.stall, 'sdma2').some((e) => e.ph === 'i' && e.cat === 'kmsg' && e.name === 'engine-error')).toBe(true);
    expect(verdicts(docs.stranded, 'sdma5')).toContainEqual(['stranded', ['SD201']]);
    expect(onTrack(docs.stranded, 'sdma5').some((e) => e.ph === 'n' && e.cat === 'waiter' && e.name === 'stranded')).toBe(true);
    expect(verdicts(docs.window, 'sdma8')).toContainEqual(['stalled', ['SD101']]);
    expect(docs.window.traceEvents.some((e) => e.ph === 'M' && 'name' in e.args && e.args.name === 'node17 hfi2_0')).toBe(true);
    // A ring full for a moment is drawn (backpressure), but nothing with a finding to act on.
    const healthy = docs.healthy.traceEvents.filter((e) => e.ph === 'b' && e.cat === 'verdict');
    expect(healthy.filter((e) => e.name !== 'backpressure' || (e.args as { codes: string[] }).codes.length > 0)).toEqual([]);
  });
});

const hasChromium = onPath('chromium');

let browser: Chromium | null = null;
/** The file's one headless Chromium, started on first use and closed after the file's tests. */
async function chromium(): Promise<Chromium> {
  browser ??= await Chromium.launch(tmp());
  return browser;
}
afterAll(async () => {
  await browser?.close();
});

/** The stall page's viewport in the painting test: tall enough for its findings and its stalled engine. */
const PAINTED = { width: 1200, height: 1400 };
type Loaded = { control: LoadedPage; pages: Record<keyof typeof pages, LoadedPage> };
let loaded: Promise<Loaded> | null = null;
/**
 * Each report loaded once in the browser, in one tab (the stall page at PAINTED, with its screenshot), then a control
 * page that throws: the tests below read them.
 */
function inBrowser(): Promise<Loaded> {
  loaded ??= (async () => {
    const b = await chromium();
    const control = join(dir, 'control.html');
    writeFileSync(control, "<!DOCTYPE html><html><body><script>throw new Error('control')</script></body></html>");
    const names = Object.keys(pages) as (keyof typeof pages)[];
    const runs = await b.loadEach([
      ...names.map((n) => ({
        url: `file://${join(dir, `${n}.html`)}`,
        ...(n === 'stall' ? { ...PAINTED, screenshot: true } : {}),
      })),
      // Last: nothing it logs can be taken for a report's.
      { url: `file://${control}` },
    ]);
    return {
      control: runs[names.length] as LoadedPage,
      pages: Object.fromEntries(names.map((n, i) => [n, runs[i] as LoadedPage])) as Loaded['pages'],
    };
  })();
  return loaded;
}

describe.skipIf(!hasChromium)('report in headless Chromium (skipped only when Debian’s chromium is not installed)', () => {
  it('builds the DOM of each page: its findings, every engine, no console message; a thrown error would be seen', async () => {
    const { control, pages: runs } = await inBrowser();
    expect(control.messages.join('\n')).toContain('Uncaught Error: control');
    const codes: Record<keyof typeof pages, string[]> = {
      stall: ['SD101'],
      stranded: ['SD201'],
      window: ['SD101'],
      healthy: [],
    };
    for (const name of Object.keys(pages) as (keyof typeof pages)[]) {
      const run = runs[name];
      expect(run.messages, name).toEqual([]);
      const dom = run.dom;
      expect(engineIds(dom), name).toEqual(engineIds(pages[name]));
      for (const code of codes[name])
        expect(dom, name).toMatch(
          new RegExp(`<ol class="findings"><li class="\\w+"><span class="sev">\\w+</span><code>${code}</code>`),
        );
      expect(dom, name).toMatch(/<\/footer>\s*<\/body><\/html>\s*$/);
    }
  }, 120_000);

  it('paints the stall page: not blank, many colours, the stalled engine in red', async () => {
    const r = (await inBrowser()).pages.stall;
    expect(r.messages).toEqual([]);
    const img = decodePng(r.png as Buffer);
    expect([img.width, img.height]).toEqual([PAINTED.width, PAINTED.height]);
    const colours = rgbCounts(img);
    const total = img.width * img.height;
    const background = colours.get(0xffffff) ?? 0;
    expect(background / total).toBeLessThan(0.95);
    expect(colours.size).toBeGreaterThan(50);
    // The stall's red strip and the red border of its panel (#d7191c).
    expect(colours.get(0xd7191c) ?? 0).toBeGreaterThan(500);
  }, 120_000);
});

describe('report of a live read', () => {
  it('the emulator in process: --samples rounds --interval-ms apart in virtual time, its log placed', async () => {
    const out = join(tmp(), 'emu.html');
    // Idle: what is checked is the sampling and where the engine error's log line falls, not traffic.
    const r = await runCli([
      '--backend',
      'emu',
      '--engines',
      '4',
      '--workload',
      'idle',
      '--at-ms',
      '100',
      '--fault',
      'engine-error:1@250:1',
      'report',
      '-o',
      out,
      '--samples',
      '5',
      '--interval-ms',
      '100',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('5 instants over 0.4 s');
    const html = readFileSync(out, 'utf8');
    expect(html).toContain('<dt>source</dt><dd>the emulator (in process, not this host&#39;s adapter)</dd>');
    expect(html).toMatch(
      /<tr><td class="num">150 ms<\/td><td class="mono">0\.25000\d<\/td><td class="num">1<\/td><td>engine error/,
    );
  });

  it('a rendered tree (--sysroot DIR): read through the live reader, its /proc/uptime placing the log', async () => {
    const root = tmp();
    const w = await runCli([
      'emu',
      'write',
      '--sysroot',
      root,
      '--engines',
      '2',
      '--at-ms',
      '300',
      '--fault',
      'engine-error:1@200:0',
    ]);
    expect(w.code, w.stderr).toBe(0);
    const out = join(tmp(), 'tree.html');
    const r = await runCli(['--sysroot', root, 'report', '-o', out, '--samples', '2', '--interval-ms', '10']);
    expect(r.code, r.stderr).toBe(0);
    const html = readFileSync(out, 'utf8');
    expect(html).toContain(`<dt>source</dt><dd>sysroot ${root}, read live</dd>`);
    // Logged 100 ms before the tree was written: before the first instant.
    expect(html).toMatch(
      /<tr><td class="num">−100 ms<\/td><td class="mono">0\.20000\d<\/td><td class="num">0<\/td><td>engine error/,
    );
    expect(html).toMatch(
      /0 events during the capture; 2 before its first instant(; \d+ descriptor lines of ring dumps not listed)?\./,
    );
    // Never inside the tree being read.
    const inside = await runCli(['--sysroot', root, 'report', '-o', join(root, 'r.html'), '--samples', '1']);
    expect(inside.code).toBe(73);
    expect(inside.stderr).toContain(`lies inside ${root}, which is being read`);
  });
});

describe('report usage', () => {
  it('exits 64 for an -o that is not .html, sampling options with a snapshot, and a snapshot with --sysroot', async () => {
    const cases: [string[], RegExp][] = [
      [['report', files.healthy, '-o', join(dir, 'x.tar.gz')], /-o must name an \.html file/],
      [['report', files.healthy, '-o', join(dir, 'x.html'), '--samples', '3'], /a snapshot's instants are its own/],
      [['--sysroot', dir, 'report', files.healthy, '-o', join(dir, 'x.html')], /names its snapshot already/],
      [['report', dir, '-o', join(tmp(), 'x.html')], /a directory is read with --sysroot/],
      [['--backend', 'emu', 'report', '-o', join(dir, 'x.html'), '--samples', '0'], /--samples/],
      [['report', files.healthy], /name what to write: -o FILE\.html \(the page\), --trace FILE\.json/],
      [['report', files.healthy, '--trace', files.healthy], /--trace must name a \.json file/],
    ];
    for (const [argv, message] of cases) {
      const r = await runCli(argv);
      expect(r.code, argv.join(' ')).toBe(64);
      expect(r.stderr).toMatch(message);
    }
  });
});
