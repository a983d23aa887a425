// The text files of an opacapture (opa-ff's opacapture.sh) that say what the capture's sysfs copy cannot: the PCI
// identity of each device (`lspci -vvv -xxxx`: its config space dump), the host and kernel (`uname -a`), and when
// it was taken (`capture_info`). Pure parsers.

/** A PCI function in `lspci -xxxx` output: its address and the vendor and device ids of its config space. */
export interface LspciDevice {
  bdf: string;
  vendor: number;
  device: number;
}

/**
 * The PCI functions of `lspci -vvv -xxxx` text: each block opens with its address (`af:00.0 Fabric controller: …`,
 * the domain only when given) and its config space dump begins `00: 86 80 f1 24 …` (vendor and device, little-endian).
 */
export function parseLspci(text: string): LspciDevice[] {
  const out: LspciDevice[] = [];
  let bdf: string | null = null;
  for (const line of text.split('\n')) {
    const head = /^((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]) /.exec(line);
    if (head) {
      const a = (head[1] as string).toLowerCase();
      bdf = a.length === 7 ? `0000:${a}` : a;
      continue;
    }
    const dump = /^00: ([0-9a-f]{2}) ([0-9a-f]{2}) ([0-9a-f]{2}) ([0-9a-f]{2})/.exec(line);
    if (dump && bdf !== null) {
      const b = dump.slice(1, 5).map((x) => Number.parseInt(x as string, 16)) as [number, number, number, number];
      out.push({ bdf, vendor: b[0] | (b[1] << 8), device: b[2] | (b[3] << 8) });
      bdf = null;
    }
  }
  return out;
}

/** The host name and kernel release of `uname -a` text (`Linux n17 5.14.0-427… #1 SMP …`); null where absent. */
export function parseUname(text: string): { host: string | null; release: string | null } {
  const f = text.trim().split(/\s+/);
  const ok = (s: string | undefined) => (s && /^[A-Za-z0-9][A-Za-z0-9._+~-]{0,252}$/.test(s) ? s : null);
  return f[0] === 'Linux' ? { host: ok(f[1]), release: ok(f[2]) } : { host: null, release: null };
}

/** When the capture was taken, from `capture_info` (`Capture Info: Detail: 1; Date: Mon Nov  3 10:22:01 UTC 2025`); epoch ms or null. */
export function parseCaptureDate(text: string): number | null {
  const m = /Date: (.+)$/m.exec(text);
  if (!m) return null;
  const t = Date.parse((m[1] as string).trim().replace(/\s+/g, ' '));
  return Number.isFinite(t) ? t : null;
}
