// The kernel log of a live host (or the regular file that stands in for /dev/kmsg under a sysroot) read as it grows,
// for the IPoIB timeout blocks of one unit (kmsg/ipoib.ts). /dev/kmsg is opened once, read-only and non-blocking,
// and each poll reads the records that arrived since (a fresh open starts at the oldest record the kernel holds);
// reading never clears it. A stand-in file is read (through the unit's contained reads, never out of the tree) again
// when its size changed or a second of uptime passed. /proc/uptime (under the sysroot) dates the records: each
// carries its microseconds since boot.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { TimeoutBlocks, type TimeoutRecord } from '../kmsg/ipoib.js';
import { unescapeKmsgText } from '../kmsg/unescape.js';
import { isLiveRoot } from './contain.js';
import { errnoCode, type HwFs } from './fsio.js';

/** The most a stand-in file is read (the emulator's is far smaller). */
const FILE_CAP_BYTES = 64 << 20;
/** Records read from the device per poll at most (the kernel's ring holds far fewer). */
const MAX_RECORDS_PER_POLL = 200_000;

/** One record `prio,seq,usec,flags;text`: its microseconds and text, or null for a continuation or other line. */
export function kmsgRecord(record: string): { usec: number; text: string } | null {
  const semi = record.indexOf(';');
  if (semi < 0) return null;
  const fields = record.slice(0, semi).split(',');
  if (fields.length < 4 || !/^[0-9]{1,20}$/.test(fields[2] as string)) return null;
  const nl = record.indexOf('\n', semi);
  return { usec: Number(fields[2]), text: unescapeKmsgText(record.slice(semi + 1, nl < 0 ? undefined : nl)) };
}

/** /proc/uptime's first field in ms, or null. */
export function uptimeMs(text: string): number | null {
  const m = /^(\d{1,12})(?:\.(\d{1,9}))?\s/.exec(text);
  if (!m) return null;
  return Number(m[1]) * 1000 + Number(`0.${m[2] ?? '0'}`) * 1000;
}

/** What a poll gives: the unit's latest timeout block per queue and the uptime, or why the log cannot be read. */
export type KmsgPoll = { ok: true; records: TimeoutRecord[]; uptimeMs: number | null } | { ok: false; reason: string };

/** The kernel log of one unit (by PCI address), followed. */
export class KmsgTail {
  private fd = -1;
  private failed: string | null = null;
  private blocks: TimeoutBlocks;
  /** The stand-in file's size and the uptime when it was last read. */
  private readAt: { size: number; uptimeMs: number | null } | null = null;
  private readonly live: boolean;
  private readonly path: string;

  constructor(
    private readonly fs: HwFs,
    private readonly sysroot: string,
    private readonly pci: string,
  ) {
    this.live = isLiveRoot(sysroot);
    this.path = this.live ? '/dev/kmsg' : join(sysroot, 'dev/kmsg');
    this.blocks = new TimeoutBlocks(pci);
  }

  /** Read what arrived since the last poll. */
  async poll(): Promise<KmsgPoll> {
    const up = await this.uptime();
    if (this.live) return this.pollDevice(up);
    return this.pollFile(up);
  }

  private async uptime(): Promise<number | null> {
    try {
      return uptimeMs(Buffer.from(await this.fs.readFile(join(this.sysroot, 'proc/uptime'), 4096)).toString('utf8'));
    } catch {
      return null;
    }
  }

  private pollDevice(up: number | null): KmsgPoll {
    if (this.failed !== null) return { ok: false, reason: this.failed };
    if (this.fd < 0) {
      try {
        this.fd = openSync(this.path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
        if (!fstatSync(this.fd).isCharacterDevice()) {
          this.close();
          this.failed = `${this.path}: not the kernel's log device`;
          return { ok: false, reason: this.failed };
        }
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code ?? String(e);
        this.failed =
          code === 'EPERM' || code === 'EACCES'
            ? `${this.path}: permission denied (${code}): the kernel restricts its log (kernel.dmesg_restrict)`
            : `${this.path}: ${code}`;
        return { ok: false, reason: this.failed };
      }
    }
    const buf = Buffer.allocUnsafe(16 * 1024);
    for (let i = 0; i < MAX_RECORDS_PER_POLL; i++) {
      let n: number;
      try {
        n = readSync(this.fd, buf, 0, buf.length, null);
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'EPIPE') continue; // records were overwritten since the last read: go on from the oldest kept
        if (code === 'EAGAIN') break;
        break;
      }
      if (n === 0) break;
      const r = kmsgRecord(buf.toString('utf8', 0, n));
      if (r) this.blocks.push(r.text, r.usec);
    }
    return { ok: true, records: this.blocks.records(), uptimeMs: up };
  }

  private async pollFile(up: number | null): Promise<KmsgPoll> {
    const size = (await this.fs.size?.(this.path)) ?? null;
    if (size === null)
      return {
        ok: false,
        reason: `${this.path}: not there, or not a regular file (a sysroot's kernel log is a regular file dev/kmsg)`,
      };
    const last = this.readAt;
    const stale = last === null || last.size !== size || up === null || last.uptimeMs === null || up - last.uptimeMs >= 1000;
    if (stale) {
      let text: string;
      try {
        text = Buffer.from(await this.fs.readFile(this.path, FILE_CAP_BYTES)).toString('utf8');
      } catch (e) {
        return { ok: false, reason: `${this.path}: ${errnoCode(e) || String(e)}` };
      }
      this.blocks = new TimeoutBlocks(this.pci);
      for (const line of text.split('\n')) {
        const r = kmsgRecord(line);
        if (r) this.blocks.push(r.text, r.usec);
      }
      this.readAt = { size, uptimeMs: up };
    }
    return { ok: true, records: this.blocks.records(), uptimeMs: up };
  }

  /** Close the device, if open. */
  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }
}
