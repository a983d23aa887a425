// Reading every port's counters of a live unit (Unit.portCounters): the driver's own 64-bit counters from debugfs
// portcounter_names + port<N>counters (root), else the same names in sysfs ports/<N>/hw_counters (world-readable),
// then what only the RDMA core's PortCounters view gives per port (ports/<N>/counters: LinkErrorRecovery,
// PortRcvErrors), and that view for anything still missing. Port counters never fail a sample: a file that cannot
// be read leaves its values null, one that is malformed does so with a warning naming it.
//
// Cheap by design (a watch reads them every sample): the names are parsed once and kept until the values no longer
// match them (a driver reload), the hw_counters directory is listed once, only the files whose values are missing
// are read, and the PortCounters files (LinkErrorRecovery, PortRcvErrors: rare events) at most every
// PMA_REFRESH_MS, their last values standing in between.
import { join } from 'node:path';
import type { PortCounters } from '../backend.js';
import { isHfi1SdmaError } from '../errors.js';
import { type HwFs, readdirOrNull, readSource } from './fsio.js';
import { type CounterName, countersByName, hwCounterName, parseCounterNames, parseCounterValues } from './parse/counters.js';
import {
  DRIVER_PORT_COUNTERS,
  driverFileNames,
  emptyPortCounters,
  fromDriverCounters,
  fromPmaCounters,
  pmaFilesWanted,
} from './parse/port-counters.js';
import { portCountersFile, portSysfsDir, type UnitPaths } from './paths.js';
import { isSourceFault, type WarningLog } from './warnings.js';

/** The PortCounters files are read again after this long (ms of the unit's clock); between, their last texts stand. */
export const PMA_REFRESH_MS = 1000;

/** The port counters reader of one unit. */
export class PortCounterReader {
  /** portcounter_names parsed, or null until read (and after values stopped matching it). */
  private names: CounterName[] | null = null;
  /** Each port's hw_counters files by bare name (listed once). */
  private readonly hwFiles = new Map<number, Map<string, string> | null>();
  /** Each port's PortCounters texts as last read, and when (ms). */
  private readonly pma = new Map<number, { atMs: number; files: string; texts: Map<string, string> }>();

  constructor(
    private readonly fs: HwFs,
    private readonly paths: UnitPaths,
    private readonly log: WarningLog,
    /** debugfs port counters can be read here (root, debugfs mounted). */
    private readonly debugfs: boolean,
  ) {}

  /** The counters of every port in `ports`, read at `nowMs` of the unit's clock. */
  async read(ports: readonly number[], nowMs: number): Promise<PortCounters[]> {
    const out: PortCounters[] = [];
    for (const port of ports) out.push(await this.readPort(port, nowMs));
    return out;
  }

  private async readPort(port: number, nowMs: number): Promise<PortCounters> {
    const c = emptyPortCounters(port);
    const byName = (this.debugfs ? await this.fromDebugfs(port) : null) ?? (await this.fromHwCounters(port));
    if (byName) fromDriverCounters(c, byName.values, byName.source);
    const dir = join(portSysfsDir(this.paths, port), 'counters');
    const wanted = pmaFilesWanted(c);
    const last = this.pma.get(port);
    let texts: Map<string, string>;
    if (last && last.files === wanted.join() && nowMs >= last.atMs && nowMs - last.atMs < PMA_REFRESH_MS) texts = last.texts;
    else {
      texts = new Map<string, string>();
      for (const f of wanted) {
        const path = join(dir, f);
        try {
          texts.set(f, Buffer.from(await this.fs.readFile(path, 64)).toString('utf8'));
        } catch {
          // absent (no PMA view, an older kernel), not readable, or not the kernel's file: that value stays unknown
        }
      }
      this.pma.set(port, { atMs: nowMs, files: wanted.join(), texts });
    }
    try {
      fromPmaCounters(c, texts, dir);
    } catch (e) {
      if (!isHfi1SdmaError(e)) throw e;
      this.log.leftOut('portCounters', dir, `portCounters:pma:${port}`, e, "the port's PortCounters values are left out");
    }
    return c;
  }

  /** The driver's counters of `port` from debugfs, or null when they cannot be read (the hw_counters stand in). */
  private async fromDebugfs(port: number): Promise<{ values: Map<string, bigint>; source: 'debugfs' } | null> {
    const file = portCountersFile(this.paths, port);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        this.names ??= parseCounterNames(
          Buffer.from(await readSource(this.fs, this.paths.portCounterNames)).toString('utf8'),
          this.paths.portCounterNames,
        );
        const values = parseCounterValues(await readSource(this.fs, file, 1 << 20), this.names.length, file);
        return { values: countersByName(this.names, values), source: 'debugfs' };
      } catch (e) {
        if (!isHfi1SdmaError(e)) throw e;
        const stale = e.code === 'E_PARSE' && this.names !== null && attempt === 0;
        this.names = null;
        if (stale) continue; // the names may be of an earlier driver load: read them again once
        if (isSourceFault(e)) {
          this.log.leftOut('portCounters', file, `portCounters:debugfs:${port}`, e, 'the port counters come from sysfs instead');
        }
        return null;
      }
    }
    return null;
  }

  /** The driver's counters of `port` from sysfs ports/<N>/hw_counters (only the files the tool uses). */
  private async fromHwCounters(port: number): Promise<{ values: Map<string, bigint>; source: 'hwCounters' } | null> {
    const dir = join(portSysfsDir(this.paths, port), 'hw_counters');
    let files = this.hwFiles.get(port);
    if (files === undefined) {
      const wanted = new Set(driverFileNames());
      const listed = await readdirOrNull(this.fs, dir);
      files = listed === null ? null : new Map(listed.filter((f) => wanted.has(f)).map((f) => [hwCounterName(f), f]));
      this.hwFiles.set(port, files);
    }
    if (files === null || files.size === 0) return null;
    const values = new Map<string, bigint>();
    for (const c of Object.values(DRIVER_PORT_COUNTERS)) {
      const f = c ? files.get(c.name) : undefined;
      if (f === undefined) continue;
      const path = join(dir, f);
      try {
        const text = Buffer.from(await this.fs.readFile(path, 64)).toString('utf8');
        const m = /^(0|[1-9][0-9]{0,19})\n?$/.exec(text);
        if (m) values.set(c?.name as string, BigInt(m[1] as string));
        else
          this.log.add({
            source: 'portCounters',
            path,
            key: `portCounters:hw:${path}`,
            message: `${path}: not one unsigned decimal value; left out`,
          });
      } catch {
        // unreadable now (a reload under way): that value stays unknown
      }
    }
    return { values, source: 'hwCounters' };
  }
}
