// The emulated unit's kernel log as /dev/kmsg returns it (devkmsg_read, printk.c), one record per line:
//   `<pri>,<seq>,<usec>,-;<text>` (info_print_ext_header: the priority is facility << 3 | level, the kernel's
//   facility being 0, so the printk level itself; `-` for a record that continues nothing), the text with every byte
//   below ' ', from DEL up and the backslash written `\xNN` (msg_add_ext_text), then for a device's message the
//   dictionary lines ` SUBSYSTEM=pci` and ` DEVICE=+pci:<bdf>` (msg_add_dict_text, from dev_printk_info: the PCI
//   device for dev_printk, and a netdev's parent for netdev_printk).
// A line the kernel logs without a device (pr_info, a WARN's lines) gets no dictionary.
import type { Host } from './host.js';

/** The kernel log a renderer reads: the kept lines, their times (µs) and levels, and how many were ever written. */
export type KernelLog = Pick<Host, 'kernelLog' | 'kernelLogUs' | 'kernelLogPri' | 'kernelLogSeq'>;

/** A line printed by dev_printk or netdev_printk on an hfi1/hfi2 PCI function: `<driver> <bdf>: …` or `<driver> <bdf> <netdev>: …`. */
const DEVICE_LINE = /^hfi[12] ([0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])[: ]/;

/** True for a byte msg_add_ext_text escapes (a UTF-8 byte of a character from U+0080 up is ≥ 0x80 too). */
function escaped(code: number): boolean {
  return code < 0x20 || code >= 0x7f || code === 0x5c;
}

/** `text` as /dev/kmsg prints it (msg_add_ext_text): each byte < 0x20, ≥ 0x7f or `\` of its UTF-8 as `\xNN`. */
export function kmsgEscape(text: string): string {
  let plain = true;
  for (let i = 0; i < text.length && plain; i++) plain = !escaped(text.charCodeAt(i));
  if (plain) return text;
  let out = '';
  for (const b of Buffer.from(text, 'utf8')) out += escaped(b) ? `\\x${b.toString(16).padStart(2, '0')}` : String.fromCharCode(b);
  return out;
}

/** One record of /dev/kmsg, dictionary lines included, each line ending in a newline. */
export function kmsgRecord(level: number, seq: number, usec: number, line: string): string {
  const head = `${level},${seq},${usec},-;${kmsgEscape(line)}\n`;
  const dev = DEVICE_LINE.exec(line);
  return dev ? `${head} SUBSYSTEM=pci\n DEVICE=+pci:${dev[1]}\n` : head;
}

/** The unit's kept kernel log as /dev/kmsg records. */
export function kmsgText(log: KernelLog): string {
  const first = log.kernelLogSeq - log.kernelLog.length;
  let out = '';
  for (let i = 0; i < log.kernelLog.length; i++) {
    out += kmsgRecord(log.kernelLogPri[i] ?? 3, first + i, log.kernelLogUs[i] ?? 0, log.kernelLog[i] as string);
  }
  return out;
}
