// The cause class of a stall: host, fabric or link, from the counters of the ports the engine sends on over the span
// of the stall. Pure: port views in, a judgement out.
//
// - link: a port the engine sends on lost its link (it was ACTIVE, or its LinkDowned counted a loss, and it is not
//   ACTIVE now), or its LinkDowned or LinkErrorRecovery rose during the stall: packets for that port wait on a link
//   that is down or retraining.
// - fabric: a port the engine sends on is ACTIVE, its XmitWait rose and it sent next to nothing (at most one flit per
//   FABRIC_SEND_RATIO flit times waited): the far end returns no credits, so the send buffer stays full and the
//   engine stops fetching. Its HEAD freezes exactly as a host fault's does; only the port tells them apart.
// - host: the port is ACTIVE and either its XmitWait did not rise or it kept sending (credits arrive): the engine
//   itself stopped (the chip does not fetch, or its retirement was lost).
// A port's XmitWait rises on a healthy saturated link too: it says nothing alone, only with the port sending nothing.
// A credit stall of one VL while the others flow keeps the port sending, and reads as host (the per-VL wait
// counters that could tell are not read).

/** The cause classes. */
export const STALL_CAUSES = ['host', 'fabric', 'link'] as const;
export type StallCause = (typeof STALL_CAUSES)[number];

/** What one port shows over a stall's span: its state now and its counters' rises (null when not known). */
export interface PortSpan {
  port: number;
  /** The logical state now (`ACTIVE`, `DOWN`, …), or null when unread. */
  state: string | null;
  /** It had a link since the driver loaded: seen ACTIVE, or its LinkDowned is above 0. */
  hadLink: boolean;
  /** The port's VL map uses the engine (sdma<N>/vl); true when unknown. */
  mapsEngine: boolean;
  xmitWait: bigint | null;
  xmitData: bigint | null;
  linkDowned: bigint | null;
  linkErrorRecovery: bigint | null;
}

/** The cause of a stall, the port that shows it, and why, in a phrase. */
export interface CauseJudgement {
  readonly cause: StallCause;
  readonly port: number | null;
  readonly why: string;
}

/** A port that waited this many flit times per flit it sent sent "next to nothing". */
export const FABRIC_SEND_RATIO = 100n;

/** The cause of a stall from the ports the engine may send on; null when no port's state and counters are known. */
export function stallCause(ports: readonly PortSpan[]): CauseJudgement | null {
  const mine = ports.filter((p) => p.mapsEngine);
  for (const p of mine) {
    if (p.state !== null && p.state !== 'ACTIVE' && p.hadLink) {
      return { cause: 'link', port: p.port, why: `port ${p.port} lost its link (${p.state} now)` };
    }
    if ((p.linkDowned ?? 0n) > 0n) {
      return {
        cause: 'link',
        port: p.port,
        why: `port ${p.port} LinkDowned +${p.linkDowned} during the stall (the link went down)`,
      };
    }
    if ((p.linkErrorRecovery ?? 0n) > 0n) {
      return {
        cause: 'link',
        port: p.port,
        why: `port ${p.port} LinkErrorRecovery +${p.linkErrorRecovery} during the stall (the link retrains)`,
      };
    }
  }
  for (const p of mine) {
    if (p.state !== 'ACTIVE' || p.xmitWait === null || p.xmitData === null) continue;
    if (p.xmitWait > 0n && p.xmitData * FABRIC_SEND_RATIO <= p.xmitWait) {
      return {
        cause: 'fabric',
        port: p.port,
        why: `port ${p.port} ACTIVE, XmitWait +${p.xmitWait} flit times while it sent ${p.xmitData === 0n ? 'nothing' : `${p.xmitData} flits`}: the far end returns no credits`,
      };
    }
  }
  for (const p of mine) {
    if (p.state !== 'ACTIVE' || p.xmitWait === null) continue;
    const sending = p.xmitData !== null && p.xmitData > 0n;
    return {
      cause: 'host',
      port: p.port,
      why:
        p.xmitWait === 0n
          ? `port ${p.port} ACTIVE and XmitWait flat: the engine itself stopped`
          : `port ${p.port} ACTIVE and sending${sending ? ` (${p.xmitData} flits)` : ''}: credits arrive, the engine itself stopped`,
    };
  }
  return null;
}
