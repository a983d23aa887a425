// An engine set as operators read it: absolute hardware indexes, runs collapsed (`8-15`, `0-3,6`), the way the
// kernel prints a CPU list (`%*pbl`).

/** Ascending indexes with runs collapsed: `8-15`, `0-3,6`, `5`; `none` for none. */
export function indexRangesText(engineIds: readonly number[]): string {
  const parts: string[] = [];
  let i = 0;
  while (i < engineIds.length) {
    const a = engineIds[i] as number;
    let j = i;
    while (j + 1 < engineIds.length && engineIds[j + 1] === (engineIds[j] as number) + 1) j += 1;
    const b = engineIds[j] as number;
    parts.push(a === b ? String(a) : `${a}-${b}`);
    i = j + 1;
  }
  return parts.length > 0 ? parts.join(',') : 'none';
}

/** An engine set as text: `8-15` for a window, `0-3,6` with gaps, `none` for none. */
export function engineIdsText(engineIds: readonly number[]): string {
  return indexRangesText(engineIds);
}
