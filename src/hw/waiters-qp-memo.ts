// The last qp_stats read of one unit and what it parsed to: a watch polling at 10 Hz reads the same bytes again
// far more often than the QPs change, and comparing them (memcmp) costs a small fraction of parsing them.
import { parseQpStats, type QpStatsFile, type QpStatsOptions } from './parse/qp-stats.js';

/** One file's last bytes and parse; the parse is shared between reads and must not be changed by its users. */
export class QpStatsMemo {
  private bytes: Buffer | null = null;
  private hint: QpStatsOptions['layoutHint'];
  private parsed: QpStatsFile | null = null;

  /** parseQpStats(bytes, opts), or the previous result when the bytes and the layout hint are the same. */
  parse(bytes: Uint8Array, opts: QpStatsOptions): QpStatsFile {
    const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    if (this.parsed !== null && this.bytes !== null && this.hint === opts.layoutHint && this.bytes.equals(b)) {
      return this.parsed;
    }
    // A parse that throws leaves nothing remembered: the next read parses (and reports) again.
    this.parsed = null;
    this.bytes = null;
    const parsed = parseQpStats(bytes, opts);
    this.bytes = Buffer.from(b);
    this.hint = opts.layoutHint;
    this.parsed = parsed;
    return parsed;
  }
}
