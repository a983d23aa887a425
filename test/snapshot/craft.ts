// Building hostile snapshots for tests: raw tar entries encoded with the tar library's Header,
// gzip-compressed, and a canary tree hashed before and after to prove nothing outside changed.
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { Header } from 'tar';

/** One raw archive entry. */
export interface RawEntry {
  path: string;
  type?: 'File' | 'Directory' | 'SymbolicLink' | 'Link' | 'FIFO' | 'CharacterDevice';
  data?: string | Buffer;
  linkpath?: string;
}

/** The uncompressed tar bytes of `entries`, names taken exactly as given. */
export function tarBytes(entries: readonly RawEntry[], end = true): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const data = e.data === undefined ? Buffer.alloc(0) : Buffer.from(e.data);
    const block = Buffer.alloc(512);
    const type = e.type ?? 'File';
    const header = new Header({
      path: e.path,
      type,
      mode: type === 'Directory' ? 0o755 : 0o644,
      size: type === 'File' ? data.length : 0,
      mtime: new Date(0),
      uid: 0,
      gid: 0,
      ...(e.linkpath === undefined ? {} : { linkpath: e.linkpath }),
    });
    if (header.encode(block, 0)) throw new Error(`test archive: ${e.path} needs a pax header`);
    parts.push(block);
    if (type === 'File' && data.length > 0) {
      parts.push(data, Buffer.alloc((512 - (data.length % 512)) % 512));
    }
  }
  if (end) parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

/** Write `entries` as a .tar.gz at `file`. */
export function writeArchive(file: string, entries: readonly RawEntry[]): string {
  writeFileSync(file, gzipSync(tarBytes(entries)));
  return file;
}

/** A hash of every name, type, mode-less content and link target under `dir`. */
export function hashTree(dir: string): string {
  const h = createHash('sha256');
  const walk = (d: string, rel: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      const st = lstatSync(p);
      h.update(`${rel}/${name}:${st.isDirectory() ? 'd' : st.isSymbolicLink() ? 'l' : 'f'}:${st.size}\n`);
      if (st.isSymbolicLink()) h.update(readlinkSync(p));
      else if (st.isFile()) h.update(readFileSync(p));
      else if (st.isDirectory()) walk(p, `${rel}/${name}`);
    }
  };
  walk(dir, '');
  return h.digest('hex');
}

/** A canary tree: files an escaping archive would hit. */
export function writeCanary(dir: string): void {
  mkdirSync(join(dir, 'etc'), { recursive: true });
  writeFileSync(join(dir, 'victim'), 'do not touch\n');
  writeFileSync(join(dir, 'etc', 'passwd'), 'root:x:0:0::/root:/bin/sh\n');
}

/** The entries of a .tar.gz (files, directories, links), for rebuilding it with changes. */
export function entriesOf(file: string): RawEntry[] {
  const buf = gunzipSync(readFileSync(file));
  const out: RawEntry[] = [];
  for (let off = 0; off + 512 <= buf.length; ) {
    const h = new Header(buf, off);
    if (h.nullBlock) break;
    const size = h.size ?? 0;
    const type = h.type as RawEntry['type'];
    out.push({
      path: h.path ?? '',
      type,
      data: buf.subarray(off + 512, off + 512 + size),
      ...(h.linkpath ? { linkpath: h.linkpath } : {}),
    });
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

/** A parsed manifest, edited freely by hostile tests. */
// biome-ignore lint/suspicious/noExplicitAny: crafted manifests take any shape
export type Loose = any;

/** Rebuild `entries` with the manifest edited in place by `edit`, or replaced by what it returns (raw text too). */
export function withManifest(entries: readonly RawEntry[], edit: (m: Loose) => unknown): RawEntry[] {
  return entries.map((e) => {
    if (e.path !== 'snapshot.json') return e;
    const m = JSON.parse(String(e.data));
    const next = edit(m) ?? m;
    return { ...e, data: typeof next === 'string' ? next : JSON.stringify(next) };
  });
}
