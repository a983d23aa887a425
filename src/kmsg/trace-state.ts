// The engine state-change trace event as the `trace` file prints it: hfi1_tx's hfi1_sdma_state,
// `[%s] current state %s new state %s` (no engine number), and hfi2_tx's hfi2_sdma_state,
// `[%s] SDE%d state: %s -> %s` (the absolute engine index) (trace_tx.h of each driver). Pure.

/** One state change. */
export interface SdmaStateEvent {
  /** The trace timestamp (`8812.123456`), or null when the line has none. */
  ts: string | null;
  module: 'hfi1' | 'hfi2';
  /** The PCI address the event names (the `[%s]` device prefix). */
  device: string;
  /** The engine, absolute; null in the hfi1 wording, which does not print it. */
  engine: number | null;
  from: string;
  to: string;
}

const EVENT = /(?:\s(\d+\.\d+))?: (hfi[12])_sdma_state: \[([^\]]+)\] (.*)$/;
const HFI1_TEXT = /^current state (\S+) new state (\S+)$/;
const HFI2_TEXT = /^SDE(0|[1-9][0-9]?) state: (\S+) -> (\S+)$/;

/** The state change on a line of `trace`, in either wording; null when the line is another event or neither wording. */
export function parseSdmaStateLine(line: string): SdmaStateEvent | null {
  const m = EVENT.exec(line.trimEnd());
  if (!m) return null;
  const ts = m[1] ?? null;
  const module = m[2] as 'hfi1' | 'hfi2';
  const device = m[3] as string;
  const text = m[4] as string;
  const newer = HFI2_TEXT.exec(text);
  if (newer) return { ts, module, device, engine: Number(newer[1]), from: newer[2] as string, to: newer[3] as string };
  const older = HFI1_TEXT.exec(text);
  if (older) return { ts, module, device, engine: null, from: older[1] as string, to: older[2] as string };
  return null;
}
