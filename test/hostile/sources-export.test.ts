// The exporter keeps answering when a source turns into a FIFO under it (it used to block on the
// read and never answer /metrics again). The exporter runs as a child on a free port; every wait
// is on the condition itself, bounded well below the test timeout.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN } from '../support/child.js';
import { goodTree, replaceWith, tempRoots } from './sources-tree.js';

const fresh = tempRoots();
const children: { kill(): void }[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill();
});

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as { port: number }).port;
  await new Promise((resolve) => s.close(resolve));
  return port;
}

/** GET a URL within `ms`, or null when it did not answer in time. */
async function get(url: string, ms: number): Promise<string | null> {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(ms) });
    return await r.text();
  } catch {
    return null;
  }
}

describe('export with a source that becomes a FIFO', () => {
  it('/metrics still answers, with the unit down', async () => {
    const t = goodTree(fresh());
    const port = await freePort();
    const child = spawn(
      process.execPath,
      [BIN, '--sysroot', t.root, 'export', '--listen', `127.0.0.1:${port}`, '--min-interval-ms', '0'],
      { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, HFI1_SDMA_SYSROOT: '' } },
    );
    children.push(child);
    const url = `http://127.0.0.1:${port}/metrics`;
    let first: string | null = null;
    for (const until = Date.now() + 15_000; first === null && Date.now() < until; ) {
      first = await get(url, 1000);
      if (first === null) await new Promise((r) => setTimeout(r, 100));
    }
    expect(first).toContain('hfi1_sdma_up{unit="hfi1_0"} 1');
    replaceWith(t.sdes, 'fifo');
    const after = await get(url, 5000);
    expect(after, 'no answer within 5 s after sdes became a FIFO').not.toBeNull();
    expect(after).toContain('hfi1_sdma_up{unit="hfi1_0"} 0');
  });
});
