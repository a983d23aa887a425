// Text formatting shared by the commands: aligned tables and 64-bit hex for JSON.

/** A 64-bit value as the JSON outputs carry it (docs/json.md): "0x…" lowercase. */
export function hexJson(v: bigint | null | undefined): string | null {
  return v === null || v === undefined ? null : `0x${v.toString(16)}`;
}

/** Columns padded to the widest cell; numbers (and cells marked by `right`) aligned right. */
export function table(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  right: ReadonlySet<number> = new Set(),
): string {
  const widths = header.map((h, i) => Math.max(visibleLength(h), ...rows.map((r) => visibleLength(r[i] ?? ''))));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => {
        const pad = ' '.repeat(Math.max(0, (widths[i] ?? 0) - visibleLength(c)));
        return right.has(i) ? pad + c : c + pad;
      })
      .join('  ')
      .trimEnd();
  return `${[line(header), ...rows.map(line)].join('\n')}\n`;
}

/** Length of a string as shown on a terminal (ANSI escapes take no room). */
export function visibleLength(s: string): number {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI escapes are what we strip
  return s.replace(/\x1b\[[0-9;]*m/g, '').length;
}

/** `label  value` lines with labels padded to one width. */
export function keyValues(pairs: readonly (readonly [string, string])[]): string {
  const w = Math.max(...pairs.map(([k]) => k.length));
  return `${pairs.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n')}\n`;
}
