// Unpacking a snapshot safely. The archive is walked twice: first only to check every entry's name
// and type and to count entries and uncompressed bytes against the limits (nothing is written), then
// to write. Only regular files and directories are created, with names checked to stay inside the
// fresh private directory, files opened exclusively without following links; no link is ever
// extracted, so no path under the directory can lead outside it.

import { once } from 'node:events';
import { closeSync, constants, createReadStream, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { Parser, type ReadEntry } from 'tar';
import { Hfi1SdmaError } from '../errors.js';
import { escapeControls } from '../hw/parse/text.js';
import { BDF, limitText, type SnapshotLimits, unsafePathReason } from './format.js';

/** A unit's device link as version 1 stored it; skipped (reading recreates it from the manifest). */
const DEVICE_LINK = /^sys\/class\/infiniband\/hfi1_[0-9]{1,3}\/device$/;

/** Whether `link` (relative to the entry's directory) leaves the tree. */
function linkEscapes(entryPath: string, link: string): boolean {
  if (link.startsWith('/')) return true;
  let depth = entryPath.split('/').length - 1;
  for (const c of link.split('/')) {
    if (c === '..') depth--;
    else if (c !== '' && c !== '.') depth++;
    if (depth < 0) return true;
  }
  return false;
}

/** Errors while writing the unpacked tree: a full disk is E_IO, a clash between entries is malformed input. */
function writeError(e: unknown, archive: string, entry: string, dest: string): Hfi1SdmaError {
  const code = (e as NodeJS.ErrnoException).code ?? '';
  if (code === 'EEXIST' || code === 'ENOTDIR' || code === 'EISDIR' || code === 'ELOOP') {
    return new Hfi1SdmaError(
      'E_PARSE',
      `${archive}:${escapeControls(entry)}: appears twice or clashes with another entry (${code}); this is not a snapshot written by 'hfi1-sdma snapshot'`,
      { cause: e },
    );
  }
  return new Hfi1SdmaError(
    'E_IO',
    `${archive}: cannot unpack into ${dest} (${code || String(e)}): free space there, or set TMPDIR to a directory with room`,
    { cause: e },
  );
}

/**
 * How to read an archive hfi1-sdma did not write (an opacapture tarball): only the entries `select` takes are
 * unpacked (the rest are read past, their bytes counted), and a link is handed to `onLink` and never made, instead
 * of refusing the archive. The defaults are a snapshot's rules: every entry, no link but a unit's device link.
 */
export interface ForeignArchive {
  select(name: string): boolean;
  onLink(name: string, target: string): void;
  /** What the archive is, for messages: `an opacapture tarball`. */
  what: string;
}

/** One pass over the archive; with `dest` set, files and directories are written under it. */
async function walk(
  file: string,
  archive: string,
  limits: SnapshotLimits,
  dest: string | null,
  foreign?: ForeignArchive,
): Promise<void> {
  const parser = new Parser({ strict: true });
  let failure: unknown = null;
  let entries = 0;
  let bytes = 0;
  const openFds = new Set<number>();
  /** Directories this walk made (or found made) under `dest`: a file's directory is made once, not once per file. */
  const made = new Set<string>();
  // Entry names (and link targets) come from the archive: their control characters are escaped, never printed.
  const bad = (entry: string, what: string) =>
    new Hfi1SdmaError(
      'E_PARSE',
      `${archive}:${escapeControls(entry)}: ${escapeControls(what)}; this is not ${foreign ? `${foreign.what} hfi1-sdma can read` : "a snapshot written by 'hfi1-sdma snapshot'"}`,
    );

  const onEntry = (entry: ReadEntry): void => {
    let name = entry.path.startsWith('./') ? entry.path.slice(2) : entry.path;
    if (entry.type === 'Directory') name = name.replace(/\/+$/, '');
    if (name === '' || name === '.') return void entry.resume();
    if (foreign && !foreign.select(name)) return void entry.resume();
    if (++entries > limits.maxEntries) {
      throw new Hfi1SdmaError(
        'E_PARSE',
        `${archive}: holds more than ${limits.maxEntries} entries, the limit for a snapshot; it is not one written by 'hfi1-sdma snapshot'`,
      );
    }
    const why = unsafePathReason(name);
    if (why !== null)
      throw bad(
        entry.path,
        `the name ${why}, which no snapshot entry may (it could land outside the snapshot or mislead a terminal)`,
      );
    if (foreign && (entry.type === 'SymbolicLink' || entry.type === 'Link')) {
      if (dest !== null) foreign.onLink(name, entry.linkpath ?? '');
      return void entry.resume();
    }
    if (entry.type === 'SymbolicLink' || entry.type === 'Link') {
      const link = entry.linkpath ?? '';
      if (entry.type === 'Link' || linkEscapes(name, link)) {
        throw bad(name, `is a ${entry.type === 'Link' ? 'hard' : 'symbolic'} link to ${link}, outside the snapshot`);
      }
      const target = /^\.\.\/\.\.\/\.\.\/bus\/pci\/devices\/([^/]+)$/.exec(link);
      if (!DEVICE_LINK.test(name) || !target || !BDF.test(target[1] as string)) {
        throw bad(name, `is a link to ${link}; a snapshot holds only files and directories`);
      }
      return void entry.resume(); // recreated from the manifest
    }
    if (entry.type === 'Directory') {
      if (dest !== null) {
        const dir = join(dest, name);
        try {
          if (!made.has(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
        } catch (e) {
          throw writeError(e, archive, name, dest);
        }
        made.add(dir);
      }
      return void entry.resume();
    }
    if (entry.type !== 'File' && entry.type !== 'OldFile' && entry.type !== 'ContiguousFile') {
      if (foreign) return void entry.resume();
      throw bad(name, `is a ${entry.type} entry; a snapshot holds only files and directories`);
    }
    if (dest === null) return void entry.resume();
    let fd: number;
    try {
      // Only directories are ever made under `dest` (never a link), and a file is created exclusively, so a
      // directory made once stays one: an entry that clashes with it fails at its open.
      const dir = dirname(join(dest, name));
      if (!made.has(dir)) {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        made.add(dir);
      }
      fd = openSync(join(dest, name), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    } catch (e) {
      throw writeError(e, archive, name, dest);
    }
    openFds.add(fd);
    entry.on('data', (chunk: Buffer) => {
      try {
        if (failure === null) writeSync(fd, chunk);
      } catch (e) {
        failure ??= writeError(e, archive, name, dest);
      }
    });
    entry.on('end', () => {
      openFds.delete(fd);
      closeSync(fd);
    });
  };

  parser.on('entry', (entry: ReadEntry) => {
    try {
      onEntry(entry);
    } catch (e) {
      failure ??= e;
      entry.resume();
    }
  });
  parser.on('error', (e: unknown) => {
    failure ??= e;
  });
  const ended = new Promise<void>((resolve) => {
    parser.on('end', resolve);
    parser.on('close', resolve);
  });
  const check = (): void => {
    if (failure !== null) throw failure;
  };
  try {
    await pipeline(createReadStream(file), createGunzip(), async (source: AsyncIterable<Buffer>) => {
      for await (const chunk of source) {
        bytes += chunk.length;
        if (bytes > limits.maxBytes) {
          failure ??= new Hfi1SdmaError(
            'E_PARSE',
            foreign
              ? `${archive}: unpacks to more than ${limitText(limits.maxBytes)}, the most hfi1-sdma reads of ${foreign.what}`
              : `${archive}: unpacks to more than ${limitText(limits.maxBytes)}, the limit for a snapshot; it is not one written by 'hfi1-sdma snapshot'`,
          );
        }
        check();
        if (!parser.write(chunk)) await Promise.race([once(parser, 'drain'), ended]);
        check();
      }
      parser.end();
      await ended;
      // A tar is whole 512-byte blocks: one cut inside a header block ends the parser without a word.
      if (bytes % 512 !== 0) {
        failure ??= Object.assign(new Error(`Truncated input (${bytes} bytes, not a whole number of 512-byte blocks)`), {
          tarCode: 'TAR_BAD_ARCHIVE',
        });
      }
      check();
    });
  } catch (e) {
    // A failure of ours (a limit, a bad entry) stops the pipeline, which then reports an abort.
    throw failure ?? e;
  } finally {
    for (const fd of openFds) closeSync(fd);
  }
}

/** Turn whatever the decompressor or the tar parser threw into a message naming the archive. */
function archiveError(e: unknown, archive: string): Hfi1SdmaError {
  if (e instanceof Hfi1SdmaError) return e;
  const code = (e as NodeJS.ErrnoException).code ?? '';
  if (code === 'EACCES' || code === 'EPERM') {
    return new Hfi1SdmaError('E_PERMISSION', `${archive}: permission denied: run as a user who can read it`, { cause: e });
  }
  const tarCode = (e as { tarCode?: unknown }).tarCode;
  const what = code.startsWith('Z_')
    ? 'it is not gzip-compressed, or it is truncated or corrupt'
    : typeof tarCode === 'string'
      ? `the tar inside is cut short or damaged: ${(e as Error).message.replace(/^TAR_[A-Z_]+: /, '')}`
      : (e as Error).message;
  return new Hfi1SdmaError(
    'E_PARSE',
    `${archive}: cannot unpack (${what}); copy it again in full, or make a new one with 'hfi1-sdma snapshot -o FILE.tar.gz'`,
    { cause: e },
  );
}

/** Check the whole archive against the limits, then unpack it into `dest` (a fresh private directory). */
export async function extractSnapshot(
  file: string,
  archive: string,
  dest: string,
  limits: SnapshotLimits,
  foreign?: ForeignArchive,
): Promise<void> {
  try {
    await walk(file, archive, limits, null, foreign);
    await walk(file, archive, limits, dest, foreign);
  } catch (e) {
    throw archiveError(e, archive);
  }
}
