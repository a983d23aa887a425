// Reading a snapshot back: unpack it (extract.ts), check its manifest (manifest.ts), then rebuild
// what a sysroot reader needs under each instant's tree: the files stored once, a sparse resource0
// holding the BAR block, and each unit's device link. Every path written here is computed by the
// tool from validated names; files are created exclusively without following links; the links
// are made last. The temporary tree is removed on close, on any failure and on process exit.
import {
  closeSync,
  constants,
  ftruncateSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  realpathSync,
  symlinkSync,
  writeSync,
} from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { removeOnExit } from '../cleanup.js';
import { Hfi1SdmaError } from '../errors.js';
import { BAR0_SIZE } from '../progress/constants.js';
import { extractSnapshot } from './extract.js';
import { barBlockOf, barBytesOf, DEFAULT_LIMITS, MANIFEST, type SnapshotLimits } from './format.js';
import { checkManifest, type SnapshotPlan } from './manifest.js';

/** A manifest of 100 instants of a few units is well under 1 MiB. */
const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;

/** A snapshot unpacked into a temporary directory: one sysroot per recorded instant. */
export interface OpenedSnapshot {
  /** The archive as the user named it. */
  archive: string;
  /** The unpacked archive's root: paths under it are named `archive:entry` to the user. */
  tree: string;
  plan: SnapshotPlan;
  instants: { sysroot: string; timeMs: number }[];
  /** Remove the unpacked tree (safe twice). */
  close(): Promise<void>;
}

/** Internal knobs (tests set small limits, and a temporary directory they can inspect). */
export interface OpenOptions {
  limits?: SnapshotLimits;
  tmpDir?: string;
}

class TreeBuilder {
  private readonly realTree: string;

  constructor(
    private readonly archive: string,
    private readonly tree: string,
  ) {
    this.realTree = realpathSync(tree);
  }

  bad(rel: string, what: string): Hfi1SdmaError {
    return new Hfi1SdmaError(
      'E_PARSE',
      `${this.archive}:${rel}: ${what}; copy the snapshot again in full, or make a new one with 'hfi1-sdma snapshot -o FILE.tar.gz'`,
    );
  }

  /** Check that the archive holds a regular file at `rel` (never a link: none was extracted). */
  has(rel: string): void {
    const st = lstatSync(join(this.tree, rel), { throwIfNoEntry: false });
    if (!st?.isFile()) throw this.bad(rel, 'listed in snapshot.json but not in the archive');
  }

  /** The regular file the archive holds at `rel`. */
  file(rel: string): Buffer {
    this.has(rel);
    return readFileSync(join(this.tree, rel));
  }

  /** Create a new file at `rel`, exclusively, in a directory that resolves inside the tree. */
  create(rel: string): number {
    const path = join(this.tree, rel);
    try {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      if (realpathSync(dirname(path)) !== join(this.realTree, dirname(rel))) throw this.bad(rel, 'lies outside the snapshot');
      return openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
    } catch (e) {
      throw this.writeError(e, rel);
    }
  }

  writeError(e: unknown, rel: string): Hfi1SdmaError {
    if (e instanceof Hfi1SdmaError) return e;
    const code = (e as NodeJS.ErrnoException).code ?? '';
    if (code === 'EEXIST' || code === 'ENOTDIR' || code === 'EISDIR' || code === 'ELOOP') {
      return this.bad(rel, `the archive holds an entry where hfi1-sdma rebuilds this file (${code})`);
    }
    return new Hfi1SdmaError(
      'E_IO',
      `${this.archive}: cannot unpack into ${dirname(this.tree)} (${code || String(e)}): free space there, or set TMPDIR to a directory with room`,
      { cause: e },
    );
  }

  /** Copy a file stored once (with the first instant) into a later instant's tree. */
  copy(fromRel: string, toRel: string): void {
    const data = this.file(fromRel);
    const fd = this.create(toRel);
    try {
      writeSync(fd, data);
    } catch (e) {
      throw this.writeError(e, toRel);
    } finally {
      closeSync(fd);
    }
  }

  /** A sparse resource0 of the chip's BAR0 size (64 MiB WFR, 128 MiB JKR) holding the SDMA CSR block at its offset. */
  resource0(rel: string, block: Buffer, offset: number, sizeBytes = BAR0_SIZE): void {
    const fd = this.create(rel);
    try {
      ftruncateSync(fd, sizeBytes);
      writeSync(fd, block, 0, block.length, offset);
    } catch (e) {
      throw this.writeError(e, rel);
    } finally {
      closeSync(fd);
    }
  }

  /** A unit's device link to its PCI directory (relative, inside the tree). */
  deviceLink(rel: string, pci: string): void {
    const path = join(this.tree, rel);
    try {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
      symlinkSync(`../../../bus/pci/devices/${pci}`, path);
    } catch (e) {
      throw this.writeError(e, rel);
    }
  }
}

function prefixed(dir: string, rel: string): string {
  return dir === '' ? rel : `${dir}/${rel}`;
}

/** Rebuild every instant's tree from a checked plan. */
function rebuild(b: TreeBuilder, plan: SnapshotPlan): void {
  const first = plan.instants[0]?.dir ?? '';
  for (const [k, inst] of plan.instants.entries()) {
    const once = new Set(k === 0 ? [] : plan.once);
    for (const s of inst.sources) {
      const isBar = inst.barBlocks.some((blk) => blk.resource0 === s.path);
      if (s.captured && !isBar && !once.has(s.path)) b.has(prefixed(inst.dir, s.path));
    }
    for (const p of once) b.copy(prefixed(first, p), prefixed(inst.dir, p));
    for (const blk of inst.barBlocks) {
      const data = b.file(prefixed(inst.dir, blk.file));
      if (data.length !== blk.length) {
        throw b.bad(prefixed(inst.dir, blk.file), `is ${data.length} bytes, the SDMA CSR block is ${blk.length}`);
      }
      const unit = plan.units.find((u) => barBlockOf(u).resource0 === blk.resource0);
      b.resource0(prefixed(inst.dir, blk.resource0), data, blk.offset, unit ? barBytesOf(unit) : undefined);
    }
  }
  // Links last: until here nothing under the tree is a link, so no write above could follow one.
  for (const inst of plan.instants) {
    for (const u of plan.units)
      if (u.pci !== '') b.deviceLink(prefixed(inst.dir, `sys/class/infiniband/${u.name}/device`), u.pci);
  }
}

/** Unpack and check a snapshot; E_PARSE (65) naming the archive and the entry when it is not sound. */
export async function openSnapshot(file: string, opts: OpenOptions = {}): Promise<OpenedSnapshot> {
  const st = await stat(file).catch(() => null);
  if (!st?.isFile())
    throw new Hfi1SdmaError('E_NO_INPUT', `${file}: no such snapshot file: name a .tar.gz written by 'hfi1-sdma snapshot'`);
  const base = opts.tmpDir ?? tmpdir();
  let root: string;
  let forget: () => void;
  try {
    // Created and registered for removal in one turn of the event loop: no signal can fall between them.
    root = mkdtempSync(join(base, 'hfi1-sdma-snapshot-'));
    forget = removeOnExit(root);
  } catch (e) {
    throw new Hfi1SdmaError(
      'E_IO',
      `${file}: cannot make a temporary directory under ${base} (${(e as NodeJS.ErrnoException).code ?? e}): set TMPDIR to a writable directory with room`,
      { cause: e },
    );
  }
  const close = async () => {
    await rm(root, { recursive: true, force: true });
    forget();
  };
  const tree = join(root, 'tree');
  try {
    await mkdir(tree, { mode: 0o700 });
    await extractSnapshot(file, file, tree, opts.limits ?? DEFAULT_LIMITS);
    const b = new TreeBuilder(file, tree);
    const st = lstatSync(join(tree, MANIFEST), { throwIfNoEntry: false });
    if (!st?.isFile()) {
      throw new Hfi1SdmaError(
        'E_PARSE',
        `${file}: holds no ${MANIFEST}: it is not an hfi1-sdma snapshot, or it was cut short; make one with 'hfi1-sdma snapshot -o FILE.tar.gz'`,
      );
    }
    if (st.size > MAX_MANIFEST_BYTES) {
      throw new Hfi1SdmaError(
        'E_PARSE',
        `${file}: ${MANIFEST} is ${st.size} bytes, more than hfi1-sdma ever writes (${MAX_MANIFEST_BYTES}); it is not a snapshot written by 'hfi1-sdma snapshot'`,
      );
    }
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(join(tree, MANIFEST), 'utf8'));
    } catch (e) {
      throw new Hfi1SdmaError(
        'E_PARSE',
        `${file}: ${MANIFEST} is not valid JSON (${(e as Error).message}); the snapshot is damaged`,
        {
          cause: e,
        },
      );
    }
    const plan = checkManifest(raw, file);
    rebuild(b, plan);
    const instants = plan.instants.map((i) => ({ sysroot: i.dir === '' ? tree : join(tree, i.dir), timeMs: i.timeMs }));
    return { archive: file, tree, plan, instants, close };
  } catch (e) {
    await close();
    throw e;
  }
}
