// `snapshot --redact`: a capture that can leave the site. An emulated host named zq-node17, with an adapter serial,
// a kernel log naming addresses and a stranded QP whose owner (user and command) the capture records, is captured
// twice, plainly and redacted. Every string the map masks is looked for in every file of the redacted capture (and
// in every entry's name), and each planted one is found in the plain capture first, so that the search can fail;
// the masks hold across captures; the twin and the report read the redacted capture.
import { appendFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { x as untar } from 'tar';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadTwin } from '../../src/twin/load.js';
import { runCli } from '../support/cli.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('redact-');

const HOST = 'zq-node17.cluster.example';
const SERIAL = 'ZQSERIAL0042';
const IPV4 = '10.11.12.13';
const IPV6 = 'fe80::11:7501:179:a1b2';
const MAC = '00:11:75:01:a1:b2';
/** Strings planted in the tree (the owner's user and command are the emulator's own). */
const PLANTED = ['zq-node17', HOST, SERIAL, IPV4, IPV6, MAC, 'hpcuser'];

/** A 4-engine host whose QP on sdma1 a lost wake-up strands at 50 ms. */
const EMU = ['--engines', '4', '--workload', 'qp:gbps=10', '--fault', 'lost-wakeup:qp@50:1'];

/** Every file under `dir`, with its path relative to it. */
function files(dir: string): { rel: string; text: string }[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => {
      const path = join(e.parentPath, e.name);
      return { rel: relative(dir, path), text: readFileSync(path).toString('latin1') };
    });
}

/** Each archive unpacked once, into a directory of its own that no test changes. */
const unpackedDirs = new Map<string, Promise<string>>();
function unpacked(archive: string): Promise<string> {
  let dir = unpackedDirs.get(archive);
  if (!dir) {
    const d = tmp();
    dir = untar({ file: archive, cwd: d }).then(() => d);
    unpackedDirs.set(archive, dir);
  }
  return dir;
}

/** Where `s` stands in `text`: anywhere (long, distinctive strings), or as a word (a short one: `vm` is in `vmlinuz`). */
function holds(text: string, s: string): boolean {
  if (s.length >= 6) return text.includes(s);
  return new RegExp(`(?<![\\w.-])${s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w-])`).test(text);
}

interface RedactMapFile {
  format: string;
  [kind: string]: Record<string, string> | string;
}

describe('snapshot --redact', () => {
  const root = tmp();
  const tree = join(root, 'tree');
  const mapFile = join(root, 'site', 'redact-map.json');
  let plain = '';
  let red = '';
  let map: RedactMapFile;

  beforeAll(async () => {
    const w = await runCli(['emu', 'write', '--sysroot', tree, '--hostname', HOST, ...EMU, '--at-ms', '400'], {});
    expect(w.code, w.stderr).toBe(0);
    writeFileSync(join(tree, 'sys/class/infiniband/hfi1_0/serial'), `${SERIAL}\n`);
    appendFileSync(
      join(tree, 'dev/kmsg'),
      `6,900,390000000,-;hfi1 0000:05:00.0: hfi1_0: ${HOST}: peer ${IPV4} gid ${IPV6} hw ${MAC}\n`,
    );
    plain = join(root, 'plain.tar.gz');
    red = join(root, 'red.tar.gz');
    const p = await runCli(['--sysroot', tree, 'snapshot', '-o', plain], {});
    expect(p.code, p.stderr).toBe(0);
    const r = await runCli(['--sysroot', tree, 'snapshot', '-o', red, '--redact', '--redact-map', mapFile], {});
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`(redacted: the masks are kept in ${mapFile}, which stays on this host)`);
    map = JSON.parse(readFileSync(mapFile, 'utf8'));
  });

  it('holds none of the masked strings in any file or entry name; the plain capture holds each planted one', async () => {
    const masked = Object.entries(map).flatMap(([k, v]) => (k === 'format' || typeof v === 'string' ? [] : Object.keys(v)));
    expect(masked).toEqual(expect.arrayContaining(PLANTED));
    const before = files(await unpacked(plain));
    for (const s of PLANTED)
      expect(
        before.some((f) => f.text.includes(s)),
        `${s} in the plain capture`,
      ).toBe(true);
    const after = files(await unpacked(red));
    expect(after.length).toBe(before.length);
    for (const s of masked) {
      const found = after.filter((f) => holds(f.text, s) || holds(f.rel, s)).map((f) => f.rel);
      expect(found, `${s} in the redacted capture`).toEqual([]);
    }
  });

  it('masks each name the same way in a later capture, and keeps the map to its owner (0600)', async () => {
    expect(statSync(mapFile).mode & 0o777).toBe(0o600);
    const again = join(root, 'again.tar.gz');
    const r = await runCli(['--sysroot', tree, 'snapshot', '-o', again, '--redact', '--redact-map', mapFile], {});
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(readFileSync(mapFile, 'utf8'))).toEqual(map);
    const serial = (dir: string) => readFileSync(join(dir, 'instants/0/sys/class/infiniband/hfi1_0/serial'), 'utf8');
    const [one, two] = await Promise.all([unpacked(red), unpacked(again)]);
    expect(serial(one)).toBe(`${(map.serials as Record<string, string>)[SERIAL]}\n`);
    expect(serial(two)).toBe(serial(one));
    const manifest = JSON.parse(readFileSync(join(two, 'snapshot.json'), 'utf8'));
    expect(manifest).toMatchObject({ host: (map.hosts as Record<string, string>)[HOST], redacted: true });
  });

  it('is read by the twin and by report (a capture of the emulator over time), the owner named by its masks', async () => {
    const over = join(root, 'over-time.tar.gz');
    // A map of its own: the emulator's serial added to the shared one would change what a later capture of the
    // tree is compared with (the tests run in any order under --sequence.shuffle).
    const overMap = join(root, 'site', 'over-time-map.json');
    const c = await runCli(
      [
        '--backend',
        'emu',
        ...EMU,
        'snapshot',
        '-o',
        over,
        '--samples',
        '4',
        '--interval-ms',
        '200',
        '--redact',
        '--redact-map',
        overMap,
      ],
      {},
    );
    expect(c.code, c.stderr).toBe(0);
    const now = JSON.parse(readFileSync(overMap, 'utf8')) as RedactMapFile;
    const users = now.users as Record<string, string>;
    const f = await loadTwin(over);
    expect(f.source.redacted).toBe(true);
    expect(Object.values(now.hosts as Record<string, string>)).toContain(f.source.host);
    expect(f.verdict.map((v) => `${v.code} sdma${v.engine}`)).toEqual(['SD201 sdma1']);
    // The capture's verdict, as health gives it on the capture: the owner named by its masks.
    expect(f.verdict[0]?.text).toMatch(
      new RegExp(`^hfi1_0 sdma1 QP 0x[0-9a-f]+ RTS \\(pid \\d+ proc\\d+, user ${users.hpcuser}\\)`),
    );
    expect(f.seed.waiters.find((w) => w.engine === 1)?.identity.user).toBe(users.hpcuser);
    const html = join(root, 'over-time.html');
    const r = await runCli(['report', over, '-o', html], {});
    expect(r.code, r.stderr).toBe(0);
    const page = readFileSync(html, 'utf8');
    expect(page).toContain(`user ${users.hpcuser}`);
    expect(page).not.toContain('hpcuser');
  });

  it('refuses --redact-map without --redact (64) and a map it did not write (65), writing nothing', async () => {
    const out = join(root, 'refused.tar.gz');
    const u = await runCli(['--sysroot', tree, 'snapshot', '-o', out, '--redact-map', mapFile], {});
    expect(u.code).toBe(64);
    expect(u.stderr).toContain('--redact-map applies to --redact');
    const bad = join(tmp(), 'map.json');
    mkdirSync(join(bad, '..'), { recursive: true });
    writeFileSync(bad, '{"hosts": []}\n');
    const p = await runCli(['--sysroot', tree, 'snapshot', '-o', out, '--redact', '--redact-map', bad], {});
    expect(p.code).toBe(65);
    expect(p.stderr).toContain(`${bad}: format must be hfi1-sdma-redact-map/1; it is not a redaction map hfi1-sdma wrote`);
    expect(() => statSync(out)).toThrow();
  });
});
