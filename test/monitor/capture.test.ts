// Capture at the first bad verdict: which rounds start a capture (a stall, halt, strand or gone unit when it
// first appears, at most one per finding per interval, one at a time), the directory's bounds (count and
// bytes, the oldest removed, nothing else touched), stale temporaries, an abandoned capture, the directory
// checks, and one real capture of the emulator read back as a snapshot.
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
import { emuTake } from '../../src/cli/capture.js';
import { createEmuBackend } from '../../src/emu/index.js';
import { type CaptureLimits, Captures, captureName, checkCaptureDir, type TakeSnapshot } from '../../src/monitor/capture.js';
import { FINDING_KINDS, type FindingKindName } from '../../src/monitor/codes.js';
import type { Finding } from '../../src/monitor/findings.js';
import { Monitor } from '../../src/monitor/monitor.js';
import type { Round } from '../../src/monitor/round.js';
import { openSnapshotBackend } from '../../src/snapshot/backend.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('capture-');

function finding(kind: FindingKindName, unit: string | null, engine: number | null): Finding {
  const k = FINDING_KINDS[kind];
  return {
    kind,
    code: k.code,
    count: k.count,
    severity: k.severity,
    unit,
    engine,
    port: null,
    weight: 1,
    text: `${unit ?? 'host'} ${engine ?? ''} ${kind}`,
    action: null,
    ageMs: null,
    ageAtLeast: false,
  };
}

function round(timeMs: number, findings: Finding[]): Round {
  return { index: 1, timeMs, findings, units: [], vanished: [], noUnit: false, listingProblem: null } as unknown as Round;
}

/** A take that writes `bytes` bytes atomically after waiting its instants; records what it was asked. */
function fakeTake(bytes = 1000): TakeSnapshot & { calls: string[] } {
  const calls: string[] = [];
  const take = (async (file, trigger, how) => {
    calls.push(`${trigger.code}:${trigger.unit}/${trigger.engine}`);
    for (let k = 1; k < how.samples; k++) await how.wait(how.intervalMs);
    const t = `${file}.part`;
    writeFileSync(t, Buffer.alloc(bytes));
    renameSync(t, file);
  }) as TakeSnapshot & { calls: string[] };
  take.calls = calls;
  return take;
}

const LIMITS: CaptureLimits = { keep: 3, maxBytes: 10_000, everyMs: 60_000, samples: 3, intervalMs: 1000 };

/** Captures in `dir` paced by the rounds, on a wall clock the test moves. */
function setup(limits: Partial<CaptureLimits> = {}, take = fakeTake()) {
  const dir = tmp();
  const clock = { ms: Date.UTC(2026, 11, 1, 22, 0, 0) };
  const lines: string[] = [];
  let advanced = 0;
  const c = new Captures({
    dir,
    limits: { ...LIMITS, ...limits },
    take,
    pace: {
      kind: 'rounds',
      advance: (ms) => {
        advanced += ms;
      },
    },
    wallNowMs: () => clock.ms,
    log: (l) => lines.push(l),
  });
  /** One round at virtual `t` s (wall time moves as much), then let the capture run until it waits. */
  const feed = async (t: number, findings: Finding[]) => {
    clock.ms = Date.UTC(2026, 11, 1, 22, 0, 0) + t * 1000;
    c.observe(round(t * 1000, findings));
    await c.quiet();
  };
  return { c, dir, take, lines, feed, advanced: () => advanced };
}

const captures = (dir: string) =>
  readdirSync(dir)
    .filter((n) => n.endsWith('.tar.gz'))
    .sort();

describe('what starts a capture', () => {
  it('a stall when it first appears, written over the next rounds, and not again while it lasts', async () => {
    const { c, dir, take, feed, lines } = setup();
    const stall = finding('stalled', 'hfi1_0', 3);
    await feed(0, []);
    await feed(1, [stall]);
    expect(take.calls).toEqual(['SD101:hfi1_0/3']);
    expect(captures(dir)).toEqual([]); // 3 instants: waits for two more rounds
    await feed(2, [stall]);
    await feed(3, [stall]);
    expect(captures(dir)).toEqual([captureName(Date.UTC(2026, 11, 1, 22, 0, 1), { ...stall, kind: 'stalled' })]);
    expect(c.counts).toMatchObject({ written: 1, failed: 0, suppressed: 0 });
    expect(lines.at(-1)).toMatch(/^captured .*hfi1-sdma-20261201T220001\.000Z-hfi1_0-e3-SD101\.tar\.gz for SD101 .*3 instants/);
    for (let t = 4; t < 10; t++) await feed(t, [stall]);
    expect(take.calls).toHaveLength(1);
  });

  it('each kind that matters: stalled, halted, stranded, gone, vanished; not warnings or notes', async () => {
    const { take, feed } = setup({ samples: 1 });
    const kinds: FindingKindName[] = ['stalled', 'halted', 'stranded', 'gone', 'vanished', 'probable', 'errors', 'portDown'];
    for (const [i, k] of kinds.entries()) await feed(i, [finding(k, 'hfi1_0', k === 'gone' || k === 'vanished' ? null : i)]);
    expect(take.calls).toEqual(['SD101:hfi1_0/0', 'SD102:hfi1_0/1', 'SD201:hfi1_0/2', 'SD301:hfi1_0/null', 'SD302:hfi1_0/null']);
  });

  it('once per finding and engine per interval: a stall that clears and returns within it is suppressed and counted', async () => {
    const { c, take, feed } = setup({ samples: 1, everyMs: 60_000 });
    const stall = finding('stalled', 'hfi1_0', 3);
    await feed(0, [stall]);
    await feed(1, []);
    await feed(2, [stall]); // 2 s later: suppressed
    await feed(3, [finding('stalled', 'hfi1_0', 4)]); // another engine: captured
    await feed(4, []);
    await feed(70, [stall]); // past the interval: captured again
    expect(take.calls).toEqual(['SD101:hfi1_0/3', 'SD101:hfi1_0/4', 'SD101:hfi1_0/3']);
    expect(c.counts.suppressed).toBe(1);
  });

  it('one at a time: what turns bad while a capture is written is covered by it (every unit is in it)', async () => {
    const { take, feed } = setup({ samples: 3 });
    await feed(0, [finding('stalled', 'hfi1_0', 3)]);
    await feed(1, [finding('stalled', 'hfi1_0', 3), finding('halted', 'hfi1_1', 0)]);
    await feed(2, [finding('stalled', 'hfi1_0', 3), finding('halted', 'hfi1_1', 0)]);
    await feed(3, []);
    await feed(4, [finding('halted', 'hfi1_1', 0)]); // within the interval of the capture that covered it
    expect(take.calls).toEqual(['SD101:hfi1_0/3']);
  });
});

describe('the directory stays within its limits', () => {
  it('at most keep captures: the oldest are removed, files that are not captures are left alone', async () => {
    const { dir, feed, c } = setup({ samples: 1, keep: 3, everyMs: 0 });
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    writeFileSync(join(dir, 'hfi1-sdma-old.tar.gz'), 'not named as a capture');
    for (let t = 0; t < 10; t++) {
      await feed(t, t % 2 === 0 ? [finding('stalled', 'hfi1_0', t % 16)] : []);
      expect(captures(dir).filter((n) => n !== 'hfi1-sdma-old.tar.gz').length).toBeLessThanOrEqual(3);
    }
    const names = captures(dir).filter((n) => n !== 'hfi1-sdma-old.tar.gz');
    expect(names.map((n) => /-e(\d+)-/.exec(n)?.[1])).toEqual(['4', '6', '8']);
    expect(readdirSync(dir)).toContain('notes.txt');
    expect(readdirSync(dir)).toContain('hfi1-sdma-old.tar.gz');
    expect(c.counts.removed).toBe(2);
  });

  it('at most maxBytes, counting the capture being written once one has been seen', async () => {
    const { dir, feed } = setup({ samples: 1, keep: 100, maxBytes: 3500, everyMs: 0 }, fakeTake(1000));
    for (let t = 0; t < 12; t++) {
      await feed(t, [finding('stalled', 'hfi1_0', t)]);
      const total = captures(dir).reduce((s, n) => s + statSync(join(dir, n)).size, 0);
      expect(total).toBeLessThanOrEqual(3500);
    }
    expect(captures(dir)).toHaveLength(3);
  });

  it('temporaries of a writer that died are removed; a live writer\u2019s are not', () => {
    const dir = tmp();
    const dead = `.hfi1-sdma.hfi1-sdma-20261201T220001.000Z-hfi1_0-e3-SD101.tar.gz.999999999.ab12cd.tmp`;
    const live = `.hfi1-sdma.hfi1-sdma-20261201T220001.000Z-hfi1_0-e4-SD101.tar.gz.${process.ppid}.ab12cd.tmp`;
    writeFileSync(join(dir, dead), 'x');
    writeFileSync(join(dir, live), 'x');
    new Captures({ dir, limits: LIMITS, take: fakeTake(), pace: { kind: 'wall' }, wallNowMs: Date.now, log: () => {} });
    expect(existsSync(join(dir, dead))).toBe(false);
    expect(existsSync(join(dir, live))).toBe(true);
  });
  it('one that outgrows its room is taken again at once with the older captures removed; lost only past maxBytes alone', async () => {
    // Captures of 1000 bytes, then one of 2500: it finds 1500 bytes of room, so the two older make way.
    const sizes = [1000, 1000, 2500, 2500, 9000];
    let n = 0;
    const take = (async (file, _trigger, how) => {
      const bytes = sizes[Math.min(n++, sizes.length - 1)] as number;
      if (bytes > how.maxBytes) throw new Error(`${file}: the archive would take more than the ${how.maxBytes} bytes it may`);
      writeFileSync(file, Buffer.alloc(bytes));
    }) as ReturnType<typeof fakeTake>;
    const { c, dir, feed, lines } = setup({ samples: 1, keep: 10, maxBytes: 3500, everyMs: 0 }, take);
    await feed(0, [finding('stalled', 'hfi1_0', 0)]);
    await feed(1, [finding('stalled', 'hfi1_0', 1)]);
    expect(captures(dir)).toHaveLength(2);
    await feed(2, [finding('stalled', 'hfi1_0', 2)]);
    expect(captures(dir)).toEqual([expect.stringMatching(/-e2-SD101\.tar\.gz$/)]);
    expect(statSync(join(dir, captures(dir)[0] as string)).size).toBe(2500);
    expect(c.counts).toMatchObject({ written: 3, failed: 0, removed: 2 });
    // Larger than the whole budget (its size cannot be known before it is written): said and counted.
    await feed(3, [finding('stalled', 'hfi1_0', 3)]);
    expect(c.counts.failed).toBe(1);
    expect(lines.at(-1)).toMatch(/capture for SD101 .* not written: .*would take more than the 3500 bytes/);
  });
});

describe('when the rounds end', () => {
  it('a capture under way finishes with instants of its own when the rounds end', async () => {
    const { c, dir, feed, advanced } = setup({ samples: 3 });
    await feed(0, [finding('gone', 'hfi1_0', null)]);
    await c.finish();
    expect(captures(dir)).toHaveLength(1);
    expect(advanced()).toBe(2000);
  });

  it('a stop abandons it: nothing is kept, the failure is said and counted', async () => {
    const { c, dir, feed, lines } = setup({ samples: 3 });
    await feed(0, [finding('stalled', 'hfi1_0', 1)]);
    await c.finish(true);
    expect(captures(dir)).toEqual([]);
    expect(c.counts).toMatchObject({ written: 0, failed: 1 });
    expect(lines.at(-1)).toMatch(/not written: stopped before it was complete, nothing was kept/);
  });

  it('a failed capture is said with its reason, and the next finding is captured', async () => {
    let n = 0;
    const take: TakeSnapshot = async (file) => {
      n += 1;
      if (n === 1) throw new Error('no space left (ENOSPC)');
      writeFileSync(file, 'x');
    };
    const { c, dir, feed, lines } = setup({ samples: 1 }, take as ReturnType<typeof fakeTake>);
    await feed(0, [finding('stalled', 'hfi1_0', 1)]);
    await feed(1, [finding('stalled', 'hfi1_0', 1), finding('stalled', 'hfi1_0', 2)]);
    expect(lines[0]).toMatch(/capture for SD101 .* not written: no space left \(ENOSPC\)/);
    expect(c.counts).toMatchObject({ written: 1, failed: 1 });
    expect(captures(dir)).toHaveLength(1);
  });
});

describe('the capture directory as given', () => {
  it('is created when missing (0750, this user\u2019s)', () => {
    const d = join(tmp(), 'captures');
    expect(checkCaptureDir(d, [], process.getuid?.() ?? null)).toBe(d);
    expect(statSync(d).mode & 0o777).toBe(0o750);
  });

  it('refuses a link, a file, a directory inside the sysroot, one any user may write, another user\u2019s', () => {
    const root = tmp();
    const uid = process.getuid?.() ?? null;
    mkdirSync(join(root, 'real'));
    symlinkSync(join(root, 'real'), join(root, 'link'));
    writeFileSync(join(root, 'file'), '');
    mkdirSync(join(root, 'sysroot/sys'), { recursive: true });
    mkdirSync(join(root, 'open'));
    chmodSync(join(root, 'open'), 0o777);
    expect(() => checkCaptureDir(join(root, 'link'), [], uid)).toThrow(/is a symbolic link/);
    expect(() => checkCaptureDir(join(root, 'file'), [], uid)).toThrow(/is not a directory/);
    expect(() => checkCaptureDir(join(root, 'sysroot/sys'), [join(root, 'sysroot')], uid)).toThrow(
      /lies inside .*sysroot, which is being read/,
    );
    expect(() => checkCaptureDir(join(root, 'open'), [], uid)).toThrow(/any user may write there/);
    chmodSync(join(root, 'open'), 0o1777);
    expect(checkCaptureDir(join(root, 'open'), [], uid)).toBe(join(root, 'open'));
    expect(() => checkCaptureDir(join(root, 'missing/deeper'), [], uid)).toThrow(/cannot create it \(ENOENT\)/);
  });

  it.runIf(process.getuid?.() === 0)(
    'refuses another user\u2019s directory, root included (run as root: a directory is given away)',
    () => {
      const d = join(tmp(), 'theirs');
      mkdirSync(d);
      chownSync(d, 65534, 65534);
      expect(() => checkCaptureDir(d, [], 0)).toThrow(/belongs to user 65534/);
      expect(() => checkCaptureDir(d, [], 1000)).toThrow(/belongs to user 65534/);
      expect(() => checkCaptureDir(d, [], 65534)).not.toThrow();
    },
  );
});

describe('a real capture of the emulator', () => {
  it('is a snapshot of the instants of the rounds that followed, read back with the stall it was taken for', async () => {
    const backend = createEmuBackend({
      seed: 1,
      engines: 4,
      descqCnt: undefined,
      workload: undefined,
      atMs: 0,
      fault: ['stop-fetch@10:2'],
    });
    const dir = tmp();
    const lines: string[] = [];
    const c = new Captures({
      dir,
      limits: { ...LIMITS, maxBytes: 16 << 20, samples: 3, intervalMs: 100 },
      take: emuTake(backend),
      pace: { kind: 'rounds', advance: (ms) => backend.advanceMs(ms) },
      wallNowMs: Date.now,
      log: (l) => lines.push(l),
    });
    const monitor = new Monitor(backend, { stallMs: 300, strandMs: 200 });
    for (let i = 0; i < 8; i++) {
      c.observe(await monitor.round());
      await c.quiet();
      backend.advanceMs(100);
    }
    await c.finish();
    const [name] = captures(dir);
    expect(name).toMatch(/-hfi1_0-e2-SD101\.tar\.gz$/);
    const snap = await openSnapshotBackend(join(dir, name as string));
    try {
      expect(snap.recording?.timesMs).toEqual([0, 100, 200]);
      // Engine 2's head stands still across the instants, its ring full of work.
      const unit = await snap.unit(0);
      const heads: number[] = [];
      do {
        const e2 = (await unit.sample()).find((s) => s.engine === 2);
        expect((e2?.sw?.descqTail ?? 0) - (e2?.sw?.descqHead ?? 0)).toBeGreaterThan(0);
        heads.push(e2?.sw?.descqHead ?? -1);
      } while (await snap.recording?.advance());
      expect(heads).toHaveLength(3);
      expect(new Set(heads).size).toBe(1);
      expect(snap.origin?.emulated).toBe(true);
    } finally {
      await snap.close();
    }
    expect(lines.join('\n')).toMatch(/captured .* for SD101 \(hfi1_0 sdma2 stalled/);
  });

  it('one larger than the room the directory has left is not written, and nothing of it stays', async () => {
    const backend = createEmuBackend({ seed: 1, engines: 2, descqCnt: undefined, workload: undefined, atMs: 20, fault: [] });
    const dir = tmp();
    const c = new Captures({
      dir,
      limits: { ...LIMITS, maxBytes: 4096, samples: 1 },
      take: emuTake(backend),
      pace: { kind: 'rounds', advance: (ms) => backend.advanceMs(ms) },
      wallNowMs: Date.now,
      log: () => {},
    });
    c.observe(round(0, [finding('stalled', 'hfi1_0', 0)]));
    await c.finish();
    expect(c.counts).toMatchObject({ written: 0, failed: 1 });
    expect(readdirSync(dir)).toEqual([]);
  });
});
