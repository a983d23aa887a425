// Reading a snapshot back: unpack it (extract.ts), check its manifest (manifest.ts), then rebuild
// what a sysroot reader needs under each instant's tree: the files stored once, a sparse resource0
// holding the BAR block, and each unit's device link. Every path written here is computed by the
// tool from validated names; files are created exclusively without following links; the links
// are made last. The temporary tree is removed on close, on any failure and on process exit.
import {
  closeSync,
  constants,
  ftruncateSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  realpathSync,
  type Stats,
  symlinkSync,
  writeSync,
} from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Hfi1SdmaError } from '../errors.js';
import { makePrivateTree, type PrivateTree } from '../private-tree.js';
import { BAR0_SIZE } from '../progress/constants.js';
import { extractSnapshot } from './extract.js';
import {
  barBlockOf,
  barBytesOf,
  DEFAULT_LIMITS,
  KMSG_ENTRY,
  KMSG_READ_CAP_BYTES,
  limitText,
  MANIFEST,
  parseUptime,
  type SnapshotLimits,
  UPTIME_FILE,
} from './format.js';
import { ipoibKmsgRecords } from './kmsg.js';
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

/** The span resource0 is written in: the pages of a CSR block that are all zero are left as holes. */
const PAGE = 4096;

class TreeBuilder {
  private readonly realTree: string;
  /** Directories made and checked to resolve inside the tree (no link is made under it before the last step). */
  private readonly placed = new Set<string>();
  /** Bytes copied so far where a file stored once could not be linked into a later instant. */
  private copiedBytes = 0;

  constructor(
    private readonly archive: string,
    private readonly tree: string,
    private readonly limits: SnapshotLimits,
  ) {
    this.realTree = realpathSync(tree);
  }

  bad(rel: string, what: string): Hfi1SdmaError {
    return new Hfi1SdmaError(
      'E_PARSE',
      `${this.archive}:${rel}: ${what}; copy the snapshot again in full, or make a new one with 'hfi1-sdma snapshot -o FILE.tar.gz'`,
    );
  }

  /** Check that the archive holds a regular file at `rel` (never a link: none was extracted); its stat. */
  has(rel: string): Stats {
    const st = lstatSync(join(this.tree, rel), { throwIfNoEntry: false });
    if (!st?.isFile()) throw this.bad(rel, 'listed in snapshot.json but not in the archive');
    return st;
  }

  /** The regular file the archive holds at `rel`, which must be `bytes` long (checked before it is read). */
  file(rel: string, bytes: number): Buffer {
    const st = this.has(rel);
    if (st.size !== bytes) throw this.bad(rel, `is ${st.size} bytes, the SDMA CSR block is ${bytes}`);
    return readFileSync(join(this.tree, rel));
  }

  /** The path of a new file at `rel`, its directory made and checked to resolve inside the tree. */
  private place(rel: string): string {
    const path = join(this.tree, rel);
    const dir = dirname(path);
    if (this.placed.has(dir)) return path;
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (realpathSync(dir) !== join(this.realTree, dirname(rel))) throw this.bad(rel, 'lies outside the snapshot');
    this.placed.add(dir);
    return path;
  }

  /** Create a new file at `rel`, exclusively, in a directory that resolves inside the tree. */
  create(rel: string): number {
    try {
      return openSync(this.place(rel), constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
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

  /**
   * Give a later instant a file stored once (with the first instant): a hard link to it, which
   * costs neither room nor memory however many instants there are. Where the file system has no
   * hard links it is copied a block at a time, and every copy counts against the snapshot's limit
   * on unpacked bytes, so a small archive cannot fill the disk through `once`.
   */
  copy(fromRel: string, toRel: string): void {
    const st = this.has(fromRel);
    const from = join(this.tree, fromRel);
    try {
      linkSync(from, this.place(toRel));
      return;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? '';
      if (!['EPERM', 'EXDEV', 'EMLINK', 'ENOTSUP', 'EOPNOTSUPP'].includes(code)) throw this.writeError(e, toRel);
    }
    this.copiedBytes += st.size;
    if (this.copiedBytes > this.limits.maxBytes) {
      throw new Hfi1SdmaError(
        'E_PARSE',
        `${this.archive}: the files listed in snapshot.json's once, copied into every instant, come to more than ${limitText(this.limits.maxBytes)}, the limit for a snapshot; it is not one written by 'hfi1-sdma snapshot'`,
      );
    }
    const src = openSync(from, constants.O_RDONLY | constants.O_NOFOLLOW);
    const fd = this.create(toRel);
    try {
      const buf = Buffer.allocUnsafe(1 << 20);
      for (let n = readSync(src, buf); n > 0; n = readSync(src, buf)) writeSync(fd, buf, 0, n);
    } catch (e) {
      throw this.writeError(e, toRel);
    } finally {
      closeSync(fd);
      closeSync(src);
    }
  }

  /**
   * A sparse resource0 of the chip's BAR0 size (64 MiB WFR, 128 MiB JKR) holding the SDMA CSR block at its offset;
   * the block's all-zero pages are not written (a hole reads as zeros), so most of the block takes no room.
   */
  resource0(rel: string, block: Buffer, offset: number, sizeBytes = BAR0_SIZE): void {
    const fd = this.create(rel);
    try {
      ftruncateSync(fd, sizeBytes);
      const zero = Buffer.alloc(PAGE);
      // Runs of pages that hold something, each written at once.
      let from = -1;
      for (let at = 0; at < block.length; at += PAGE) {
        const end = Math.min(at + PAGE, block.length);
        const zeros = zero.compare(block, at, end, 0, end - at) === 0;
        if (!zeros && from < 0) from = at;
        else if (zeros && from >= 0) {
          writeSync(fd, block, from, at - from, offset + from);
          from = -1;
        }
      }
      if (from >= 0) writeSync(fd, block, from, block.length - from, offset + from);
    } catch (e) {
      throw this.writeError(e, rel);
    } finally {
      closeSync(fd);
    }
  }

  /** A unit's device link to its PCI directory (relative, inside the tree). */
  deviceLink(rel: string, pci: string): void {
    try {
      symlinkSync(`../../../bus/pci/devices/${pci}`, this.place(rel));
    } catch (e) {
      throw this.writeError(e, rel);
    }
  }

  /** The text of the regular file the archive holds at `rel`, or null when it is not there or larger than `capBytes`. */
  text(rel: string, capBytes: number): string | null {
    const st = lstatSync(join(this.tree, rel), { throwIfNoEntry: false });
    if (!st?.isFile() || st.size > capBytes) return null;
    return readFileSync(join(this.tree, rel), 'utf8');
  }

  /** Write a file the archive does not hold (a stand-in rebuilt from it), counted against the limit on unpacked bytes. */
  write(rel: string, data: Buffer): void {
    this.copiedBytes += data.length;
    if (this.copiedBytes > this.limits.maxBytes) {
      throw new Hfi1SdmaError(
        'E_PARSE',
        `${this.archive}: the files rebuilt from it come to more than ${limitText(this.limits.maxBytes)}, the limit for a snapshot; it is not one written by 'hfi1-sdma snapshot'`,
      );
    }
    const fd = this.create(rel);
    try {
      writeSync(fd, data);
    } catch (e) {
      throw this.writeError(e, rel);
    } finally {
      closeSync(fd);
    }
  }

  /** The names in directory `rel` of the archive (none when it holds no such directory). */
  names(rel: string): string[] {
    try {
      return readdirSync(join(this.tree, rel));
    } catch {
      return [];
    }
  }
}

function prefixed(dir: string, rel: string): string {
  return dir === '' ? rel : `${dir}/${rel}`;
}

/** Where a unit's own files sit: its class and debugfs directories. */
function unitDirs(name: string): string[] {
  return [`sys/class/infiniband/${name}/`, `sys/kernel/debug/hfi1/${name}/`, `sys/kernel/debug/hfi2/${name}/`];
}

/**
 * The manifest's units and the archive's must be the same: a unit listed with no file of its own
 * in the first instant, or a unit directory in the archive that the manifest does not list, means
 * the two disagree (a reader would show a unit that is not there, or miss one that is).
 */
function checkUnits(b: TreeBuilder, plan: SnapshotPlan): void {
  const first = plan.instants[0];
  if (!first) return;
  const captured = first.sources.filter((s) => s.captured).map((s) => s.path);
  for (const [i, u] of plan.units.entries()) {
    const dirs = unitDirs(u.name);
    if (!captured.some((p) => dirs.some((d) => p.startsWith(d)))) {
      throw b.bad(
        MANIFEST,
        `units[${i}] is ${u.name}, but the archive holds no file of it (under sys/class/infiniband/${u.name}/ or its debugfs directory): the manifest and the archive disagree`,
      );
    }
  }
  const classDir = prefixed(first.dir, 'sys/class/infiniband');
  for (const name of b.names(classDir)) {
    if (!plan.units.some((u) => u.name === name)) {
      throw b.bad(`${classDir}/${name}`, 'is a unit that snapshot.json does not list: the manifest and the archive disagree');
    }
  }
}

/**
 * Each instant's stand-in for /dev/kmsg: the IPoIB lines of the captured kernel log logged by that instant's uptime,
 * for the reader of stuck IPoIB queues (the timeout blocks name each queue's engine). Counted against the limit on
 * unpacked bytes, as a copy is.
 */
function ipoibKernelLogs(b: TreeBuilder, plan: SnapshotPlan): void {
  const first = plan.instants[0];
  if (!first?.sources.some((s) => s.path === KMSG_ENTRY && s.captured)) return;
  const log = b.text(prefixed(first.dir, KMSG_ENTRY), KMSG_READ_CAP_BYTES);
  if (log === null) return;
  for (const inst of plan.instants) {
    const up = inst.sources.some((s) => s.path === UPTIME_FILE && s.captured)
      ? b.text(prefixed(inst.dir, UPTIME_FILE), 4096)
      : null;
    const records = ipoibKmsgRecords(log, up === null ? null : parseUptime(up));
    if (records !== '') b.write(prefixed(inst.dir, 'dev/kmsg'), Buffer.from(records));
  }
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
      const data = b.file(prefixed(inst.dir, blk.file), blk.length);
      const unit = plan.units.find((u) => barBlockOf(u).resource0 === blk.resource0);
      b.resource0(prefixed(inst.dir, blk.resource0), data, blk.offset, unit ? barBytesOf(unit) : undefined);
    }
  }
  checkUnits(b, plan);
  ipoibKernelLogs(b, plan);
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
  let priv: PrivateTree;
  try {
    // Created and registered for removal in one turn of the event loop: no signal can fall between them.
    priv = makePrivateTree('hfi1-sdma-snapshot-', base);
  } catch (e) {
    throw new Hfi1SdmaError(
      'E_IO',
      `${file}: cannot make a temporary directory under ${base} (${(e as NodeJS.ErrnoException).code ?? e}): set TMPDIR to a writable directory with room`,
      { cause: e },
    );
  }
  const close = priv.remove;
  const tree = join(priv.root, 'tree');
  try {
    await mkdir(tree, { mode: 0o700 });
    await extractSnapshot(file, file, tree, opts.limits ?? DEFAULT_LIMITS);
    const b = new TreeBuilder(file, tree, opts.limits ?? DEFAULT_LIMITS);
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
