// An opacapture (opa-ff's opacapture.sh: the tarball customers send to support, and each host's unpacked upload
// of opacaptureall) read as a snapshot of one instant. Its sysroot lies under `tmp/capture<PID>/`: the hfi1
// debugfs (`sys/kernel/debug/hfi1`), `sys/class/infiniband` with each unit's device link kept as a link, `sys/module`,
// `proc/interrupts`, and beside them `lspci`, `os_version` (uname -a), `capture_info` and `dmesg`. Only what the
// live reader reads is taken, into a private temporary tree, where the unit's device link and its PCI identity
// (from lspci's config space dump) are rebuilt. What such a capture lacks is said once per unit.
import {
  copyFileSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import type { SourceWarning } from '../backend.js';
import { removeOnExit } from '../cleanup.js';
import { Hfi1SdmaError } from '../errors.js';
import { chipOfPciId } from '../hw/flavour.js';
import { extractSnapshot } from './extract.js';
import { BDF, FORMAT_V2, KMSG_ENTRY, type ManifestUnit, type ManifestV2, UNIT_NAME } from './format.js';
import { parseCaptureDate, parseLspci, parseUname } from './opacapture-parse.js';
import type { OpenedSnapshot } from './open.js';

/** The capture's own directory in its tarball (and in an opacaptureall upload). */
const CAPTURE_DIR = /^tmp\/capture[0-9]{1,10}$/;

/** The files under the capture directory the reader needs; the rest (rpm lists, /proc/<pid>/stack, logs) is left. */
const WANTED = [
  /^capture_info$/,
  /^os_version$/,
  /^lspci$/,
  /^dmesg$/,
  /^sys\/class\/infiniband(?:_verbs)?(?:\/|$)/,
  /^sys\/kernel\/debug\/hfi1(?:\/|$)/,
  /^sys\/module\/hfi[12](?:\/|$)/,
  /^proc\/(?:interrupts|cmdline|uptime)$/,
];

/** The tarball's stream may be large (FM debuginfo, logs); what is unpacked is only the files above. */
const OPACAPTURE_LIMITS = { maxBytes: 8 * 1024 * 1024 * 1024, maxEntries: 50_000 };

/** What an opacapture does not hold, said once per unit. */
export const OPACAPTURE_LACKS =
  'an opacapture is one instant (no stall or strand can be judged from it: health answers UNKNOWN), holds no BAR registers (resource0 is not copied) and copies only the hfi1 debugfs (an hfi2 unit is read from sysfs alone)';

/** The key of that warning, so that every reader says it once per unit. */
export const OPACAPTURE_WARNING_KEY = 'opacapture:lacks';

/** The directories on the way to the wanted ones. */
const ON_THE_WAY = new Set(['sys', 'sys/class', 'sys/kernel', 'sys/kernel/debug', 'sys/module', 'proc']);

function wanted(rel: string): boolean {
  return WANTED.some((re) => re.test(rel));
}

/** `tmp/capture123/sys/...` → `sys/...` when it lies under a capture directory, else null. */
function underCapture(name: string): string | null {
  const m = /^(tmp\/capture[0-9]{1,10})(?:\/(.*))?$/.exec(name);
  return m ? (m[2] ?? '') : null;
}

/** Whether a directory is an unpacked opacapture (it holds tmp/capture<PID>/capture_info). */
export function captureRootOf(dir: string): string | null {
  let names: string[];
  try {
    names = readdirSync(join(dir, 'tmp'));
  } catch {
    return null;
  }
  const hit = names.filter((n) => CAPTURE_DIR.test(`tmp/${n}`)).sort()[0];
  return hit && lstatSync(join(dir, 'tmp', hit, 'capture_info'), { throwIfNoEntry: false })?.isFile()
    ? join(dir, 'tmp', hit)
    : null;
}

/** Copy the wanted files of an unpacked capture directory into `dest`, noting its links; never follows one. */
function copyWanted(root: string, dest: string, links: Map<string, string>): void {
  const walk = (rel: string, depth: number) => {
    if (depth > 16) return;
    const at = rel === '' ? root : join(root, rel);
    for (const name of readdirSync(at)) {
      const r = rel === '' ? name : `${rel}/${name}`;
      const st = lstatSync(join(at, name));
      if (st.isSymbolicLink()) {
        if (wanted(r)) links.set(r, readlinkSync(join(at, name)));
      } else if (st.isDirectory()) {
        if (wanted(r) || ON_THE_WAY.has(r)) walk(r, depth + 1);
      } else if (st.isFile() && wanted(r) && st.size <= 256 * 1024 * 1024) {
        mkdirSync(dirname(join(dest, r)), { recursive: true, mode: 0o700 });
        copyFileSync(join(at, name), join(dest, r));
      }
    }
  };
  walk('', 0);
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** Rebuild what the live reader needs and the capture did not keep: device links, PCI identity, hostname, release. */
function rebuild(
  root: string,
  links: Map<string, string>,
  source: string,
): { units: ManifestUnit[]; host: string | null; timeMs: number | null } {
  const uname = parseUname(readText(join(root, 'os_version')));
  const pci = parseLspci(readText(join(root, 'lspci')));
  const units: ManifestUnit[] = [];
  let names: string[] = [];
  try {
    names = readdirSync(join(root, 'sys/class/infiniband')).filter((n) => UNIT_NAME.test(n));
  } catch {
    // no unit: the reader says so
  }
  for (const name of names.sort()) {
    const target = links.get(`sys/class/infiniband/${name}/device`) ?? '';
    let bdf = basename(target);
    const omniPath = pci.filter((d) => chipOfPciId({ vendor: d.vendor, device: d.device, subsystemDevice: null }) !== null);
    if (!BDF.test(bdf)) bdf = omniPath[units.length]?.bdf ?? '';
    const id = pci.find((d) => d.bdf === bdf);
    if (bdf !== '' && id) {
      const dir = join(root, 'sys/bus/pci/devices', bdf);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeFileSync(join(dir, 'vendor'), `0x${id.vendor.toString(16).padStart(4, '0')}\n`);
      writeFileSync(join(dir, 'device'), `0x${id.device.toString(16).padStart(4, '0')}\n`);
      const link = join(root, 'sys/class/infiniband', name, 'device');
      if (!lstatSync(link, { throwIfNoEntry: false })) symlinkSync(`../../../bus/pci/devices/${bdf}`, link);
    }
    units.push({
      name,
      pci: bdf,
      ...(id && chipOfPciId({ vendor: id.vendor, device: id.device, subsystemDevice: null }) === 'jkr'
        ? { chip: 'jkr' as const }
        : {}),
    });
  }
  mkdirSync(join(root, 'proc/sys/kernel'), { recursive: true, mode: 0o700 });
  if (uname.host) writeFileSync(join(root, 'proc/sys/kernel/hostname'), `${uname.host}\n`);
  if (uname.release) writeFileSync(join(root, 'proc/sys/kernel/osrelease'), `${uname.release}\n`);
  // dmesg -T, kept as the snapshot's kernel log.
  if (lstatSync(join(root, 'dmesg'), { throwIfNoEntry: false })?.isFile()) linkSync(join(root, 'dmesg'), join(root, KMSG_ENTRY));
  if (units.length === 0) {
    throw new Hfi1SdmaError(
      'E_NO_DEVICE',
      `${source}: an opacapture with no hfi1 or hfi2 unit under sys/class/infiniband: the host's driver was not loaded when it was taken`,
    );
  }
  return { units, host: uname.host, timeMs: parseCaptureDate(readText(join(root, 'capture_info'))) };
}

/** The warning every unit of an opacapture carries. */
export function opacaptureWarning(source: string): SourceWarning {
  return { source: 'sysfs', path: source, key: OPACAPTURE_WARNING_KEY, message: `${source}: ${OPACAPTURE_LACKS}` };
}

/** Open an opacapture tarball (`tar` set) or an unpacked one (its directory) as a snapshot of one instant. */
export async function openOpacapture(
  source: string,
  from: { tar: string } | { dir: string },
  tmpDir = tmpdir(),
): Promise<OpenedSnapshot> {
  const base = mkdtempSync(join(tmpDir, 'hfi1-sdma-opacapture-'));
  const forget = removeOnExit(base);
  const close = async () => {
    await rm(base, { recursive: true, force: true });
    forget();
  };
  try {
    const links = new Map<string, string>();
    let root: string;
    if ('tar' in from) {
      const tree = join(base, 'tree');
      mkdirSync(tree, { mode: 0o700 });
      let captureDir: string | null = null;
      await extractSnapshot(from.tar, source, tree, OPACAPTURE_LIMITS, {
        what: 'an opacapture tarball',
        select: (name) => {
          const rel = underCapture(name);
          return rel !== null && (rel === '' || wanted(rel));
        },
        onLink: (name, target) => {
          const rel = underCapture(name);
          if (rel !== null) links.set(rel, target);
        },
      });
      const dirs = readdirSync(join(tree, 'tmp'), { withFileTypes: true }).filter(
        (d) => d.isDirectory() && CAPTURE_DIR.test(`tmp/${d.name}`),
      );
      captureDir = dirs[0] ? join(tree, 'tmp', dirs[0].name) : null;
      if (!captureDir)
        throw new Hfi1SdmaError('E_PARSE', `${source}: holds no tmp/capture<PID>/ directory: it is not an opacapture`);
      root = captureDir;
    } else {
      const captureDir = captureRootOf(from.dir);
      if (!captureDir)
        throw new Hfi1SdmaError('E_PARSE', `${source}: holds no tmp/capture<PID>/capture_info: it is not an unpacked opacapture`);
      root = join(base, 'tree');
      mkdirSync(root, { mode: 0o700 });
      copyWanted(captureDir, root, links);
    }
    const { units, host, timeMs } = rebuild(root, links, source);
    const time = timeMs === null ? '' : new Date(timeMs).toISOString();
    const manifest: ManifestV2 = {
      format: FORMAT_V2,
      time,
      host: host ?? '',
      toolVersion: 'opacapture',
      sysroot: '/',
      intervalMs: 0,
      units,
      once: [],
      instants: [{ timeMs: 0, time, sources: [{ path: KMSG_ENTRY, captured: true }], barBlocks: [] }],
    };
    const plan = {
      manifest,
      units,
      once: [],
      instants: [{ dir: '', timeMs: 0, sources: manifest.instants[0]?.sources ?? [], barBlocks: [] }],
    };
    return { archive: source, tree: root, plan, instants: [{ sysroot: root, timeMs: 0 }], close };
  } catch (e) {
    await close();
    throw e;
  }
}
