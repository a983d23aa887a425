// `export` as a user runs it (the built CLI in a child process): no unit is said and served as
// up 0, the emulator is named everywhere, SIGTERM ends it cleanly within a second, and --listen
// problems get a message and their documented exit code. The process is the subject where it serves
// and is stopped by a signal, or runs as another user; an address refused before anything is served
// is refused by main() in this process, which returns the exit status the process would exit with.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from '../support/child.js';
import { runCli } from '../support/cli.js';
import { nobodyUnavailable, spawnAsNobody } from '../support/nobody.js';
import { value } from './harness.js';

const children: ChildProcess[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const env = { ...process.env, HFI1_SDMA_SYSROOT: '', NO_COLOR: '' };

/** Start `hfi1-sdma ARGS` and wait (bounded) for the banner naming the port it serves. */
async function startExport(args: string[]) {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += String(d);
  });
  const exited = new Promise<{ code: number | null; atMs: number }>((resolve) =>
    child.on('exit', (code) => resolve({ code, atMs: performance.now() })),
  );
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner within 20 s; stderr: ${stderr}`)), 20_000);
    const check = () => {
      const m = /serving http:\/\/\S+:(\d+)\/metrics/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    child.stderr?.on('data', check);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`exited before serving; stderr: ${stderr}`));
    });
  });
  const scrape = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return { child, port, scrape, exited, stderr: () => stderr };
}

describe('export on a host without an hfi1 unit', () => {
  it('keeps serving: hfi1_sdma_units 0, build_info naming the backend, no unit series; says so on stderr (and, on 0.0.0.0, that metrics are exposed beyond this host)', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'export-empty-'));
    dirs.push(empty);
    // Every interface: scraped on loopback, as a local agent would.
    const x = await startExport(['--sysroot', empty, 'export', '--listen', '0.0.0.0:0']);
    const body = await x.scrape();
    expect(value(body, 'hfi1_sdma_units')).toBe(0);
    expect(body).not.toMatch(/^hfi1_sdma_up/m);
    expect(body).not.toMatch(/unit="/);
    // The process's own series are served too.
    expect(body).toMatch(/^process_resident_memory_bytes /m);
    const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
      .version;
    expect(value(body, `hfi1_sdma_build_info{version="${version}",backend="hw",emulated="false"}`)).toBe(1);
    expect(x.stderr()).toMatch(
      /backend hw: no hfi1 or hfi2 unit under .*sys\/class\/infiniband.*never falls back to the emulator/,
    );
    expect(x.stderr()).toMatch(/warning: listening on every interface .*metrics are exposed beyond this host/);
    x.child.kill('SIGTERM');
    expect((await x.exited).code).toBe(0);
  });
});

describe('export --backend emu', () => {
  it('names the emulator in build_info and on stderr (on loopback, with no exposure warning), and ends within a second of SIGTERM, mid-scrape, with status 0', async () => {
    // Four engines at line rate: every scrape runs the emulator up to the wall clock, so a scrape is under way when
    // the signal comes; sixteen engines only cost more.
    const x = await startExport([
      '--backend',
      'emu',
      '--engines',
      '4',
      '--workload',
      'line-rate',
      'export',
      '--listen',
      '127.0.0.1:0',
      '--min-interval-ms',
      '0',
    ]);
    expect(x.stderr()).toMatch(/backend emu: the emulator, not this host's adapter/);
    expect(x.stderr()).not.toMatch(/exposed beyond this host/);
    const body = await x.scrape();
    expect(body).toMatch(/^hfi1_sdma_build_info\{version="[^"]+",backend="emu",emulated="true"\} 1$/m);
    await x.scrape();
    const inFlight = x.scrape().catch(() => '');
    const t0 = performance.now();
    x.child.kill('SIGTERM');
    const bound = new Promise<{ code: string; atMs: number }>((r) =>
      setTimeout(() => r({ code: 'still running', atMs: 0 }), 10_000),
    );
    const end = await Promise.race([x.exited, bound]);
    await inFlight;
    expect(end.code).toBe(0);
    // The 1 s grace of a graceful stop exits 143; status 0 shows the exporter stopped by itself.
    expect(end.atMs - t0).toBeLessThan(10_000);
    expect(x.stderr()).toMatch(/stopping/);
  });
});

describe('export --listen', () => {
  it('an unresolvable host is a usage error (64) naming it, no stack trace', async () => {
    const r = await runCli(['--backend', 'emu', 'export', '--listen', 'nosuchhost.invalid:1']);
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(/--listen nosuchhost\.invalid: cannot resolve the host name/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('an unparseable address is a usage error (64)', async () => {
    const r = await runCli(['--backend', 'emu', 'export', '--listen', 'localhost']);
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(/--listen expects HOST:PORT/);
  });

  it('a port in use is E_CANT_CREATE (73) naming the address', async () => {
    const holder: Server = createServer();
    const port = await new Promise<number>((resolve) =>
      holder.listen(0, '127.0.0.1', () => resolve((holder.address() as { port: number }).port)),
    );
    try {
      const r = await runCli(['--backend', 'emu', 'export', '--listen', `127.0.0.1:${port}`]);
      expect(r.code).toBe(73);
      expect(r.stderr).toMatch(new RegExp(`--listen 127\\.0\\.0\\.1:${port}: address already in use`));
      expect(r.stderr).not.toMatch(/\n\s+at /);
    } finally {
      holder.close();
    }
  });

  const unprivilegedStart = Number(readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8').trim());
  const noNobody = nobodyUnavailable();
  it.skipIf(noNobody !== null || unprivilegedStart <= 80)(
    `a privileged port for an unprivileged user is E_PERMISSION (77) (skipped unless it can run as nobody, on a host where port 80 is privileged${noNobody ? `; here: ${noNobody}` : ''})`,
    () => {
      const r = spawnAsNobody(['--backend', 'emu', 'export', '--listen', '127.0.0.1:80'], { env, timeout: 30_000 });
      expect(r.status).toBe(77);
      expect(r.stderr).toMatch(/--listen 127\.0\.0\.1:80: permission denied/);
    },
  );

  // 0.0.0.0 is the no-unit exporter's address above.
  it.skipIf(!existsSync('/proc/net/if_inet6'))(
    '[::]:PORT is accepted with the warning that metrics are exposed beyond this host (skipped when this host has no IPv6)',
    async () => {
      // Idle: what is checked is the address and the warning, not traffic.
      const x = await startExport(['--backend', 'emu', '--workload', 'idle', 'export', '--listen', '[::]:0']);
      expect(x.stderr()).toMatch(/warning: listening on every interface .*metrics are exposed beyond this host/);
      x.child.kill('SIGTERM');
      expect((await x.exited).code).toBe(0);
    },
  );
});
