// A capture that can leave the site (`snapshot --redact`): host names, user names, process names, addresses in the
// kernel log and serial numbers masked as the files are written, each by the same mask every time. The masks are
// kept in a map on this host (as sos clean keeps its own), so the same node, user or process masks the same way
// across captures and a site can compare what it sends; the map never leaves the host.
//
// What is masked where. Every text file: each name known so far (this host's names, the serials, and the users and
// processes the capture recorded) wherever it stands as a word. By structure: a process's `comm` and its status
// `Name:`, the recorded QP owners' command and user, the adapters' `serial` files, the kernel log's `Comm:` fields.
// In the kernel log and the kernel's command line: IPv4 and IPv6 addresses, MAC and IPoIB hardware addresses (a PCI
// address, two colons, is left as it is). The binary files (counter arrays, the CSR block) hold no text.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { dirname, join } from 'node:path';

export { defaultRedactMapPath } from './redact-map-path.js';

import { Hfi1SdmaError } from '../errors.js';
import { RECORDED_OWNERS } from '../hw/qp-owners.js';
import { MANIFEST, type ManifestV2 } from './format.js';
import type { ArchiveWriter } from './output.js';

export const REDACT_MAP_FORMAT = 'hfi1-sdma-redact-map/1';

/** The kinds of string masked, each with its own numbering. */
export const REDACT_KINDS = ['hosts', 'users', 'commands', 'serials', 'ipv4', 'ipv6', 'hwaddrs'] as const;
export type RedactKind = (typeof REDACT_KINDS)[number];

/** The map as kept on disk: each kind, real string to mask. */
export type RedactMap = Record<RedactKind, Record<string, string>>;

function emptyMap(): RedactMap {
  return { hosts: {}, users: {}, commands: {}, serials: {}, ipv4: {}, ipv6: {}, hwaddrs: {} };
}

/** Users whose names say nothing about the site (system accounts): left as they are. */
const SYSTEM_USERS = new Set(['root', 'nobody']);

/** Files that are binary in a capture (native u64 arrays, the CSR block). */
function binary(rel: string): boolean {
  return (
    /(^|\/)(counters|port[1-9]counters)$/.test(rel) ||
    rel.endsWith('.sdma-csr') ||
    (/\/hw_counters\//.test(rel) === false && /\/resource0/.test(rel))
  );
}

/** Escape a string for a regular expression. */
function escaped(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** IPv4: four octets. */
const IPV4 = /(?<![\w.])(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}(?![\w.])/g;
/** A run of hex groups joined by colons (IPv6, MAC, IPoIB hardware address, GID) with at least three colons or `::`. */
const COLON_HEX = /(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,}[0-9A-Fa-f]{0,4}(?:\.\d+)?(?![\w:])/g;

/** The masks of one site, and what one capture masked. */
export class Redactor {
  private readonly map: RedactMap;
  private changed = false;
  /** The literal strings masked in every text file, longest first (rebuilt when one is added). */
  private literals: [string, string][] | null = null;
  private literalRe: RegExp | null = null;

  private constructor(
    readonly path: string,
    map: RedactMap,
  ) {
    this.map = map;
  }

  /** Open the map at `path` (made when missing). E_CANT_CREATE when it cannot be kept, E_PARSE when it is not a map. */
  static open(path: string): Redactor {
    let map = emptyMap();
    let text: string | null = null;
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') {
        throw new Hfi1SdmaError(
          'E_CANT_CREATE',
          `--redact-map ${path}: cannot read it (${code ?? e}): name a file you can read and write`,
          { cause: e },
        );
      }
    }
    if (text !== null) {
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch (e) {
        throw new Hfi1SdmaError(
          'E_PARSE',
          `${path}: not valid JSON (${(e as Error).message}); it is not a redaction map hfi1-sdma wrote`,
          { cause: e },
        );
      }
      map = checkMap(raw, path);
    }
    const r = new Redactor(path, map);
    r.host(hostname());
    try {
      r.user(userInfo().username); // whoever captures
    } catch {
      // no name for this uid (a container without a passwd entry): nothing to mask
    }
    r.save(); // made (or rewritten) before the capture: a map that cannot be kept is said before anything is written
    return r;
  }

  /** The mask of `real` of `kind`, made on first sight. */
  private mask(kind: RedactKind, real: string, make: (n: number) => string): string {
    const m = this.map[kind];
    const known = m[real];
    if (known !== undefined) return known;
    const masked = make(Object.keys(m).length + 1);
    m[real] = masked;
    this.changed = true;
    if (kind === 'hosts' || kind === 'users' || kind === 'commands' || kind === 'serials') this.literals = null;
    return masked;
  }

  /** A host name (and its short form) masked. */
  host(name: string): string {
    if (name === '') return name;
    const short = name.split('.')[0] ?? name;
    const masked = this.mask('hosts', short, (n) => `host${n}`);
    return name === short ? masked : this.mask('hosts', name, () => `${masked}.site`);
  }

  user(name: string): string {
    return name === '' || SYSTEM_USERS.has(name) ? name : this.mask('users', name, (n) => `user${n}`);
  }

  command(name: string): string {
    return name === '' ? name : this.mask('commands', name, (n) => `proc${n}`);
  }

  serial(text: string): string {
    return text === '' ? text : this.mask('serials', text, (n) => `serial${n}`);
  }

  private ipv4(a: string): string {
    return this.mask('ipv4', a, (n) => `198.18.${(n >> 8) & 0xff}.${n & 0xff}`);
  }

  /** A colon-hex run: a hardware address (two-digit groups) keeps its length; an IPv6 address its form. */
  private colonHex(s: string): string {
    const groups = s.split(':');
    if (groups.length === 3 && !s.includes('::')) return s; // a PCI address or a time: not an address
    if (groups.every((g) => /^[0-9A-Fa-f]{2}$/.test(g))) {
      return this.mask('hwaddrs', s.toLowerCase(), (n) => {
        const tail = n
          .toString(16)
          .padStart(groups.length * 2 - 2, '0')
          .slice(-(groups.length * 2 - 2));
        return ['02', ...(tail.match(/../g) ?? [])].join(':');
      });
    }
    if (groups.length < 4 && !s.includes('::')) return s;
    return this.mask('ipv6', s.toLowerCase(), (n) => `2001:db8::${n.toString(16)}`);
  }

  /** Every known name masked where it stands as a word. */
  literal(text: string): string {
    if (this.literals === null) {
      const pairs: [string, string][] = [];
      for (const kind of ['hosts', 'users', 'commands', 'serials'] as const) {
        for (const [real, masked] of Object.entries(this.map[kind])) if (real.length >= 2) pairs.push([real, masked]);
      }
      pairs.sort((a, b) => b[0].length - a[0].length);
      this.literals = pairs;
      this.literalRe =
        pairs.length === 0 ? null : new RegExp(`(?<![\\w-])(?:${pairs.map(([r]) => escaped(r)).join('|')})(?![\\w-])`, 'g');
    }
    const re = this.literalRe;
    if (re === null) return text;
    const by = new Map(this.literals);
    return text.replace(re, (m) => by.get(m) ?? m);
  }

  /** The addresses in free text (the kernel log, the kernel's command line). */
  addresses(text: string): string {
    return text.replace(IPV4, (a) => this.ipv4(a)).replace(COLON_HEX, (s) => this.colonHex(s));
  }

  /**
   * Learn the names one file of the capture holds where their place says what they are (a task's comm and status
   * `Name:`, an adapter's serial, the recorded owners' commands and users, the kernel log's `Comm:`), so that the
   * masking pass finds them in every file, the files captured before this one too.
   */
  learn(rel: string, data: Buffer): void {
    if (!binary(rel)) this.structured(rel, data.toString('latin1'));
  }

  /** One file of the capture (`rel`, sysroot-relative or an archive entry) as it goes into the archive. */
  file(rel: string, data: Buffer): Buffer {
    if (binary(rel)) return data;
    // latin1 both ways: every byte comes back as it was, but for the masks.
    let text = this.structured(rel, data.toString('latin1'));
    if (/(^|\/)kmsg-hfi1\.txt$/.test(rel) || /(^|\/)proc\/cmdline$/.test(rel)) text = this.addresses(text);
    return Buffer.from(this.literal(text), 'latin1');
  }

  /** `text` with the names its place identifies masked (each learnt on the way). */
  private structured(rel: string, text: string): string {
    if (/(^|\/)proc\/\d+\/(task\/\d+\/)?comm$/.test(rel)) return `${this.command(text.replace(/\n$/, ''))}\n`;
    if (/(^|\/)proc\/\d+\/(task\/\d+\/)?status$/.test(rel))
      return text.replace(/^(Name:\t)(.*)$/m, (_m, k: string, v: string) => k + this.command(v));
    if (/(^|\/)sys\/class\/infiniband\/[^/]+\/serial$/.test(rel)) return `${this.serial(text.trim())}\n`;
    if (rel.endsWith(RECORDED_OWNERS)) return this.owners(text);
    if (/(^|\/)kmsg-hfi1\.txt$/.test(rel))
      return text.replace(/(Comm: )(\S+)/g, (_m, k: string, v: string) => k + this.command(v));
    return text;
  }

  /** The real strings masked so far, of every kind (what a redacted capture must not hold). */
  maskedStrings(): string[] {
    return REDACT_KINDS.flatMap((k) => Object.keys(this.map[k]));
  }

  /** The recorded QP owners with their commands and users masked. */
  private owners(text: string): string {
    try {
      const o = JSON.parse(text) as { owners?: { command?: unknown; user?: unknown }[] };
      for (const x of o.owners ?? []) {
        if (typeof x.command === 'string') x.command = this.command(x.command);
        if (typeof x.user === 'string') x.user = this.user(x.user);
      }
      return `${JSON.stringify(o, null, 1)}\n`;
    } catch {
      return text; // not the record's form: the literal masks still apply
    }
  }

  /** The capture's manifest, redacted: its host masked, the names in its paths and reasons masked, marked redacted. */
  manifest(data: Buffer): Buffer {
    const m = JSON.parse(data.toString('utf8')) as ManifestV2;
    m.host = this.host(m.host);
    m.sysroot = this.literal(m.sysroot);
    m.redacted = true;
    for (const i of m.instants) {
      for (const src of i.sources) {
        if (src.reason !== undefined) src.reason = this.literal(src.reason);
        if (src.note !== undefined) src.note = this.literal(src.note);
      }
    }
    return Buffer.from(`${JSON.stringify(m, null, 2)}\n`);
  }

  /** Keep the map (0600, replaced whole) when something was added since it was read. */
  save(): void {
    if (!this.changed && this.literals !== null) return;
    const dir = dirname(this.path);
    const tmp = join(dir, `.redact-map.${process.pid}.tmp`);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeFileSync(tmp, `${JSON.stringify({ format: REDACT_MAP_FORMAT, ...this.map }, null, 1)}\n`, { mode: 0o600 });
      renameSync(tmp, this.path);
      this.changed = false;
    } catch (e) {
      rmSync(tmp, { force: true });
      const code = (e as NodeJS.ErrnoException).code ?? String(e);
      throw new Hfi1SdmaError(
        'E_CANT_CREATE',
        `--redact-map ${this.path}: cannot keep the map there (${code}): name a file in a directory you can write (--redact-map FILE, or HFI1_SDMA_REDACT_MAP)`,
        { cause: e },
      );
    }
  }
}

/** A map read from disk, checked. */
function checkMap(raw: unknown, path: string): RedactMap {
  const bad = (what: string): never => {
    throw new Hfi1SdmaError(
      'E_PARSE',
      `${path}: ${what}; it is not a redaction map hfi1-sdma wrote (move it away to start a new one)`,
    );
  };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return bad('not an object');
  const o = raw as Record<string, unknown>;
  if (o.format !== REDACT_MAP_FORMAT) return bad(`format must be ${REDACT_MAP_FORMAT}`);
  const map = emptyMap();
  for (const kind of REDACT_KINDS) {
    const v = o[kind];
    if (v === undefined) continue;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return bad(`${kind} must be an object`);
    for (const [k, x] of Object.entries(v)) {
      if (typeof x !== 'string') return bad(`${kind}.${k} must be a string`);
      map[kind][k] = x;
    }
  }
  return map;
}

/** One entry of an archive held back until every name is known. */
interface HeldEntry {
  readonly path: string;
  readonly data: Buffer;
  readonly mtime: Date;
}

/**
 * An archive written redacted: its entries are held until the capture ends, so that a name learnt late (a process
 * seen at the last instant) is masked in every file, then written masked through `out`, and the map kept.
 */
export class RedactingArchive implements Pick<ArchiveWriter, 'addFile' | 'commit' | 'abort'> {
  private readonly held: HeldEntry[] = [];

  constructor(
    private readonly out: ArchiveWriter,
    private readonly redactor: Redactor,
  ) {}

  async addFile(path: string, data: Uint8Array, mtime: Date): Promise<void> {
    this.held.push({ path, data: Buffer.from(data), mtime });
  }

  async commit(): Promise<void> {
    const r = this.redactor;
    for (const e of this.held) if (e.path !== MANIFEST) r.learn(e.path, e.data);
    for (const e of this.held)
      await this.out.addFile(e.path, e.path === MANIFEST ? r.manifest(e.data) : r.file(e.path, e.data), e.mtime);
    r.save(); // kept before the archive takes its name: a capture is never redacted by a map that was not kept
    await this.out.commit();
  }

  abort(): Promise<void> {
    return this.out.abort();
  }
}
