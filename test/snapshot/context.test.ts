// A snapshot carries the context a support engineer needs (kernel, module, PCI identity and link,
// the device and port files, qp_stats, the kernel log's hfi1 lines), every part optional and named
// in the manifest when missing, within a cap; read back, it gives the unit's context and the link
// of each instant. The host's own /dev/kmsg is never read when a sysroot is given.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tar from 'tar';
import { afterEach, describe, expect, it } from 'vitest';
import { openHwBackend } from '../../src/hw/index.js';
import { openSnapshotBackend } from '../../src/snapshot/backend.js';
import { captureSnapshot } from '../../src/snapshot/capture.js';
import { KMSG_ENTRY, type SourceRecord } from '../../src/snapshot/format.js';
import { hfi1Lines, kmsgRecordLine, readKmsgHfi1 } from '../../src/snapshot/kmsg.js';
import { BDF, writeTree } from '../hw/sysroot.js';

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'snap-ctx-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const META = { host: 'node17', toolVersion: '0.0.0-test', now: new Date('2026-01-02T03:04:05.000Z') };
const PORT = 'sys/class/infiniband/hfi1_0/ports/1';
const KMSG = [
  '6,100,5000000,-;hfi1 0000:05:00.0: hfi1_0: SDMA engines 16 descq_cnt 2048',
  ' SUBSYSTEM=pci',
  ' DEVICE=+pci:0000:05:00.0',
  '6,101,5000100,-;e1000e 0000:00:19.0 eth0: link up',
  '3,102,12345678,-;hfi1 0000:05:00.0: hfi1_0: SDMA (3) engine error: 0x2 state s99_Running',
  'not a record',
  '',
].join('\n');

function byPath(sources: SourceRecord[]): Map<string, SourceRecord> {
  return new Map(sources.map((s) => [s.path, s]));
}

describe('kernel log records', () => {
  it('become dmesg lines; other lines and continuation lines are passed over', () => {
    expect(kmsgRecordLine('6,100,5000000,-;hfi1 x')).toBe('[    5.000000] hfi1 x');
    expect(kmsgRecordLine('4,7,1234567890123,c;text\n KEY=v\n')).toBe('[1234567.890123] text');
    expect(kmsgRecordLine('garbage')).toBeNull();
    expect(kmsgRecordLine('a,b,c,-;x')).toBeNull();
  });

  it('past the cap, the oldest hfi1 lines go, with a note', () => {
    const recs = Array.from({ length: 10 }, (_, i) => `6,${i},${i},-;hfi1 line ${i}`);
    const r = hfi1Lines(recs, 60);
    expect(r.records).toBe(10);
    expect(r.kept).toBeLessThan(10);
    expect(r.kept + r.dropped).toBe(10);
    expect(r.text.endsWith('hfi1 line 9\n')).toBe(true);
    expect(r.text.length).toBeLessThanOrEqual(60);
    expect(r.note).toBe(`the oldest ${r.dropped} hfi1 lines were left out to keep the log within 60 bytes`);
    expect(hfi1Lines(recs).note).toBeNull();
  });
});

describe('the host’s /dev/kmsg is never read under a sysroot', () => {
  it('a link out of the tree is refused, a device node too, and an absent one says where the log would be', () => {
    const root = tmp();
    mkdirSync(join(root, 'dev'));
    symlinkSync('/dev/kmsg', join(root, 'dev/kmsg'));
    expect(readKmsgHfi1(root)).toEqual({
      reason: expect.stringContaining(`${join(root, 'dev/kmsg')}: is a symbolic link to /dev/kmsg, outside the tree ${root}`),
    });
    const outside = join(tmp(), 'kmsg');
    writeFileSync(outside, KMSG);
    rmSync(join(root, 'dev/kmsg'));
    symlinkSync(outside, join(root, 'dev/kmsg'));
    expect(readKmsgHfi1(root)).toMatchObject({
      reason: expect.stringContaining(`is a symbolic link to ${outside}, outside the tree`),
    });
    rmSync(join(root, 'dev/kmsg'));
    mkdirSync(join(root, 'dev/kmsg'));
    expect(readKmsgHfi1(root)).toEqual({
      reason: `${join(root, 'dev/kmsg')}: not a regular file; under a sysroot only a regular file stands in for /dev/kmsg`,
    });
    expect(readKmsgHfi1(tmp())).toMatchObject({
      reason: expect.stringContaining("the host's /dev/kmsg is read only when capturing /"),
    });
  });
});

describe('a snapshot carries the context', () => {
  it('lists each file, names a missing one, keeps only hfi1 log lines, and reads back context and link per instant', async () => {
    const root = tmp();
    writeTree(root, { files: { 'sys/class/infiniband/hfi1_0/board_id': null } });
    writeFileSync(join(root, 'sys/module/hfi1/parameters/num_sdma'), '0\n');
    mkdirSync(join(root, 'dev'));
    writeFileSync(join(root, 'dev/kmsg'), KMSG);
    const out = join(tmp(), 'ctx.tar.gz');
    let t = 0;
    const m = await captureSnapshot(root, out, META, {
      samples: 2,
      intervalMs: 100,
      clock: { nowMs: () => t },
      sleep: async (ms) => {
        t += ms;
        writeFileSync(join(root, PORT, 'state'), '1: DOWN\n');
        writeFileSync(join(root, PORT, 'phys_state'), '2: Polling\n');
      },
    });
    const first = byPath(m.instants[0]?.sources ?? []);
    for (const rel of [
      'proc/sys/kernel/osrelease',
      'proc/cmdline',
      'sys/module/hfi1/version',
      'sys/module/hfi1/srcversion',
      'sys/module/hfi1/parameters/num_sdma',
      `sys/bus/pci/devices/${BDF}/subsystem_device`,
      `sys/bus/pci/devices/${BDF}/max_link_width`,
      'sys/class/infiniband/hfi1_0/fw_ver',
      `${PORT}/rate`,
      'sys/kernel/debug/hfi1/hfi1_0/qp_stats',
      KMSG_ENTRY,
    ]) {
      expect(first.get(rel), rel).toEqual({ path: rel, captured: true });
    }
    expect(first.get('sys/class/infiniband/hfi1_0/board_id')).toEqual({
      path: 'sys/class/infiniband/hfi1_0/board_id',
      captured: false,
      reason: 'ENOENT',
    });
    expect(m.once).toContain('proc/sys/kernel/osrelease');
    expect(m.once).not.toContain(`${PORT}/state`);
    const second = byPath(m.instants[1]?.sources ?? []);
    expect(second.get(`${PORT}/state`)?.captured).toBe(true);
    expect(second.get('sys/kernel/debug/hfi1/hfi1_0/qp_stats')?.captured).toBe(true);
    expect(second.has(KMSG_ENTRY)).toBe(false);

    const ex = tmp();
    await tar.x({ file: out, cwd: ex });
    expect(readFileSync(join(ex, 'instants/0', KMSG_ENTRY), 'utf8')).toBe(
      '[    5.000000] hfi1 0000:05:00.0: hfi1_0: SDMA engines 16 descq_cnt 2048\n' +
        '[   12.345678] hfi1 0000:05:00.0: hfi1_0: SDMA (3) engine error: 0x2 state s99_Running\n',
    );

    const b = await openSnapshotBackend(out);
    try {
      const u = await b.unit(0);
      const live = await openHwBackend({ sysroot: root });
      expect(u.info.context).toEqual({ ...(await live.units())[0]?.context, boardId: null });
      await live.close();
      expect(u.info.context?.kernelRelease).toBe('6.8.0-45-generic');
      expect(await u.link?.()).toEqual({ state: 'ACTIVE', physState: 'LinkUp', rate: '100 Gb/sec (4X EDR)' });
      expect(await b.recording?.advance()).toBe(true);
      expect(await u.link?.()).toEqual({ state: 'DOWN', physState: 'Polling', rate: '100 Gb/sec (4X EDR)' });
      expect(u.info.context?.fwVer).toBe('1.27.0');
    } finally {
      await b.close();
    }
  });

  it('past the context cap, context files are left out with the reason; the SDMA files are still captured', async () => {
    const root = tmp();
    writeTree(root);
    const out = join(tmp(), 'capped.tar.gz');
    const m = await captureSnapshot(root, out, META, {
      samples: 1,
      intervalMs: 0,
      clock: { nowMs: () => 0 },
      sleep: async () => {},
      contextCapBytes: 40,
    });
    const src = byPath(m.instants[0]?.sources ?? []);
    const capped = [...src.values()].filter((s) => s.reason?.includes('reached their cap of 40 bytes'));
    expect(capped.length).toBeGreaterThan(5);
    expect(src.get('sys/kernel/debug/hfi1/hfi1_0/sdes')?.captured).toBe(true);
    expect(src.get('proc/interrupts')?.captured).toBe(true);
    expect(src.get('sys/class/infiniband/hfi1_0/board_id')?.reason).toMatch(/capture fewer --samples/);
  });
});
