// The kernel log's hfi1 lines for a snapshot, read from /dev/kmsg without clearing it: a fresh
// open starts at the oldest record the kernel still holds, each read() returns one record, and
// EAGAIN (opened non-blocking) says there is no more. Under a sysroot other than `/`, only a
// regular file <sysroot>/dev/kmsg inside the tree is read (never the host's log, never through a
// link that leads out of the tree).
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { containmentOf, OutsideTreeError } from '../hw/contain.js';
import { formatBytes } from '../hw/read-file.js';
import { unescapeKmsgText } from '../kmsg/unescape.js';

/** The most hfi1 log text a snapshot keeps; the newest lines are kept. */
export const KMSG_KEEP_CAP_BYTES = 4 << 20;
/** The most a regular-file stand-in for /dev/kmsg may hold. */
export const KMSG_FILE_CAP_BYTES = 64 << 20;
/** Records read from the device at most (the kernel's buffer holds far fewer). */
const MAX_RECORDS = 4_000_000;

/** The hfi1 lines of a kernel log, as `dmesg` prints them (`[   12.345678] text`), and what was left out. */
export interface KmsgLines {
  /** dmesg-style text, one line per record. */
  text: string;
  records: number;
  kept: number;
  /** hfi1 lines left out (the oldest) to stay within the cap. */
  dropped: number;
  /** Why some were left out, or null. */
  note: string | null;
}

/**
 * One /dev/kmsg record (`prio,seq,usec,flags[,…];text`, continuation lines ` KEY=value` after it)
 * as a dmesg line; null for anything else. Pure.
 */
export function kmsgRecordLine(record: string): string | null {
  const semi = record.indexOf(';');
  if (semi < 0) return null;
  const fields = record.slice(0, semi).split(',');
  if (fields.length < 4 || !fields.slice(0, 3).every((f) => /^[0-9]{1,20}$/.test(f))) return null;
  const usec = BigInt(fields[2] as string);
  const nl = record.indexOf('\n', semi);
  // dmesg's form holds the text as dmesg prints it: the record's `\xNN` escapes (a ring dump's tabs) turned back.
  const text = unescapeKmsgText(record.slice(semi + 1, nl < 0 ? undefined : nl));
  const sec = (usec / 1_000_000n).toString().padStart(5, ' ');
  const frac = (usec % 1_000_000n).toString().padStart(6, '0');
  return `[${sec}.${frac}] ${text}`;
}

/** Keep the hfi1 lines of `records`, newest first when over `capBytes`. Pure. */
export function hfi1Lines(records: Iterable<string>, capBytes = KMSG_KEEP_CAP_BYTES): KmsgLines {
  const kept: string[] = [];
  let head = 0;
  let bytes = 0;
  let seen = 0;
  for (const r of records) {
    seen++;
    const line = kmsgRecordLine(r);
    if (line === null || !/hfi[12]/.test(line)) continue; // hfi1_N: and hfi2_N: prefixes
    kept.push(line);
    bytes += line.length + 1;
    while (bytes > capBytes && head < kept.length) bytes -= (kept[head++] as string).length + 1;
  }
  const lines = kept.slice(head);
  const note = head === 0 ? null : `the oldest ${head} hfi1 lines were left out to keep the log within ${formatBytes(capBytes)}`;
  return { text: lines.map((l) => `${l}\n`).join(''), records: seen, kept: lines.length, dropped: head, note };
}

/** The records of an open /dev/kmsg, up to EAGAIN (EPIPE: a record was overwritten, go on). */
function* deviceRecords(fd: number): Generator<string> {
  const buf = Buffer.allocUnsafe(16 * 1024);
  for (let i = 0; i < MAX_RECORDS; i++) {
    let n: number;
    try {
      n = readSync(fd, buf, 0, buf.length, null);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EPIPE') continue;
      if (code === 'EAGAIN') return;
      throw e;
    }
    if (n === 0) return;
    yield buf.toString('utf8', 0, n);
  }
}

/** The lines of a regular file standing in for /dev/kmsg (one record per line). */
function* fileRecords(fd: number, path: string): Generator<string> {
  const chunks: Buffer[] = [];
  let total = 0;
  const buf = Buffer.allocUnsafe(64 * 1024);
  for (;;) {
    const n = readSync(fd, buf, 0, buf.length, null);
    if (n === 0) break;
    total += n;
    if (total > KMSG_FILE_CAP_BYTES) throw new Error(`${path}: holds more than ${formatBytes(KMSG_FILE_CAP_BYTES)}`);
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
  for (const line of Buffer.concat(chunks).toString('utf8').split('\n')) if (!line.startsWith(' ')) yield line;
}

function why(e: unknown, path: string): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return `${path}: not there (ENOENT)`;
  if (code === 'EPERM' || code === 'EACCES') {
    return `${path}: permission denied (${code}): the kernel restricts its log (kernel.dmesg_restrict); run as root`;
  }
  return e instanceof Error && e.message.startsWith(path) ? e.message : `${path}: ${code ?? String(e)}`;
}

/** The hfi1 lines of the kernel log seen from `sysroot`, or why there are none. Never throws. */
export function readKmsgHfi1(sysroot: string): KmsgLines | { reason: string } {
  const within = containmentOf(sysroot);
  const path = within === null ? '/dev/kmsg' : join(sysroot, 'dev/kmsg');
  let fd: number;
  try {
    // Under a sysroot only a regular file inside the tree is opened (checked before it is opened).
    fd =
      within === null
        ? openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY)
        : within.openRead(path, (st) => {
            if (!st.isFile()) throw new NotAFile();
          });
  } catch (e) {
    if (e instanceof NotAFile) {
      return { reason: `${path}: not a regular file; under a sysroot only a regular file stands in for /dev/kmsg` };
    }
    if (e instanceof OutsideTreeError) return { reason: e.message };
    if (within !== null && (e as NodeJS.ErrnoException).code === 'ENOENT') {
      return { reason: `${path}: not there; the host's /dev/kmsg is read only when capturing / itself` };
    }
    return { reason: why(e, path) };
  }
  try {
    const st = fstatSync(fd);
    if (st.isFile()) return hfi1Lines(fileRecords(fd, path));
    if (within === null && st.isCharacterDevice()) return hfi1Lines(deviceRecords(fd));
    return { reason: `${path}: neither the kernel's log device nor a regular file` };
  } catch (e) {
    return { reason: why(e, path) };
  } finally {
    closeSync(fd);
  }
}

/** A stand-in for /dev/kmsg that is not a regular file. */
class NotAFile extends Error {}

/** The lines of a kernel log that say an IPoIB queue timed out: the watchdog's, and the driver's timeout block. */
const IPOIB_LINE = /NETDEV WATCHDOG|hfi[12]_\d+(?:\.\d)?: (?:timeout txq |sde |head \d)/;

/**
 * The IPoIB lines of a snapshot's kernel log (dmesg form, as kmsgRecordLine writes it) logged by `uptimeSec` (all
 * when null), as /dev/kmsg records: what a replayed instant's stand-in for /dev/kmsg holds, so that the live reader
 * finds a stuck queue's timeout blocks (and the engine they name) in a capture as on the host. Pure.
 */
export function ipoibKmsgRecords(text: string, uptimeSec: number | null): string {
  const out: string[] = [];
  let seq = 0;
  for (const line of text.split('\n')) {
    const m = /^\[\s*(\d{1,12})\.(\d{6})\] (.*)$/.exec(line);
    if (!m || !IPOIB_LINE.test(m[3] as string)) continue;
    const usec = BigInt(m[1] as string) * 1_000_000n + BigInt(m[2] as string);
    if (uptimeSec !== null && Number(usec) > uptimeSec * 1e6) continue;
    out.push(`6,${seq++},${usec},-;${m[3]}\n`);
  }
  return out.join('');
}
