// Text from a capture (a host name, a firmware string, a kernel log line, a process name) goes into the
// report only through these: cut to a bounded length, control characters shown as \xNN, and the five
// characters that mean something to HTML written as entities, so no file's contents can become markup.
import { escapeControls } from '../hw/parse/text.js';

/** The longest piece of capture text shown in one place (characters); longer text ends with `…`. */
export const MAX_TEXT = 400;

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for HTML element content or a quoted attribute value. Pure. */
export function esc(text: string, max = MAX_TEXT): string {
  const cut = text.length > max ? `${text.slice(0, max - 1)}…` : text;
  return escapeControls(cut).replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);
}

/** A value for an `id` attribute or a fragment link: only [A-Za-z0-9_-] are kept. Pure. */
export function idOf(...parts: (string | number)[]): string {
  return parts.map((p) => String(p).replace(/[^A-Za-z0-9_-]/g, '_')).join('-');
}
