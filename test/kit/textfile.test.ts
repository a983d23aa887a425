// export --textfile: the metrics written once, atomically; a failure at any step leaves the previous
// file as it was and no temporary behind, with the documented exit code.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Hfi1SdmaError } from '../../src/errors.js';
import { type AtomicFs, nodeAtomicFs, writeFileAtomic, writeMetricsTextfile } from '../../src/export/textfile.js';
import { FakeBackend } from '../support/fake-backend.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'hfi1-sdma-textfile-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const errno = (code: string) => Object.assign(new Error(`${code}: simulated`), { code });

async function failure(p: Promise<unknown>): Promise<Hfi1SdmaError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof Hfi1SdmaError) return e;
    throw e;
  }
  throw new Error('expected a failure');
}

/** Node's calls, with one step replaced by a failure. */
function failing(step: 'create' | 'write' | 'sync' | 'rename', code: string): AtomicFs {
  return {
    ...nodeAtomicFs,
    create: async (path) => {
      if (step === 'create') throw errno(code);
      const f = await nodeAtomicFs.create(path);
      return {
        writeFile: async (text) => {
          await f.writeFile(text.slice(0, 10));
          if (step === 'write') throw errno(code);
          await f.writeFile(text.slice(10));
        },
        chmod: (m) => f.chmod(m),
        sync: async () => {
          if (step === 'sync') throw errno(code);
          await f.sync();
        },
        close: () => f.close(),
      };
    },
    rename: async (from, to) => {
      if (step === 'rename') throw errno(code);
      await nodeAtomicFs.rename(from, to);
    },
  };
}

describe('writeMetricsTextfile', () => {
  it('writes the exporter metrics once, readable by another user, with no temporary left', async () => {
    const backend = new FakeBackend((e) => ({ dh: 100 * e, dt: 100 * e + 5 }), 2);
    const target = join(dir, 'hfi1_sdma.prom');
    await writeMetricsTextfile(
      {
        backend,
        buildInfo: { version: '0.0.0', backend: 'hw' },
        minIntervalMs: 1000,
        stallMs: 1000,
        nowMs: () => 0,
        log: () => {},
      },
      target,
      { sleep: async () => {} },
    );
    const text = readFileSync(target, 'utf8');
    expect(text).toMatch(/^hfi1_sdma_up\{unit="hfi1_0"\} 1$/m);
    expect(text).toMatch(/^hfi1_sdma_in_flight_descriptors\{unit="hfi1_0",engine="1"\} 5$/m);
    expect(text).toMatch(/^# TYPE hfi1_sdma_free_descriptors gauge$/m);
    // Kernel counters carry their cumulative values; the exporter's own stall count would read 0.
    expect(text).toMatch(/^# TYPE hfi1_sdma_descq_full_total counter$/m);
    expect(text).not.toMatch(/hfi1_sdma_stalls_total/);
    expect(readdirSync(dir)).toEqual(['hfi1_sdma.prom']);
    expect(statSync(target).mode & 0o777).toBe(0o644);
  });
});

describe('writeFileAtomic', () => {
  it('replaces an existing file whole', async () => {
    const target = join(dir, 'x.prom');
    writeFileSync(target, 'old\n');
    await writeFileAtomic(target, 'new\n');
    expect(readFileSync(target, 'utf8')).toBe('new\n');
    expect(readdirSync(dir)).toEqual(['x.prom']);
  });

  it('exits 73 naming the path when the directory does not exist', async () => {
    const target = join(dir, 'missing', 'x.prom');
    const e = await failure(writeFileAtomic(target, 'new\n'));
    expect(e.code).toBe('E_CANT_CREATE');
    expect(e.exitCode).toBe(73);
    expect(e.message).toContain(target);
  });

  it('exits 73 when the target is a directory, removing the temporary', async () => {
    const target = join(dir, 'x.prom');
    mkdirSync(target);
    const e = await failure(writeFileAtomic(target, 'new\n'));
    expect(e.exitCode).toBe(73);
    expect(readdirSync(dir)).toEqual(['x.prom']);
  });

  it('exits 77 when the directory may not be written', async () => {
    const e = await failure(writeFileAtomic(join(dir, 'x.prom'), 'new\n', failing('create', 'EACCES')));
    expect(e.code).toBe('E_PERMISSION');
    expect(e.exitCode).toBe(77);
  });

  for (const [step, code] of [
    ['write', 'ENOSPC'],
    ['sync', 'EIO'],
    ['rename', 'EIO'],
  ] as const) {
    it(`exits 74 on ${code} at ${step}, keeping the previous file and removing the temporary`, async () => {
      const target = join(dir, 'x.prom');
      writeFileSync(target, 'old\n');
      const e = await failure(writeFileAtomic(target, 'a long enough new text\n', failing(step, code)));
      expect(e.code).toBe('E_IO');
      expect(e.exitCode).toBe(74);
      expect(e.message).toContain(target);
      expect(readFileSync(target, 'utf8')).toBe('old\n');
      expect(readdirSync(dir)).toEqual(['x.prom']);
    });
  }

  it('uses a temporary in the same directory whose name starts with a dot', async () => {
    const seen: string[] = [];
    const spy: AtomicFs = {
      ...nodeAtomicFs,
      rename: async (from, to) => {
        seen.push(from);
        await nodeAtomicFs.rename(from, to);
      },
    };
    await writeFileAtomic(join(dir, 'x.prom'), 'new\n', spy);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.startsWith(`${dir}/.x.prom.`)).toBe(true);
    expect(seen[0]?.endsWith('.prom')).toBe(false);
  });
});
