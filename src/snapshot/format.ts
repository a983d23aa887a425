// The snapshot format: the manifest stored as snapshot.json, where each file sits in the archive,
// and the limits a snapshot must stay within. Types and small pure functions only.
import { hasControls } from '../hw/parse/text.js';
import { sdmaWindowFor } from '../hw/regs.js';
import { chipModel } from '../progress/chip.js';
import { SDMA_CSR_BLOCK_SIZE, SDMA_CSR_BLOCK_START } from '../progress/constants.js';

export const MANIFEST = 'snapshot.json';
export const FORMAT_V1 = 'hfi1-sdma-snapshot/1';
export const FORMAT_V2 = 'hfi1-sdma-snapshot/2';

/** One source file tried at one instant, sysroot-relative, with why it is missing. */
export interface SourceRecord {
  path: string;
  captured: boolean;
  reason?: string;
  /** For a captured file: what was left out of it (the kernel log's oldest lines past its cap). */
  note?: string;
}

/** Where a snapshot keeps the kernel log's hfi1 lines (dmesg form), beside the first instant's tree. */
export const KMSG_ENTRY = 'kmsg-hfi1.txt';

/** The kernel's uptime file, captured at every instant: it places the log's timestamps on the instants' time axis. */
export const UPTIME_FILE = 'proc/uptime';

/** The most the context files (identity, link, module parameters, qp_stats) may add to one snapshot. */
export const CONTEXT_CAP_BYTES = 64 * 1024 * 1024;

/** The SDMA CSR block of one unit's BAR0: the small file holding it and where it sits in resource0. */
export interface BarBlock {
  file: string;
  resource0: string;
  offset: number;
  length: number;
}

/** A unit as the manifest names it. */
export interface ManifestUnit {
  name: string;
  pci: string;
  /** `jkr` for a CN5000 (its BAR block and 128 MiB resource0 are laid out for JKR); absent for WFR. */
  chip?: 'jkr';
}

/** One recorded instant of a version-2 snapshot; its files sit under `instants/<index>/`. */
export interface Instant {
  /** ms from the first instant (0 for the first). */
  timeMs: number;
  time: string;
  sources: SourceRecord[];
  barBlocks: BarBlock[];
}

/** Version 1: one instant, its files at the archive's root. */
export interface ManifestV1 {
  format: typeof FORMAT_V1;
  time: string;
  host: string;
  toolVersion: string;
  sysroot: string;
  units: ManifestUnit[];
  sources: SourceRecord[];
  barBlocks: BarBlock[];
}

/** Version 2: N instants; files that never change (`once`) are stored with the first only. */
export interface ManifestV2 {
  format: typeof FORMAT_V2;
  time: string;
  host: string;
  toolVersion: string;
  sysroot: string;
  intervalMs: number;
  units: ManifestUnit[];
  /** Sysroot-relative files captured at the first instant only and the same at every instant. */
  once: string[];
  instants: Instant[];
  /** Captured from the emulator (--backend emu, or an emulated sysroot): not an adapter. Absent in older snapshots. */
  emulated?: boolean;
  /** Host names, users, process names, addresses and serials were masked (`snapshot --redact`). Absent otherwise. */
  redacted?: boolean;
}

export type SnapshotManifest = ManifestV1 | ManifestV2;

/** Bounds on what a snapshot may hold; reading refuses more, capture never writes more. */
export interface SnapshotLimits {
  /** Bytes of the uncompressed tar stream (headers included). */
  maxBytes: number;
  /** Archive entries (files and directories). */
  maxEntries: number;
  /** Bytes of the compressed archive on disk (a capture directory's room); unbounded when absent. */
  maxStoredBytes?: number;
}

export const DEFAULT_LIMITS: Readonly<SnapshotLimits> = { maxBytes: 1024 * 1024 * 1024, maxEntries: 50_000 };

/** A byte count as the limits are stated: `1024 MiB`, `262144 bytes`. */
export function limitText(bytes: number): string {
  const MiB = 1024 * 1024;
  return bytes >= MiB && bytes % MiB === 0 ? `${bytes / MiB} MiB` : `${bytes} bytes`;
}

/** The most instants a snapshot records (`snapshot --samples`). */
export const MAX_SAMPLES = 100;
/** Bounds of `snapshot --interval-ms`. */
export const MIN_INTERVAL_MS = 10;
export const MAX_INTERVAL_MS = 600_000;
/** The largest single source file captured (a full sdes of 16 rings of 32768 is about 40 MB). */
export const MAX_SOURCE_BYTES = 64 * 1024 * 1024;

/** Unit names and PCI addresses as the kernel spells them; nothing else becomes a path. */
export const UNIT_NAME = /^hfi[12]_[0-9]{1,3}$/;
export const BDF = /^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$/;

/** Where instant `index` of a version-2 snapshot sits in the archive. */
export function instantDir(index: number): string {
  return `instants/${index}`;
}

/** The sysroot-relative PCI directory of a unit (its device link's target when the address is known). */
export function pciDirOf(u: ManifestUnit): string {
  return u.pci === '' ? `sys/class/infiniband/${u.name}/device` : `sys/bus/pci/devices/${u.pci}`;
}

/** The BAR block record of a unit, as capture writes it and as reading requires it. */
export function barBlockOf(u: ManifestUnit): BarBlock {
  const resource0 = `${pciDirOf(u)}/resource0`;
  if (u.chip === 'jkr') {
    // The JKR window: the engines' blocks at 0x1A00000 up to the page of SEND_DMA_CFG_MEMORY (regs.ts).
    const w = sdmaWindowFor(chipModel('jkr'));
    return { file: `${resource0}.sdma-csr`, resource0, offset: w.start, length: w.length };
  }
  return { file: `${resource0}.sdma-csr`, resource0, offset: SDMA_CSR_BLOCK_START, length: SDMA_CSR_BLOCK_SIZE };
}

/** The size of a unit's rebuilt resource0: its chip's BAR0 (64 MiB WFR, 128 MiB JKR). */
export function barBytesOf(u: ManifestUnit): number {
  return chipModel(u.chip ?? 'wfr').bar0Size;
}

/**
 * A relative path that stays inside the tree it is joined to: no absolute path, no empty, `.` or
 * `..` component, no NUL, backslash or control character, bounded length. Returns the reason it is not, or null.
 */
export function unsafePathReason(p: string): string | null {
  if (p.length === 0) return 'is empty';
  if (p.length > 1024) return 'is longer than 1024 characters';
  if (p.startsWith('/')) return 'is an absolute path';
  if (/[\0\\]/.test(p)) return 'holds a NUL or backslash';
  if (hasControls(p)) return 'holds a control character';
  const parts = p.split('/');
  if (parts.length > 32) return 'is nested more than 32 deep';
  if (parts.some((c) => c === '..')) return 'climbs out with ..';
  if (parts.some((c) => c === '' || c === '.')) return 'has an empty or . component';
  if (parts.some((c) => c.length > 255)) return 'has a component longer than 255 characters';
  return null;
}

/** The most kernel log text a snapshot's entry may hold to be read (capture keeps 4 MiB). */
export const KMSG_READ_CAP_BYTES = 8 << 20;

/** `/proc/uptime`'s first field (seconds since boot), or null when the text is not that. Pure. */
export function parseUptime(text: string): number | null {
  const m = /^(\d{1,12}(?:\.\d{1,9})?)\s/.exec(text);
  return m ? Number(m[1]) : null;
}
