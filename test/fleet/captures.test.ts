// fleet over captures, and baselines: snapshots laid out as clush --rcopy and rpdcp write them (FILE.<host>) and one
// directory per host, each judged as health judges it; a baseline keeps the raw captures, a later run reports
// drift of the driver and the parameters, hosts new and gone, and recommends a new baseline when only the rendering
// changed. opacapture tarballs (made as opa-ff's opacapture.sh makes them, test/support/opacapture.sh) are read as
// a sysroot of one instant, whole or unpacked as opacaptureall uploads them.
import { copyFileSync, cpSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/child.js';
import { runCli, runCliVirtual } from '../support/cli.js';
import { writeNodes } from '../support/fleet-trees.js';
import { spawnSync } from '../support/spawn.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('fleet-caps-');
const OPACAPTURE = join(ROOT, 'test/support/opacapture.sh');

/**
 * Capture the tree of `node` under `root` into `file` (3 instants 150 ms apart: a strand is confirmed over 200 ms),
 * named as the fan-out names it. In virtual time: the capture dates its instants by the clock its waits move.
 */
async function snap(root: string, node: string, file: string): Promise<void> {
  const argv = ['--sysroot', join(root, node), 'snapshot', '-o', `${file}.tmp.tar.gz`, '--samples', '3', '--interval-ms', '150'];
  const r = await runCliVirtual(argv);
  expect(r.code, r.stderr).toBe(0);
  renameSync(`${file}.tmp.tar.gz`, file);
}

describe('fleet over snapshots, and baselines', () => {
  let root: string;
  let caps: string;
  let base: string;
  let baselined: Awaited<ReturnType<typeof runCli>>;
  beforeAll(async () => {
    root = tmp();
    caps = join(root, 'caps');
    mkdirSync(join(caps, 'n03'), { recursive: true });
    await writeNodes(root, ['healthy', 'stranded'], (i) => `n0${i + 1}`);
    await snap(root, 'n01', join(caps, 'snap.tar.gz.n01'));
    await snap(root, 'n02', join(caps, 'snap.tar.gz.n02'));
    // n03, as healthy as n01: n01's capture, in n03's directory.
    copyFileSync(join(caps, 'snap.tar.gz.n01'), join(caps, 'n03', 'snap.tar.gz'));
    base = join(root, 'analysis');
    baselined = await runCli(['fleet', '--baseline', base, '-b', caps]);
  }, 60_000);

  it('judges each capture as health does, the host from where it lies', async () => {
    const r = await runCli(['fleet', caps]);
    expect(r.stdout).toBe('CRITICAL SD201 stranded: n02 (1)\n    hfi1_0 sdma1: n02 (1)\nOK: n[01,03] (2)\n');
    expect(r.code).toBe(2);
  });

  it('keeps the raw captures as the baseline; a later run says what drifted, and exits 1', async () => {
    expect(baselined.stdout).toBe(`Baselined n[01-03] (3) in ${base}/baseline\n`);
    expect(baselined.code).toBe(0);
    expect(readFileSync(join(base, 'baseline/n01/snap.tar.gz.n01')).equals(readFileSync(join(caps, 'snap.tar.gz.n01')))).toBe(
      true,
    );
    expect(await runCli(['fleet', '--baseline', base, caps])).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^All 3 hosts as baselined on /),
    });

    // n01's driver and num_sdma change, n03 is gone, n04 is new.
    const later = join(root, 'later');
    mkdirSync(later);
    writeFileSync(join(root, 'n01/sys/module/hfi1/version'), '10.15.0.0\n');
    writeFileSync(join(root, 'n01/sys/module/hfi1/parameters/num_sdma'), '2\n');
    await snap(root, 'n01', join(later, 'snap.tar.gz.n01'));
    await snap(root, 'n02', join(later, 'snap.tar.gz.n02'));
    // n04: a host the baseline has not seen (its capture shows n02's tree).
    copyFileSync(join(later, 'snap.tar.gz.n02'), join(later, 'snap.tar.gz.n04'));
    const c = await runCli(['fleet', '--baseline', base, later]);
    expect(c.stdout.split('\n')).toEqual([
      'hfi1_0 driver version 10.14.0.0 → 10.15.0.0: n01 (1)',
      'hfi1_0 num_sdma 4 → 2: n01 (1)',
      'in the baseline, no capture now: n03 (1)',
      'not in the baseline: n04 (1)',
      expect.stringMatching(/^Changed since the baseline of \S+: n\[01,03-04\] \(3\); as baselined: 1$/),
      '',
    ]);
    expect(c.code).toBe(1);
  });

  it('recommends a new baseline when only the rendering changed (the raw capture judged again matches)', async () => {
    // The baseline, as an older version would have rendered it.
    const older = join(root, 'rendered');
    cpSync(base, older, { recursive: true });
    const index = join(older, 'baseline/fleet.json');
    const doc = JSON.parse(readFileSync(index, 'utf8'));
    // As an older version would have rendered n02: another word for the same finding.
    doc.toolVersion = '0.0.1';
    doc.hosts.find((h: { host: string }) => h.host === 'n02').lines = ['CRITICAL SD201 hfi1_0 sdma1 lost-wake-up (snapshot)'];
    writeFileSync(index, JSON.stringify(doc));
    const r = await runCli(['fleet', '--baseline', older, caps]);
    expect(r.stdout).toMatch(
      /^New baseline recommended: n02 \(1\) differ from the baseline only as hfi1-sdma \S+ renders their captures \(the baseline was rendered by 0\.0\.1\); take it again with -b\nAll 3 hosts as baselined on /,
    );
    expect(r.code).toBe(0);
  });

  it('refuses a baseline of fan-out text, and says where none was taken', async () => {
    expect((await runCli(['fleet', '--baseline', tmp()], {}, false, 'n1: OK\n')).stderr).toMatch(
      /keeps and compares raw captures/,
    );
    const none = await runCli(['fleet', '--baseline', join(tmp(), 'nothing'), join(caps, 'snap.tar.gz.n01')]);
    expect(none.code).toBe(66);
    expect(none.stderr).toMatch(/no baseline in .*: take one first with 'hfi1-sdma fleet --baseline .* -b CAPTURES'/);
  });
});

describe('opacapture tarballs and uploads', () => {
  let root: string;
  let tgz: string;
  beforeAll(async () => {
    root = tmp();
    await writeNodes(root, ['halted'], () => 'n17');
    tgz = join(root, 'n17.tgz');
    const r = spawnSync('bash', [OPACAPTURE, join(root, 'n17'), tgz, 'n17'], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
  });

  it('reads one as a sysroot of one instant, naming its host and time, and says what it lacks', async () => {
    const e = await runCli(['--sysroot', tgz, '--json', 'engines']);
    expect(e.code, e.stderr).toBe(0);
    const doc = JSON.parse(e.stdout);
    expect(doc).toMatchObject({ host: 'n17', time: '2025-11-03T10:22:01.000Z', backend: 'snapshot' });
    expect(doc.provenance).toMatchObject({ host: 'n17', instants: 1, toolVersion: 'opacapture' });
    expect(doc.units[0]).toMatchObject({ name: 'hfi1_0', chip: 'wfr', descqCnt: 2048 });
    expect(doc.units[0].engines[2].state).toBe('s50_HwHaltWait');
    expect(e.stderr).toContain('an opacapture is one instant');
    expect(e.stderr).toContain('copies only the hfi1 debugfs');
    const h = await runCli(['--sysroot', tgz, 'health', '--brief']);
    expect(h).toMatchObject({ code: 3, stdout: expect.stringMatching(/^UNKNOWN a capture of a single instant/) });
  });

  it('reads opacaptureall uploads: <host>/<name>.tgz, and <host>/<name>/ unpacked beside it', async () => {
    const uploads = join(tmp(), 'uploads');
    mkdirSync(join(uploads, 'n17/cap'), { recursive: true });
    mkdirSync(join(uploads, 'n18/cap'), { recursive: true });
    copyFileSync(tgz, join(uploads, 'n17/cap.tgz'));
    spawnSync('tar', ['xzf', tgz, '-C', join(uploads, 'n18/cap')]);
    const unpacked = await runCli(['--sysroot', join(uploads, 'n18/cap'), '--json', 'engines']);
    expect(unpacked.code, unpacked.stderr).toBe(0);
    expect(JSON.parse(unpacked.stdout).units[0].engines[2].state).toBe('s50_HwHaltWait');
    const r = await runCli(['fleet', uploads]);
    expect(r.stdout).toMatch(/^UNKNOWN n\[17-18\] \(2\): a capture of a single instant/);
    // A tarball that is neither is said to be so.
    const junk = join(uploads, 'junk.tgz');
    renameSync(join(uploads, 'n17/cap.tgz'), junk);
    writeFileSync(junk, 'not gzip');
    expect((await runCli(['--sysroot', junk, 'engines'])).code).toBe(65);
  });
});
