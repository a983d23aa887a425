// The capture directory is opened once and every write, listing and removal goes through that descriptor,
// after checking it is still the directory named and still this user's: swapped for a link (or moved) after the
// start, nothing is written or removed elsewhere. Captures are 0600; in a shared sticky directory only this
// user's captures are counted and removed, and other users' files named like captures stay. A directory
// inside the tree read is refused before anything is made.
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CAPTURE_MODE, Captures, checkCaptureDir, type TakeSnapshot } from '../../src/monitor/capture.js';
import { FINDING_KINDS } from '../../src/monitor/codes.js';
import type { Finding } from '../../src/monitor/findings.js';
import type { Round } from '../../src/monitor/round.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('capture-trust-');
const ROOT = process.getuid?.() === 0;

function stall(engine: number): Finding {
  const k = FINDING_KINDS.stalled;
  return {
    kind: 'stalled',
    code: k.code,
    count: k.count,
    severity: k.severity,
    unit: 'hfi1_0',
    engine,
    port: null,
    weight: 1,
    text: `hfi1_0 sdma${engine} stalled`,
    action: null,
    ageMs: null,
    ageAtLeast: false,
  };
}

const round = (timeMs: number, findings: Finding[]) =>
  ({ index: 1, timeMs, findings, units: [], vanished: [], noUnit: false, listingProblem: null }) as unknown as Round;

/** A take of one instant that writes a small archive at `file` with the mode asked, as the snapshot writer does. */
const take: TakeSnapshot = async (file, _t, how) => {
  writeFileSync(`${file}.part`, Buffer.alloc(100), { mode: how.mode });
  renameSync(`${file}.part`, file);
};

/** Captures in `dir` (one instant each), on a wall clock that moves a minute per round. */
function captures(dir: string, keep = 3) {
  let t = Date.UTC(2026, 11, 1, 22, 0, 0);
  const lines: string[] = [];
  const c = new Captures({
    dir,
    limits: { keep, maxBytes: 1 << 20, everyMs: 1, samples: 1, intervalMs: 1000 },
    take,
    pace: { kind: 'wall' },
    wallNowMs: () => t,
    log: (l) => lines.push(l),
  });
  let engine = 0;
  const capture = async () => {
    t += 60_000;
    c.observe(round(t, [stall(engine++ % 16)]));
    await c.quiet();
    c.observe(round(t, []));
  };
  return { c, lines, capture };
}

describe('the capture directory is held by its descriptor', () => {
  it('swapped for a link after the start: nothing is written in what the link names, and it says why', async () => {
    const base = tmp();
    const caps = join(base, 'caps');
    mkdirSync(caps);
    const victim = join(base, 'victim');
    mkdirSync(victim);
    const { c, lines, capture } = captures(checkCaptureDir(caps, [], process.getuid?.() ?? null));
    await capture();
    expect(readdirSync(caps)).toHaveLength(1);
    renameSync(caps, join(base, 'caps.old'));
    symlinkSync(victim, caps);
    await capture();
    await c.finish();
    expect(readdirSync(victim)).toEqual([]);
    expect(readdirSync(join(base, 'caps.old'))).toHaveLength(1);
    expect(c.counts).toMatchObject({ written: 1, failed: 1 });
    expect(lines.at(-1)).toMatch(
      /not written: --capture-dir .*caps: its name no longer leads to the directory opened at the start/,
    );
  });

  it('captures are 0600', async () => {
    const dir = tmp();
    const { c, capture } = captures(dir);
    await capture();
    await c.finish();
    const [name] = readdirSync(dir);
    expect(statSync(join(dir, name as string)).mode & 0o777).toBe(CAPTURE_MODE);
    expect(CAPTURE_MODE).toBe(0o600);
  });

  it.skipIf(!ROOT)(
    "in a shared sticky directory another user's files named like captures are neither counted nor removed (runs only as root)",
    async () => {
      const dir = join(tmp(), 'sticky');
      mkdirSync(dir);
      chmodSync(dir, 0o1777);
      const { c, lines, capture } = captures(dir, 1);
      await capture();
      for (let i = 1; i <= 5; i++) {
        const p = join(dir, `hfi1-sdma-99991231T00000${i}.000Z-hfi1_0-e1-SD101.tar.gz`);
        writeFileSync(p, 'x');
        chownSync(p, 65534, 65534);
      }
      await capture();
      await c.finish();
      const ours = readdirSync(dir).filter((n) => statSync(join(dir, n)).uid === 0);
      expect(ours).toHaveLength(1); // the older of ours made way for the newer: keep 1
      expect(readdirSync(dir)).toHaveLength(6); // the five planted files stay
      expect(lines.join('\n')).toMatch(/removed the oldest capture, hfi1-sdma-20261201T220100/);
    },
  );

  it('inside the tree read: refused (73) before the directory is made', () => {
    const tree = tmp();
    mkdirSync(join(tree, 'sys/kernel/debug/hfi1'), { recursive: true });
    const inside = join(tree, 'sys/kernel/debug/hfi1/cap');
    expect(() => checkCaptureDir(inside, [tree], process.getuid?.() ?? null)).toThrow(
      expect.objectContaining({ code: 'E_CANT_CREATE', message: expect.stringMatching(/lies inside .*, which is being read/) }),
    );
    expect(existsSync(inside)).toBe(false);
  });
});
