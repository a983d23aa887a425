// debugfs `qp_stats` (qp_iter_print, hfi1 qp.c; _qp_stats_seq_show, debugfs.c): one line per QP of the device,
// special QPs first, in any of the formats the driver has printed (staging, the s_hdrwords era, current upstream,
// the out-of-tree IFS drivers). The file is read without locks, so its last line may be cut: that line is left out
// and reported. The `s_flags` layout is decided once per file (decideLayout) and each record decoded in it.
import type { ParseError } from '../../errors.js';
import { LineFail } from './line-cursor.js';
import { fastQpLine, fastQpLineEnd } from './qp-stats-fast.js';
import { QpLineScanner, type QpStatsLine } from './qp-stats-line.js';
import { decodeSFlags, type SFlagsDecoded, type SFlagsLayout } from './s-flags.js';
import { decideLayout, type FormatFamily, type LayoutDecision } from './s-flags-layout.js';
import { errorAt } from './text.js';

export type { QpStateName, QpType } from './qp-stats-line.js';
export { QP_STATE_NAMES } from './qp-stats-line.js';
export type { SFlagsLayout } from './s-flags.js';
export type { FormatFamily, LayoutDecision } from './s-flags-layout.js';

/** One QP: the line's fields, where it is, and its `s_flags` decoded in the file's layout. */
export type QpStatsRecord = QpStatsLine;

/** The whole file. */
export interface QpStatsFile {
  records: QpStatsRecord[];
  /** The format of every line (one file has one format); null when the file has no QP line. */
  format: FormatFamily | null;
  /** The file's s_flags layout and why; null when the file has no QP line. */
  layout: LayoutDecision | null;
  /** The unterminated last line (a read cut short), left out of `records`. */
  torn: { line: number; text: string; error: ParseError } | null;
  /** The first line with fields after the last known one (a newer driver), and how many lines had them. */
  trailing: { line: number; text: string; count: number } | null;
  /** Continuation lines (a TAB first: the IFS TID RDMA state of the record above, hfi1_qp_tid_print) skipped. */
  continuationLines: number;
  /** Lines scanned, the torn one included. */
  lines: number;
}

/** Options: the file name for messages; the layout to assume when neither format nor values decide it. */
export interface QpStatsOptions {
  file?: string;
  layoutHint?: SFlagsLayout;
}

/** Parse a whole `qp_stats` file. Throws only ParseError; an unterminated last line is `torn`, not an error. */
export function parseQpStats(input: Uint8Array | string, opts: QpStatsOptions = {}): QpStatsFile {
  // Bytes are scanned in place (qp-stats-fast.ts), the text decoded only when the careful scanner needs it; a string
  // is read by the careful scanner alone. Both give the same records (latin1: one byte, one character).
  const buf = typeof input === 'string' ? null : input;
  let decoded: string | null = typeof input === 'string' ? input : null;
  const text = (): string => {
    decoded ??= Buffer.from((buf as Uint8Array).buffer, (buf as Uint8Array).byteOffset, (buf as Uint8Array).byteLength).toString(
      'latin1',
    );
    return decoded;
  };
  let scan: QpLineScanner | null = null;
  const file = opts.file ?? 'qp_stats';
  const lines: QpStatsLine[] = [];
  const lineNos: number[] = [];
  let format: FormatFamily | null = null;
  let formatLine = 0;
  let trailing: QpStatsFile['trailing'] = null;
  let continuationLines = 0;
  let torn: QpStatsFile['torn'] = null;
  let line = 1;
  let p = 0;
  const n = buf === null ? (decoded as string).length : buf.length;
  for (; p < n; line++) {
    // A line of the current format is read straight from the bytes, finding its own end; any other is looked at.
    let rec = buf === null || buf[p] === 9 ? null : fastQpLine(buf, p, n);
    let eol = rec === null ? -1 : fastQpLineEnd();
    if (rec === null) {
      eol = buf === null ? (decoded as string).indexOf('\n', p) : buf.indexOf(10, p);
      if (eol === -1) {
        // seq_printf ends every record with a newline: a line without one was cut by a concurrent read.
        const t = text();
        torn = { line, text: t.slice(p), error: errorAt(file, t, n, 'the last line has no newline: the read was cut short') };
        line++;
        break;
      }
      if ((buf === null ? (decoded as string).charCodeAt(p) : buf[p]) === 9) {
        if (lines.length === 0) throw errorAt(file, text(), p, 'a continuation line (TAB first) before the first QP line');
        continuationLines++;
        p = eol + 1;
        continue;
      }
      scan ??= new QpLineScanner(text());
      try {
        rec = scan.line(p, eol);
      } catch (e) {
        if (e instanceof LineFail) throw errorAt(file, text(), e.offset, e.what);
        throw e;
      }
    }
    if (format === null) {
      format = rec.format;
      formatLine = line;
    } else if (rec.format !== format) {
      throw errorAt(
        file,
        text(),
        p,
        `this line is in the ${rec.format} format, line ${formatLine} in the ${format} format: one file has one format`,
      );
    }
    if (rec.extra !== null) {
      if (trailing) trailing.count++;
      else trailing = { line, text: rec.extra, count: 1 };
    }
    lines.push(rec);
    lineNos.push(line);
    p = eol + 1;
  }
  const layout = format === null ? null : decideFileLayout(format, lines, lineNos, opts.layoutHint);
  const decodedFlags = new Map<number, SFlagsDecoded>();
  const records = lines.map((l, i) => withLayout(l, lineNos[i] as number, layout as LayoutDecision, decodedFlags));
  return { records, format, layout, torn, trailing, continuationLines, lines: line - 1 };
}

function decideFileLayout(format: FormatFamily, lines: QpStatsLine[], lineNos: number[], hint?: SFlagsLayout): LayoutDecision {
  const flags: [number, number][] = [];
  for (let i = 0; i < lines.length; i++) {
    const v = (lines[i] as QpStatsLine).sFlags;
    if (v !== 0) flags.push([lineNos[i] as number, v]);
  }
  return decideLayout(format, flags, hint);
}

function withLayout(l: QpStatsLine, line: number, d: LayoutDecision, decoded: Map<number, SFlagsDecoded>): QpStatsRecord {
  l.line = line;
  l.layout = d.layout;
  if (l.sFlags !== 0) {
    // Few distinct values in one file: each is decoded once, and the (frozen) result shared.
    let f = decoded.get(l.sFlags);
    if (f === undefined) {
      f = decodeSFlags(l.sFlags, d.layout, d.dialect);
      Object.freeze(f.names);
      Object.freeze(f.ioWaits);
      decoded.set(l.sFlags, Object.freeze(f));
    }
    l.flags = f;
  }
  return l;
}
