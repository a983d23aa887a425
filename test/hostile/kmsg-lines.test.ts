// Kernel-log and trace lines a reader must survive: engine numbers too large to be an engine (the list they index
// would grow without bound), endless `[desc K]` tags (kept in bounded memory), control characters and escape
// sequences (never sent to a terminal as is), NUL bytes and CRLF.
import { describe, expect, it } from 'vitest';
import { painter } from '../../src/cli/io.js';
import { renderLog } from '../../src/cli/log.js';
import { escapeControls } from '../../src/hw/parse/text.js';
import { MAX_TAGS } from '../../src/kmsg/cornelis.js';
import { lineTimestamp, MAX_KEPT_LINE_CHARS, parseKernelLog } from '../../src/kmsg/parse.js';
import { readKernelLog } from '../../src/kmsg/stream.js';
import { TXE_NUM_SDMA_ENGINES } from '../../src/progress/constants.js';
import { ROOT } from '../support/child.js';
import { spawnSync } from '../support/spawn.js';
import { CHILD_LIMIT_MS } from './sources-tree.js';

const P = 'hfi2 0000:41:00.0: hfi2_0: ';
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
const CONTROLS = /[\x00-\x08\x0a-\x1f\x7f-\x9f]/;

describe('engine numbers no chip has', () => {
  it('an IRQ line naming engine 2^32 - 1 is kept as not decoded; the engine list stays small', () => {
    const log = parseKernelLog(`${P}IRQ: 1, type SDMA engine 4294967295 -> cpu: 0\n${P}IRQ: 2, type SDMA engine 9 -> cpu: 3\n`);
    const unit = log.units[0];
    expect(unit?.engineCpu.length).toBe(10);
    expect(unit?.engineCpu[9]).toBe(3);
    expect(log.events).toMatchObject([{ line: 1, kind: 'unrecognised', text: 'IRQ: 1, type SDMA engine 4294967295 -> cpu: 0' }]);
    expect(TXE_NUM_SDMA_ENGINES).toBe(16);
  });
});

describe('[desc K] tags', () => {
  it('remembers at most MAX_TAGS per unit: an old tag is forgotten, a recent one still links its lines', () => {
    const lines = [`${P}SDMA (9) descq_head 1, descq_tail 2, used 1, avail 2046, FLE 0, descriptor print prefix "[desc 0]"`];
    for (let k = 1; k <= MAX_TAGS; k++) {
      lines.push(`${P}SDMA (10) descq_head 1, descq_tail 2, used 1, avail 2046, FLE 0, descriptor print prefix "[desc ${k}]"`);
    }
    lines.push(`${P}[desc 0]\taidx:1 amode:1 alen:1`, `${P}[desc ${MAX_TAGS}]\taidx:2 amode:1 alen:1`);
    const events = parseKernelLog(lines.join('\n')).events.slice(-2);
    expect(events[0]).toMatchObject({ kind: 'descriptor', tag: 0, ahgIdx: 1 });
    expect(events[0]?.engine).toBeUndefined(); // tag 0's dump was forgotten
    expect(events[1]).toMatchObject({ kind: 'descriptor', tag: MAX_TAGS, engine: 10, ahgIdx: 2 });
  });
});

describe('control characters', () => {
  it('are written \\xNN in what is kept; the tab of an aidx line is kept', () => {
    expect(escapeControls('a\x1b[2J\x00\x07\tb\r\x9b')).toBe('a\\x1b[2J\\x00\\x07\tb\\x0d\\x9b');
    const log = parseKernelLog(`${P}SDMA \x1b]0;title\x07 bad\n${P}SDMA (1) engine error: 0x1 state s\x1b[31mred\n`);
    expect(log.events.map((e) => e.text ?? e.state)).toEqual(['SDMA \\x1b]0;title\\x07 bad', 's\\x1b[31mred']);
  });

  it('never reach the text report, from dump lines, trace lines, NUL bytes or a lone CR', async () => {
    const text = [
      `${P}SDMA \x1b[2J\x00 (3) not a known line`,
      `${P}SDMA (3) engine error: 0x42 state s99\x1b]0;x\x07`,
      `  kworker-1 [009] d..1. 8812.1: hfi2_sdma_state: [0000:41:00.0] SDE9 state: s99\x1b[1m -> s50\x00`,
      `  kworker-1 [009] d..1. 8812.2: hfi1_sdma_state: [0000:05:00.0] current state a\rb new state \x9bc`,
      `${P}[desc 3]\taidx:1 amode:1 alen:1\r`,
    ].join('\r\n');
    const log = await readKernelLog(
      (async function* () {
        yield Buffer.from(text, 'utf8');
      })(),
    );
    expect(log.events.length).toBe(5);
    const shown = renderLog(log, painter(false)).replaceAll('\n', '').replaceAll('\t', '');
    expect(shown).not.toMatch(CONTROLS);
  });
});

describe('long prefixes before the device prefix', () => {
  // Before, the timestamp pattern backtracked cubically over spaces inside an unclosed bracket: 4000 spaces took
  // seconds, 60000 would take hours. A child runs it, so that a hang fails at the child's limit, not the worker's.
  it('an unclosed bracket of 60000 spaces: no timestamp, found at once', () => {
    const script = `
      import { lineTimestamp } from ${JSON.stringify(`${ROOT}dist/src/kmsg/parse.js`)};
      console.log(JSON.stringify([lineTimestamp('[' + ' '.repeat(60000)), lineTimestamp('[' + ' '.repeat(60000) + '1.5]')]));
    `;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: CHILD_LIMIT_MS });
    expect(r.signal, 'the search did not finish').toBeNull();
    expect(JSON.parse(r.stdout)).toEqual([null, '1.5']);
  });

  it('timestamps as before: dmesg, dmesg -T, none', () => {
    expect(lineTimestamp('[  123.456789] ')).toBe('123.456789');
    expect(lineTimestamp('[Mon Nov 30 22:00:00 2026] ')).toBe('Mon Nov 30 22:00:00 2026');
    expect(lineTimestamp('[] ')).toBeNull();
    expect(lineTimestamp('[ 12.5')).toBeNull();
  });
});

describe('what one long line may keep', () => {
  it('a 60000-character state or unrecognised message keeps at most MAX_KEPT_LINE_CHARS', () => {
    const log = parseKernelLog(
      [
        `${P}SDMA (9) engine error: 0x2 state s99_${'R'.repeat(60_000)}`,
        `${P}SDMA ${'x'.repeat(60_000)}`,
        `${P}SDMA (9) engine error: 0x${'f'.repeat(60_000)} state s99_Running`,
      ].join('\n'),
    );
    expect(log.events.map((e) => e.kind)).toEqual(['engine-error', 'unrecognised', 'unrecognised']);
    for (const e of log.events) expect(JSON.stringify(e).length).toBeLessThan(MAX_KEPT_LINE_CHARS + 1000);
    expect(MAX_KEPT_LINE_CHARS).toBeGreaterThanOrEqual(1024 + 200); // a printk message with any log prefix
  });
});
