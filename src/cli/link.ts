// The port's link and the unit's context as the commands show them: one header phrase for the
// link (`link ACTIVE LinkUp 100 Gb/sec (4X EDR)`), one or two compact lines for the context.
// Nothing is invented: a backend without link() or context shows nothing (or `-`).
import type { LinkState, PortLink, Unit, UnitContext } from '../backend.js';

/** The link of a unit now, or null when the backend does not show it (or reading it failed). */
export async function readLink(unit: Unit): Promise<LinkState | null> {
  if (!unit.link) return null;
  try {
    return await unit.link();
  } catch {
    // a link file that cannot be read is not shown; the engines are what the command is about
    return null;
  }
}

/** The logical state is ACTIVE: the port passes traffic. */
export function linkActive(link: LinkState | null): boolean {
  return link?.state === 'ACTIVE';
}

/** `ACTIVE LinkUp 100 Gb/sec (4X EDR)`, unknown fields left out; null when nothing is known. */
export function linkPhrase(link: LinkState | null): string | null {
  if (!link) return null;
  const parts = [link.state, link.physState, link.rate].filter((p): p is string => p !== null && p !== '');
  return parts.length ? parts.join(' ') : null;
}

/** The link as the header of engines, show and watch say it: `link …`, or '' when unknown. */
export function linkHeader(link: LinkState | null): string {
  const p = linkPhrase(link);
  return p ? `link ${p}` : '';
}

/**
 * Every port as a header says it: `link ACTIVE LinkUp 100 Gb/sec (4X EDR)` for a one-port adapter,
 * `port 1 DOWN Disabled; port 2 ACTIVE LinkUp 100 Gb/sec` for two; '' when none is known.
 */
export function portsHeader(ports: readonly PortLink[]): string {
  const known = ports.filter((p) => linkPhrase(p) !== null);
  if (known.length === 0) return '';
  if (ports.length === 1 && ports[0]?.port === 1) return linkHeader(ports[0] as PortLink);
  return known.map((p) => `port ${p.port} ${linkPhrase(p)}`).join('; ');
}

/** The link the one-port fields of the JSON outputs show: the first ACTIVE port, else port 1, else null. */
export function mainPort(ports: readonly PortLink[]): PortLink | null {
  return ports.find((p) => p.state === 'ACTIVE') ?? ports.find((p) => p.port === 1) ?? ports[0] ?? null;
}

/** The `ports` array of the JSON outputs: `[{ port, state, physState, rate }]`. */
export function portsJson(ports: readonly PortLink[]): PortLink[] {
  return ports.map((p) => ({ port: p.port, state: p.state, physState: p.physState, rate: p.rate }));
}

/** The `link` object of the JSON outputs: `{ state, physState, rate }` or null. */
export function linkJson(link: LinkState | null): LinkState | null {
  return link ? { state: link.state, physState: link.physState, rate: link.rate } : null;
}

/** The context as one or two header lines (each starting with two spaces); '' when there is none. */
export function contextLines(c: UnitContext | undefined): string {
  if (!c) return '';
  const join = (parts: (string | null)[]) => parts.filter((p): p is string => p !== null).join('  ');
  const driver =
    c.driverVersion || c.driverSrcversion
      ? `driver ${[c.driverVersion, c.driverSrcversion ? `(srcversion ${c.driverSrcversion})` : null].filter(Boolean).join(' ')}`
      : null;
  const pciLink =
    c.pciLinkSpeed || c.pciLinkWidth
      ? `pci ${[c.pciLinkSpeed, c.pciLinkWidth ? `x${c.pciLinkWidth.replace(/^x/i, '')}` : null].filter(Boolean).join(' ')}`
      : null;
  const adapter = join([
    c.boardId ? `board ${c.boardId}` : null,
    c.hwRev ? `hw rev ${c.hwRev}` : null,
    c.boardVersion ? `board version ${c.boardVersion}` : null,
    c.serial ? `serial ${c.serial}` : null,
  ]);
  const first = join([driver, c.fwVer ? `firmware ${c.fwVer}` : null, c.kernelRelease ? `kernel ${c.kernelRelease}` : null]);
  const second = join([adapter || null, pciLink]);
  return [first, second]
    .filter((l) => l !== '')
    .map((l) => `  ${l}\n`)
    .join('');
}

/** The `context` object of `engines --json`: every field, null where unknown; null without a context. */
export function contextJson(c: UnitContext | undefined): UnitContext | null {
  if (!c) return null;
  return {
    kernelRelease: c.kernelRelease,
    driverVersion: c.driverVersion,
    driverSrcversion: c.driverSrcversion,
    fwVer: c.fwVer,
    boardId: c.boardId,
    hwRev: c.hwRev,
    serial: c.serial,
    boardVersion: c.boardVersion,
    pciLinkSpeed: c.pciLinkSpeed,
    pciLinkWidth: c.pciLinkWidth,
  };
}
