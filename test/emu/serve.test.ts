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
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
