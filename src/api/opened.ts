// What the library remembers of the backends it handed out, for what takes one back (captureSnapshot): where a
// host backend reads, or the emulated unit behind an emulator. Held weakly: a backend dropped is forgotten.
import type { Backend } from '../backend.js';
import type { EmuUnit } from '../emu/unit.js';

/** A backend this library opened: a host's readers under `sysroot` (a directory or a snapshot), or an emulator. */
export type OpenedRecord = { kind: 'host'; sysroot: string } | { kind: 'emu'; unit: EmuUnit; ready: () => Promise<unknown> };

const records = new WeakMap<Backend, OpenedRecord>();

/** Remember what `b` is. */
export function remember(b: Backend, r: OpenedRecord): void {
  records.set(b, r);
}

/** `alias` stands for `b` (a view of it restricted to one unit). */
export function alias(view: Backend, b: Backend): void {
  const r = records.get(b);
  if (r) records.set(view, r);
}

/** What `b` is, when this library opened it. */
export function recordOf(b: Backend): OpenedRecord | undefined {
  return records.get(b);
}
