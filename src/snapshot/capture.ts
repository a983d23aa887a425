// Capturing the sysroot subset of DESIGN.md into a .tar.gz for a bug report, and reading one back.
// Capture only reads the host (the BAR through the read-only window, §f.7); the archive is
// written to a temporary name and renamed, so a failure leaves no half-written file.
import {
  copyFile,
  mkdir,
  mkdtemp,
  open,
  readdir,
  readFile,
  readlink,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import * as tar from 'tar';
import { Hfi1SdmaError } from '../errors.js';
import { openBarWindow } from '../hw/bar.js';
import { discoverUnits } from '../hw/discover.js';
import { SDMA_CSR_BLOCK_SIZE, SDMA_CSR_BLOCK_START } from '../progress/constants.js';

/** The manifest stored as snapshot.json at the archive's root. */
export interface SnapshotManifest {
  format: 'hfi1-sdma-snapshot/1';
  time: string;
  host: string;
  toolVersion: string;
  sysroot: string;
  units: { name: string; pci: string }[];
  /** Every source tried, sysroot-relative, with why it is missing. */
  sources: { path: string; captured: boolean; reason?: string }[];
  /** The SDMA CSR block of each unit's BAR0, as a small file and where it belongs in resource0. */
  barBlocks: { file: string; resource0: string; offset: number; length: number }[];
}

export const MANIFEST = 'snapshot.json';

async function copyInto(sysroot: string, stage: string, rel: string, m: SnapshotManifest): Promise<void> {
  try {
    await mkdir(dirname(join(stage, rel)), { recursive: true });
    await copyFile(join(sysroot, rel), join(stage, rel));
    m.sources.push({ path: rel, captured: true });
  } catch (e) {
    m.sources.push({ path: rel, captured: false, reason: (e as NodeJS.ErrnoException).code ?? String(e) });
  }
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch {
    return out;
  }
  for (const name of entries) {
    const p = join(dir, name);
    const st = await stat(p).catch(() => null);
    if (st?.isFile()) out.push(p);
  }
  return out;
}

/** Capture the sysroot subset into `outFile` (.tar.gz). Returns the manifest. */
export async function captureSnapshot(
  sysroot: string,
  outFile: string,
  meta: { host: string; toolVersion: string; now: Date },
): Promise<SnapshotManifest> {
  const units = await discoverUnits(sysroot);
  if (units.length === 0) {
    throw new Hfi1SdmaError('E_NO_DEVICE', `no hfi1 unit under ${join(sysroot, 'sys/class/infiniband')}: nothing to capture`);
  }
  const stage = await mkdtemp(join(tmpdir(), 'hfi1-sdma-snap-'));
  const m: SnapshotManifest = {
    format: 'hfi1-sdma-snapshot/1',
    time: meta.now.toISOString(),
    host: meta.host,
    toolVersion: meta.toolVersion,
    sysroot,
    units: units.map((u) => ({ name: u.name, pci: u.pci })),
    sources: [],
    barBlocks: [],
  };
  const rel = (p: string) => relative(sysroot, p);
  try {
    for (const u of units) {
      const p = u.paths;
      // sysfs: engine directories, hw_counters, PCI identity, and the device link.
      for (let e = 0; e < u.engineDirs; e++) {
        await copyInto(sysroot, stage, rel(join(p.classDir, `sdma${e}`, 'vl')), m);
        await copyInto(sysroot, stage, rel(join(p.classDir, `sdma${e}`, 'cpu_list')), m);
      }
      for (const f of await filesUnder(p.hwCounters)) await copyInto(sysroot, stage, rel(f), m);
      for (const f of ['vendor', 'device']) await copyInto(sysroot, stage, rel(join(p.pciDir, f)), m);
      if (u.pci) {
        const link = join(stage, rel(p.classDir), 'device');
        await mkdir(dirname(link), { recursive: true });
        await symlink(relative(dirname(link), join(stage, rel(p.pciDir))), link).catch(() => {});
      }
      // debugfs (§g): the files hfi1-sdma reads.
      for (const f of [p.sdes, p.counterNames, p.counters, join(p.debugDir, 'sdma_cpu_list')])
        await copyInto(sysroot, stage, rel(f), m);
      // BAR0: the SDMA CSR block only (§f.2), through the read-only window.
      const r0 = rel(p.resource0);
      try {
        const win = openBarWindow(p.resource0, { start: SDMA_CSR_BLOCK_START, length: SDMA_CSR_BLOCK_SIZE });
        const block = new BigUint64Array(SDMA_CSR_BLOCK_SIZE / 8);
        try {
          for (let i = 0; i < block.length; i++) block[i] = win.read64(SDMA_CSR_BLOCK_START + i * 8);
        } finally {
          win.close();
        }
        const file = `${r0}.sdma-csr`;
        await mkdir(dirname(join(stage, file)), { recursive: true });
        await writeFile(join(stage, file), new Uint8Array(block.buffer));
        m.barBlocks.push({ file, resource0: r0, offset: SDMA_CSR_BLOCK_START, length: SDMA_CSR_BLOCK_SIZE });
        m.sources.push({ path: r0, captured: true });
      } catch (e) {
        m.sources.push({ path: r0, captured: false, reason: (e as Error).message });
      }
    }
    await copyInto(sysroot, stage, 'proc/interrupts', m);
    for (const f of await filesUnder(join(sysroot, 'sys/module/hfi1/parameters'))) await copyInto(sysroot, stage, rel(f), m);
    await writeFile(join(stage, MANIFEST), `${JSON.stringify(m, null, 2)}\n`);
    const tmp = join(dirname(outFile), `.${basename(outFile)}.${process.pid}.tmp`);
    try {
      await tar.c({ gzip: true, file: tmp, cwd: stage, portable: true }, (await readdir(stage)).sort());
      await rename(tmp, outFile);
    } catch (e) {
      await rm(tmp, { force: true });
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EACCES' || code === 'EPERM')
        throw new Hfi1SdmaError('E_PERMISSION', `${outFile}: cannot write here (${code})`, { cause: e });
      if (code === 'ENOENT') throw new Hfi1SdmaError('E_NO_INPUT', `${outFile}: its directory does not exist`, { cause: e });
      throw e;
    }
    return m;
  } finally {
    await rm(stage, { recursive: true, force: true });
  }
}

/** A snapshot unpacked into a temporary sysroot. `close` removes it. */
export interface OpenedSnapshot {
  sysroot: string;
  manifest: SnapshotManifest;
  close(): Promise<void>;
}

/** True when a --sysroot argument names a snapshot archive rather than a directory. */
export function isSnapshotPath(p: string): boolean {
  return /\.(tar\.gz|tgz)$/.test(p);
}

/** Unpack a snapshot, rebuilding each resource0 as a sparse 64 MiB file with its CSR block in place. */
export async function openSnapshot(file: string): Promise<OpenedSnapshot> {
  const st = await stat(file).catch(() => null);
  if (!st?.isFile()) throw new Hfi1SdmaError('E_NO_INPUT', `${file}: no such snapshot file`);
  const dir = await mkdtemp(join(tmpdir(), 'hfi1-sdma-sysroot-'));
  const close = () => rm(dir, { recursive: true, force: true });
  try {
    await tar.x({ file, cwd: dir, strict: true });
    let manifest: SnapshotManifest;
    try {
      manifest = JSON.parse(await readFile(join(dir, MANIFEST), 'utf8')) as SnapshotManifest;
    } catch (e) {
      throw new Hfi1SdmaError(
        'E_PARSE',
        `${file}: not an hfi1-sdma snapshot (no readable ${MANIFEST}); create one with 'hfi1-sdma snapshot -o FILE.tar.gz'`,
        { cause: e },
      );
    }
    if (manifest.format !== 'hfi1-sdma-snapshot/1') {
      throw new Hfi1SdmaError(
        'E_PARSE',
        `${file}: ${MANIFEST} has format ${JSON.stringify(manifest.format)}, expected hfi1-sdma-snapshot/1`,
      );
    }
    for (const b of manifest.barBlocks ?? []) {
      const block = await readFile(join(dir, b.file));
      const fh = await open(join(dir, b.resource0), 'w');
      try {
        await fh.truncate(0x4000000); // BAR0 is 64 MiB (§f.1); the rest stays sparse
        await fh.write(block, 0, Math.min(block.length, b.length), b.offset);
      } finally {
        await fh.close();
      }
    }
    // A device link that did not survive (non-symlink tar extraction) is recreated from the manifest.
    for (const u of manifest.units) {
      const link = join(dir, 'sys/class/infiniband', u.name, 'device');
      if (u.pci && !(await readlink(link).catch(() => null))) {
        await mkdir(dirname(link), { recursive: true });
        await symlink(relative(dirname(link), join(dir, 'sys/bus/pci/devices', u.pci)), link).catch(() => {});
      }
    }
    return { sysroot: dir, manifest, close };
  } catch (e) {
    await close();
    if (e instanceof Hfi1SdmaError) throw e;
    throw new Hfi1SdmaError(
      'E_PARSE',
      `${file}: cannot unpack (${(e as Error).message}); is it a .tar.gz made by 'hfi1-sdma snapshot'?`,
      { cause: e },
    );
  }
}
