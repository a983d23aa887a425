// A minimal terminal for tests of in-place redraws: applies cursor moves (ESC[H, ESC[r;cH), clears
// (ESC[2J, ESC[J, ESC[K), text and newlines to a grid of lines; colour escapes are dropped.

/** The screen after `output`, one string per line (trailing blanks removed, trailing empty lines dropped). */
export function screenOf(output: string): string[] {
  const lines: string[] = [];
  let row = 0;
  let col = 0;
  const put = (ch: string) => {
    while (lines.length <= row) lines.push('');
    const l = lines[row] ?? '';
    lines[row] = l.padEnd(col).slice(0, col) + ch + l.slice(col + 1);
    col += 1;
  };
  for (let i = 0; i < output.length; ) {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: parsing terminal escapes
    const m = /^\x1b\[([0-9;]*)([A-Za-z])/.exec(output.slice(i, i + 16));
    if (m) {
      const [all, args = '', op] = m;
      if (op === 'H') {
        const [r = 1, c = 1] = args === '' ? [] : args.split(';').map(Number);
        row = r - 1;
        col = c - 1;
      } else if (op === 'J') {
        if (args === '2') lines.length = 0;
        else {
          lines.length = Math.min(lines.length, row + 1);
          if (lines[row] !== undefined) lines[row] = (lines[row] ?? '').slice(0, col);
        }
      } else if (op === 'K') {
        if (lines[row] !== undefined) lines[row] = (lines[row] ?? '').slice(0, col);
      }
      i += all.length;
      continue;
    }
    const ch = output[i] ?? '';
    if (ch === '\n') {
      row += 1;
      col = 0;
    } else if (ch === '\r') col = 0;
    else put(ch);
    i += 1;
  }
  const out = lines.map((l) => l.trimEnd());
  while (out.length > 0 && out.at(-1) === '') out.pop();
  return out;
}

/** Text without ANSI escapes. */
export function stripAnsi(s: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping escapes
  return s.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
}
