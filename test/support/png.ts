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
  // Row y's bytes follow its filter byte; the row above is all zeros for the first row.
  const zeros = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const out = pixels.subarray(y * stride, (y + 1) * stride);
    const up = y > 0 ? pixels.subarray((y - 1) * stride, y * stride) : zeros;
    unfilter(filter, src, out, up, channels);
  }
  return { width, height, channels, pixels };
}

/** Undo one row's filter: `src` filtered, `up` the row above (decoded), into `out`; `n` bytes per pixel. */
function unfilter(filter: number | undefined, src: Uint8Array, out: Uint8Array, up: Uint8Array, n: number): void {
  const len = out.length;
  switch (filter) {
    case 0:
      out.set(src);
      return;
    case 1:
      for (let i = 0; i < len; i++) out[i] = ((src[i] as number) + (i >= n ? (out[i - n] as number) : 0)) & 0xff;
      return;
    case 2:
      for (let i = 0; i < len; i++) out[i] = ((src[i] as number) + (up[i] as number)) & 0xff;
      return;
    case 3:
      for (let i = 0; i < len; i++)
        out[i] = ((src[i] as number) + (((i >= n ? (out[i - n] as number) : 0) + (up[i] as number)) >> 1)) & 0xff;
      return;
    case 4:
      for (let i = 0; i < len; i++) {
        const a = i >= n ? (out[i - n] as number) : 0;
        const c = i >= n ? (up[i - n] as number) : 0;
        out[i] = ((src[i] as number) + paeth(a, up[i] as number, c)) & 0xff;
      }
      return;
    default:
      throw new Error(`unknown PNG row filter ${filter}`);
  }
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

/**
 * How many pixels have each colour, keyed by 0xrrggbb: colourCounts without a string per pixel (large screenshots).
 * A run of pixels of one colour (a page is mostly runs) is counted at once.
 */
export function rgbCounts(img: Png): Map<number, number> {
  const out = new Map<number, number>();
  const p = img.pixels;
  let run = -1;
  let length = 0;
  for (let i = 0; i < p.length; i += img.channels) {
    const rgb = ((p[i] as number) << 16) | ((p[i + 1] as number) << 8) | (p[i + 2] as number);
    if (rgb === run) {
      length++;
      continue;
    }
    if (length > 0) out.set(run, (out.get(run) ?? 0) + length);
    run = rgb;
    length = 1;
  }
  if (length > 0) out.set(run, (out.get(run) ?? 0) + length);
  return out;
}
