// `emu serve` as a child process: live until SIGTERM, then exit 0 leaving a consistent tree.
// Real time, bounded: the tree must appear within 10 s.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { expect, it } from 'vitest';
import { startChild } from '../support/child.js';

it('emu serve refreshes the sysroot until SIGTERM, then exits 0 with a complete tree', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hfi1-serve-'));
  try {
    const run = startChild(['emu', 'serve', '--sysroot', dir, '--engines', '2', '--interval-ms', '20', '--speed', '0.2']);
    const sdes = join(dir, 'sys/kernel/debug/hfi1/hfi1_0/sdes');
    for (let i = 0; i < 200 && !existsSync(sdes); i++) await delay(50);
    expect(existsSync(sdes)).toBe(true);
    await delay(200);
    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    expect(run.err()).toMatch(/stopped at \d+ ms virtual time after \d+ writes/);
    const text = readFileSync(sdes, 'utf8');
    expect(text.match(/^SDE /gm)).toHaveLength(2);
    expect(text.endsWith('\n')).toBe(true);
    expect(readdirSync(join(dir, 'sys/kernel/debug/hfi1/hfi1_0')).filter((f) => f.includes('.tmp-'))).toEqual([]);
    expect(readdirSync(dir).sort()).toEqual(['.hfi1-sdma', '.hfi1-sdma-emulated', 'dev', 'etc', 'proc', 'sys']); // no staging left
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('emu serve at line rate and --speed 1000 stops gracefully on SIGTERM (within the 1 s grace, else exit 143)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hfi1-serve-'));
  try {
    const run = startChild(['emu', 'serve', '--sysroot', dir, '--workload', 'line-rate', '--speed', '1000']);
    const sdes = join(dir, 'sys/kernel/debug/hfi1/hfi1_0/sdes');
    for (let i = 0; i < 200 && !existsSync(sdes); i++) await delay(50);
    expect(existsSync(sdes)).toBe(true);
    await delay(300); // a few refreshes, each simulating as much as its wall budget allows
    run.child.kill('SIGTERM');
    // Exit 0 with the closing line means the serve loop itself ended; an event loop blocked by
    // simulation would have been cut off by the grace timer with 143.
    expect(await run.exited).toBe(0);
    expect(run.err()).toMatch(/stopped at \d+ ms virtual time after \d+ writes/);
    expect(readdirSync(dir).sort()).toEqual(['.hfi1-sdma', '.hfi1-sdma-emulated', 'dev', 'etc', 'proc', 'sys']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
