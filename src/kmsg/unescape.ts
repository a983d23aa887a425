// /dev/kmsg prints each record's text with every byte below a space, from 0x7f up, and the backslash itself as
// `\xNN` (msg_add_ext_text, printk.c), so a driver line holding a tab (the descriptor words of a ring dump) reads
// `\x09desc0:…` there. dmesg and journalctl turn the escapes back; a log copied from /dev/kmsg itself (or a line
// a tool stored as it read it) keeps them. Pure.

const ESCAPE = /\\x([0-9a-fA-F]{2})/g;

/** The text of a /dev/kmsg record with its `\xNN` escapes turned back into the bytes they stand for (UTF-8). */
export function unescapeKmsgText(text: string): string {
  if (!text.includes('\\x')) return text;
  const bytes: number[] = [];
  let at = 0;
  for (const m of text.matchAll(ESCAPE)) {
    for (const b of Buffer.from(text.slice(at, m.index), 'utf8')) bytes.push(b);
    bytes.push(Number.parseInt(m[1] as string, 16));
    at = m.index + m[0].length;
  }
  for (const b of Buffer.from(text.slice(at), 'utf8')) bytes.push(b);
  return Buffer.from(bytes).toString('utf8');
}
