// `log` reads its input as a stream in bounded memory: the same answer as parsing the whole text
// whatever the chunking, and a large input through a child process with a small heap.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseKernelLog } from '../../src/kmsg/parse.js';
import { MAX_LINE_BYTES, readKernelLog } from '../../src/kmsg/stream.js';
import { BIN, ROOT } from '../support/child.js';
import { fc, test } from '../support/prop.js';

const FIXTURE = readFileSync(join(ROOT, 'test/fixtures/kmsg/engine-error.dmesg'), 'utf8');
const SOAK = process.env.SOAK === '1';

async function* chunked(bytes: Buffer, cuts: number[]) {
  let at = 0;
  for (const c of [...cuts].sort((a, b) => a - b)) {
    yield bytes.subarray(at, c);
    at = c;
  }
  yield bytes.subarray(at);
}

describe('readKernelLog', () => {
  const text = `noise line\r\n${FIXTURE}other driver: hfi1 mentioned\n  kworker/9:1-412 [009] d..1. 8812.120001: hfi2_sdma_state: [0000:41:00.0] SDE9 state: s99_Running -> s50_HwHaltWait\nlast hfi1 0000:05:00.0: hfi1_0: SDMA (3) engine error: 0x2 state s99_Running`;
  const bytes = Buffer.from(text, 'utf8');
  const whole = parseKernelLog(text);

  /** Every boundary under SOAK; else those within two bytes of a line end (a CR, an LF) and every 16th. */
  const cuts = [...Array(bytes.length + 1).keys()].filter(
    (cut) => SOAK || cut % 16 === 0 || [-2, -1, 0, 1].some((d) => bytes[cut + d] === 0x0a || bytes[cut + d] === 0x0d),
  );

  it('split at a single boundary (near every line end and every 16th byte; every byte with SOAK=1) gives the same parse as the whole text', async () => {
    for (const cut of cuts) {
      const log = await readKernelLog(chunked(bytes, [cut]));
      expect({ ...log, overlongLines: undefined, eventsDropped: undefined }).toEqual({
        ...whole,
        overlongLines: undefined,
        eventsDropped: undefined,
      });
    }
  });

  test.prop([fc.array(fc.nat({ max: bytes.length }), { maxLength: 12 })], { numRuns: SOAK ? 2000 : 50, seed: 15 })(
    'any chunking gives the same parse',
    async (cuts) => {
      const log = await readKernelLog(chunked(bytes, cuts));
      expect(log.events).toEqual(whole.events);
      expect(log.linesRead).toBe(whole.linesRead);
      expect(log.units).toEqual(whole.units);
    },
  );

  it('skips and counts a line longer than the cap, keeping the lines around it', async () => {
    const long = Buffer.from(`${FIXTURE}${'x'.repeat(MAX_LINE_BYTES * 3)}\n${FIXTURE}`);
    const log = await readKernelLog(chunked(long, [100, MAX_LINE_BYTES, MAX_LINE_BYTES * 2 + 7]));
    const half = parseKernelLog(FIXTURE);
    expect(log.overlongLines).toBe(1);
    expect(log.events).toHaveLength(half.events.length * 2);
    expect(log.linesRead).toBe(half.linesRead * 2 + 1);
  });
});

/** Pipe `mb` MiB of short lines (with the fixture at both ends) into `log -` under a small heap. */
function pipeLog(mb: number, heapMb: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [`--max-old-space-size=${heapMb}`, BIN, 'log', '-', '--json'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += String(d);
  });
  child.stderr.on('data', (d) => {
    stderr += String(d);
  });
  const block = Buffer.from('y\n'.repeat(512 * 1024)); // 1 MiB
  const write = async () => {
    child.stdin.write(FIXTURE);
    for (let i = 0; i < mb; i++) {
      if (!child.stdin.write(block)) await new Promise((r) => child.stdin.once('drain', r));
    }
    child.stdin.end(FIXTURE);
  };
  return Promise.all([write(), new Promise<number | null>((r) => child.on('exit', r))]).then(([, code]) => ({
    code,
    stdout,
    stderr,
  }));
}

describe('log - on a large stream', () => {
  const fixtureLines = parseKernelLog(FIXTURE).linesRead;
  const fixtureEvents = parseKernelLog(FIXTURE).events.length;

  it('50 MiB of short lines with a 40 MiB heap: both ends decoded, line numbers right', async () => {
    const r = await pipeLog(50, 40);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.events).toHaveLength(fixtureEvents * 2);
    const lastLine = parseKernelLog(FIXTURE).events.at(-1)?.line ?? 0;
    expect(j.events.at(-1).line).toBe(fixtureLines + 50 * 512 * 1024 + lastLine);
  });

  it.skipIf(!SOAK)(
    '1 GiB of short lines with a 40 MiB heap (skipped unless SOAK=1)',
    async () => {
      const r = await pipeLog(1024, 40);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).events).toHaveLength(fixtureEvents * 2);
    },
    600_000,
  );
});
