// deploy/systemd: the units pass systemd-analyze verify, stay hardened, and run what the CLI offers.
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/child.js';
import { onPath } from '../support/on-path.js';
import { spawnSync } from '../support/spawn.js';
import { cliSurface } from './cli-surface.js';

const UNITS_DIR = join(ROOT, 'deploy', 'systemd');
const UNITS = ['hfi1-sdma-exporter.service', 'hfi1-sdma-textfile.service', 'hfi1-sdma-textfile.timer'];
const surface = await cliSurface();
const textfileWired = surface.commands.get('export')?.includes('--textfile') ?? false;
const analyzeFound = onPath('systemd-analyze');
const unitText = (name: string) => readFileSync(join(UNITS_DIR, name), 'utf8');

const work = mkdtempSync(join(tmpdir(), 'hfi1-sdma-units-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/**
 * The units as an administrator would install them, except that ExecStart points at a stand-in
 * executable (verify checks that the program exists) and the man page is found under MANPATH
 * (verify runs `man` for every Documentation=man: entry).
 */
function installed(): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = join(work, 'units');
  mkdirSync(dir, { recursive: true });
  const stub = join(work, 'hfi1-sdma');
  writeFileSync(stub, '#!/bin/sh\nexit 0\n');
  chmodSync(stub, 0o755);
  for (const u of UNITS) writeFileSync(join(dir, u), unitText(u).replaceAll('/usr/local/bin/hfi1-sdma', stub));
  mkdirSync(join(work, 'man', 'man8'), { recursive: true });
  copyFileSync(join(ROOT, 'man', 'hfi1-sdma.8'), join(work, 'man', 'man8', 'hfi1-sdma.8'));
  return { dir, env: { ...process.env, MANPATH: join(work, 'man'), SYSTEMD_LOG_COLOR: '0' } };
}

describe('deploy/systemd', () => {
  it('holds exactly the exporter service and the textfile service with its timer', () => {
    expect(readdirSync(UNITS_DIR).sort()).toEqual([...UNITS].sort());
  });

  it.skipIf(!analyzeFound)('systemd-analyze verify accepts every unit (skipped: systemd-analyze is not installed)', () => {
    const { dir, env } = installed();
    const r = spawnSync('systemd-analyze', ['verify', ...UNITS.map((u) => join(dir, u))], { encoding: 'utf8', env });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it.skipIf(!analyzeFound)(
    'both services rate at most 2.5 on systemd-analyze security (skipped: systemd-analyze is not installed)',
    () => {
      const { dir, env } = installed();
      for (const u of UNITS.filter((n) => n.endsWith('.service'))) {
        const r = spawnSync('systemd-analyze', ['security', '--offline=yes', '--threshold=25', '--no-pager', join(dir, u)], {
          encoding: 'utf8',
          env,
        });
        expect(r.status, `${u}:\n${r.stdout}${r.stderr}`).toBe(0);
      }
    },
  );

  it('the exporter holds only CAP_DAC_READ_SEARCH, the textfile service none, neither can gain more', () => {
    const exporter = unitText('hfi1-sdma-exporter.service');
    expect(exporter).toMatch(/^CapabilityBoundingSet=CAP_DAC_READ_SEARCH$/m);
    expect(exporter).toMatch(/^AmbientCapabilities=CAP_DAC_READ_SEARCH$/m);
    const textfile = unitText('hfi1-sdma-textfile.service');
    expect(textfile).toMatch(/^CapabilityBoundingSet=$/m);
    for (const text of [exporter, textfile]) {
      for (const line of ['NoNewPrivileges=yes', 'ProtectSystem=strict', 'ProtectHome=yes', 'PrivateTmp=yes']) {
        expect(text).toMatch(new RegExp(`^${line}$`, 'm'));
      }
    }
    expect(textfile).toMatch(/^ReadWritePaths=\/var\/lib\/node_exporter\/textfile_collector$/m);
    expect(exporter).not.toMatch(/^ReadWritePaths=/m);
  });

  it('the units run the commands and options the CLI has', () => {
    const exec = (u: string) => /^ExecStart=\/usr\/local\/bin\/hfi1-sdma (.+)$/m.exec(unitText(u))?.[1] ?? '';
    expect(exec('hfi1-sdma-exporter.service')).toBe('--backend hw export --listen 127.0.0.1:9469');
    expect(exec('hfi1-sdma-textfile.service')).toBe(
      '--backend hw export --textfile /var/lib/node_exporter/textfile_collector/hfi1_sdma.prom',
    );
    expect(unitText('hfi1-sdma-textfile.timer')).toMatch(/^OnUnitActiveSec=1min$/m);
  });

  it.skipIf(!textfileWired)(
    'every option in an ExecStart= line is one the CLI lists (skipped: export --textfile is not wired yet)',
    () => {
      for (const u of UNITS.filter((n) => n.endsWith('.service'))) {
        const args = (/^ExecStart=\S+ (.+)$/m.exec(unitText(u))?.[1] ?? '').split(' ');
        const command = args.find((a, i) => !a.startsWith('-') && !args[i - 1]?.startsWith('--')) ?? '';
        const known = [...surface.global, ...(surface.commands.get(command) ?? [])];
        const unknown = args.filter((a) => a.startsWith('-') && !known.includes(a));
        expect(unknown, `${u}: ${command}`).toEqual([]);
      }
    },
  );
});
