// A small PNG reader for tests that look at screenshots: 8-bit RGB or RGBA, not interlaced (what Chromium
// writes), decoded to pixels with zlib and the five row filters of the PNG specification.
import { inflateSync } from 'node:zlib';

/** A decoded image: `channels` bytes per pixel, row after row. */
export interface Png {
  width: number;
  height: number;
  channels: 3 | 4;
  pixels: Uint8Array;
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/** Decode `buf`; throws on anything but 8-bit RGB(A), non-interlaced. */
export function decodePng(buf: Buffer): Png {
  if (buf.subarray(0, 8).toString('hex') !== '89504e470d0a1a0a') throw new Error('not a PNG');
  let width = 0;
  let height = 0;
  let channels: 3 | 4 = 4;
  const idat: Buffer[] = [];
  for (let off = 8; off + 8 <= buf.length; ) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString('latin1', off + 4, off + 8);
    const data = buf.subarray(off + 8, off + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const depth = data[8];
      const colour = data[9];
      if (depth !== 8 || (colour !== 2 && colour !== 6) || data[12] !== 0) throw new Error('unsupported PNG layout');
      channels = colour === 2 ? 3 : 4;
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    off += 12 + len;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const src = y * (stride + 1) + 1;
    const row = y * stride;
    for (let i = 0; i < stride; i++) {
      const v = raw[src + i] as number;
      const a = i >= channels ? (pixels[row + i - channels] as number) : 0;
      const b = y > 0 ? (pixels[row - stride + i] as number) : 0;
      const c = i >= channels && y > 0 ? (pixels[row - stride + i - channels] as number) : 0;
      const pred = filter === 0 ? 0 : filter === 1 ? a : filter === 2 ? b : filter === 3 ? (a + b) >> 1 : paeth(a, b, c);
      pixels[row + i] = (v + pred) & 0xff;
    }
  }
  return { width, height, channels, pixels };
}

/** How many pixels have each colour (`#rrggbb`). */
export function colourCounts(img: Png): Map<string, number> {
  const out = new Map<string, number>();
  for (let i = 0; i < img.pixels.length; i += img.channels) {
    const hex = `#${[0, 1, 2].map((k) => (img.pixels[i + k] as number).toString(16).padStart(2, '0')).join('')}`;
    out.set(hex, (out.get(hex) ?? 0) + 1);
  }
  return out;
}

/** How many pixels have each colour, keyed by 0xrrggbb: colourCounts without a string per pixel (large screenshots). */
export function rgbCounts(img: Png): Map<number, number> {
  const out = new Map<number, number>();
  const p = img.pixels;
  for (let i = 0; i < p.length; i += img.channels) {
    const rgb = ((p[i] as number) << 16) | ((p[i + 1] as number) << 8) | (p[i + 2] as number);
    out.set(rgb, (out.get(rgb) ?? 0) + 1);
  }
  return out;
}
