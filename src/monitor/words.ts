// How the monitor's findings name things: a waiter, a duration that may be a lower bound, a port's link.
import type { LinkState, PortLink, QpOwner, Waiter } from '../backend.js';

/** Who a waiter is: `QP 0x10a RTS`, `pid 4242 mpi_app`, `ib0 txq 3`. */
export function whoText(w: Waiter): string {
  switch (w.kind) {
    case 'qp':
      return `QP 0x${w.qpn.toString(16)} ${w.qpState ?? '?'}`;
    case 'psm':
      return `pid ${w.pid}${w.command ? ` ${w.command}` : ''}`;
    case 'ipoib':
      return `${w.netdev ?? '?'} txq ${w.txq ?? '?'}`;
  }
}

/** Whose a QP is, shortly: `pid 30003 verbs_rank_3, user hpcuser`, `a kernel QP (ib_core)`, `owner not known`. */
export function ownerText(o: QpOwner | undefined): string {
  if (!o) return 'owner not known';
  if (o.pid === null) {
    if (o.note?.startsWith('a kernel QP')) return `a kernel QP${o.command ? ` (${o.command})` : ''}`;
    return 'owner not known';
  }
  return `pid ${o.pid}${o.command ? ` ${o.command}` : ''}${o.user ? `, user ${o.user}` : ''}`;
}

/** Who a waiter is, with its QP's owner where known: `QP 0x10a RTS (pid 30003 verbs_rank_3, user hpcuser)`. */
export function whoWithOwner(w: Waiter, owners: readonly QpOwner[]): string {
  if (w.kind !== 'qp') return whoText(w);
  const o = owners.find((x) => x.qpn === w.qpn);
  return o ? `${whoText(w)} (${ownerText(o)})` : whoText(w);
}

/** A duration as findings say it: `850 ms`, `12.3 s`, `4 min 05 s`, `2 h 07 min`. */
export function durationText(ms: number): string {
  const v = Math.max(0, ms);
  if (v < 1000) return `${Math.round(v)} ms`;
  if (v < 60_000) return `${(v / 1000).toFixed(1)} s`;
  const s = Math.floor(v / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
  return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
}

/** A duration that began before the first sample showing it is a lower bound: `≥ 14.0 s`. */
export function ageText(ms: number, atLeast: boolean): string {
  return `${atLeast ? '≥ ' : ''}${durationText(ms)}`;
}

/** `DOWN (Polling)`: the logical state and, where known, the physical one; `unknown` when neither is. */
export function linkStateText(l: LinkState): string {
  if (!l.state) return l.physState ?? 'unknown';
  return `${l.state}${l.physState ? ` (${l.physState})` : ''}`;
}

/** `port 1 DOWN (Disabled), port 2 ACTIVE (LinkUp)`. */
export function portsText(ports: readonly PortLink[]): string {
  return ports.map((p) => `port ${p.port} ${linkStateText(p)}`).join(', ');
}

/** Whether a port passes traffic (logical state ACTIVE). */
export function portActive(p: LinkState | null | undefined): boolean {
  return p?.state === 'ACTIVE';
}
