// Node sets as ClusterShell writes them (`nodeset -f`, the headers of `clush -b`): host names split into a pattern
// and the numbers in it, each number kept as written (`01` and `1` are two indexes, as ClusterShell 1.9 keeps mixed
// padding), folded into ranges along every axis (`node[1-3,5]`, `r[1-2]n[1-2]`). The folding follows ClusterShell's
// own steps (NodeSet and RangeSetND: a one-axis merge when only one axis varies, else the pairwise merge of
// vectors in its sort order), so that the text agrees with `nodeset -f` byte for byte; a test holds it to the real
// one. Pure.

/** One axis's indexes, as written (`7`, `07`). */
type Indexes = Set<string>;

/** Indexes in ClusterShell's order: shorter first, then as text (so `8` before `07`, `9` before `10`). */
function sortedIndexes(s: Indexes): string[] {
  // By length first (buckets), then each bucket in the native string order: no comparator per pair.
  const byLength: string[][] = [];
  for (const x of s) {
    const bucket = byLength[x.length];
    if (bucket) bucket.push(x);
    else byLength[x.length] = [x];
  }
  const out: string[] = [];
  for (const bucket of byLength) if (bucket) out.push(...bucket.sort());
  return out;
}

/** The ranges of one axis: runs of consecutive numbers written alike (`1-3,5`, `009-011`, `8,07`). */
export function rangesText(s: Indexes): string {
  const parts: string[] = [];
  let start = '';
  let last = -2;
  let lastText = '';
  let padded = false;
  let pad = 0;
  const close = () => {
    if (start !== '') parts.push(start === lastText ? start : `${start}-${lastText}`);
  };
  for (const x of sortedIndexes(s)) {
    const n = Number(x);
    const isPadded = x.length > 1 && x[0] === '0';
    const fits = start !== '' && n === last + 1 && (padded ? x.length === pad : !isPadded);
    if (!fits) {
      close();
      start = x;
      padded = isPadded;
      pad = x.length;
    }
    last = n;
    lastText = x;
  }
  close();
  return parts.join(',');
}

/** A host name as ClusterShell parses one: the text between numbers (`r%n%`) and each number as written. */
function split(name: string): { pattern: string; indexes: string[] } {
  let pattern = '';
  const indexes: string[] = [];
  for (const m of name.matchAll(/(\D*)(\d*)/g)) {
    if (m[0] === '') continue;
    // %% in the pattern stands for a literal % of the name; %s for a number.
    pattern += (m[1] as string).replaceAll('%', '%%');
    if (m[2]) {
      pattern += '%s';
      indexes.push(m[2]);
    }
  }
  return { pattern, indexes };
}

function equalSets(a: Indexes, b: Indexes): boolean {
  if (a.size !== b.size) return false;
  for (const x of a) if (!b.has(x)) return false;
  return true;
}

function disjoint(a: Indexes, b: Indexes): boolean {
  for (const x of a) if (b.has(x)) return false;
  return true;
}

function subset(a: Indexes, b: Indexes): boolean {
  for (const x of a) if (!b.has(x)) return false;
  return true;
}

/** Python's ordering of the text ClusterShell sorts by (code points). */
function cmpText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** RangeSetND's sort: larger vectors first, then per axis larger sets first, lower first and last index first. */
function cmpVectors(a: Indexes[], b: Indexes[]): number {
  const size = (v: Indexes[]) => v.reduce((n, s) => n * s.size, 1);
  const d = size(b) - size(a);
  if (d !== 0) return d;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as Indexes;
    const y = b[i] as Indexes;
    if (x.size !== y.size) return y.size - x.size;
    const xs = sortedIndexes(x);
    const ys = sortedIndexes(y);
    const first = cmpText(xs[0] as string, ys[0] as string);
    if (first !== 0) return first;
    const lastCmp = cmpText(xs[xs.length - 1] as string, ys[ys.length - 1] as string);
    if (lastCmp !== 0) return lastCmp;
  }
  return 0;
}

/** Fold the vectors of one pattern as RangeSetND does; every vector a list of one-index sets on entry. */
function foldVectors(vectors: Indexes[][]): Indexes[][] {
  if (vectors.length <= 1) return vectors;
  const dim = (vectors[0] as Indexes[]).length;
  // Only one axis varies: merge along it.
  let varying = -1;
  let varyingCount = 0;
  for (let i = 0; i < dim && varyingCount < 2; i++) {
    const first = (vectors[0] as Indexes[])[i] as Indexes;
    if (!vectors.every((v) => equalSets(v[i] as Indexes, first))) {
      varyingCount++;
      varying = i;
    }
  }
  if (dim === 1 || varyingCount === 1) {
    const axis = dim === 1 ? 0 : varying;
    const merged = (vectors[0] as Indexes[]).map((s) => new Set(s));
    for (const v of vectors.slice(1)) for (const x of v[axis] as Indexes) (merged[axis] as Indexes).add(x);
    return [merged];
  }
  // Expand every vector to its points (once each), then merge pairs that differ on one axis.
  const seen = new Set<string>();
  let list: Indexes[][] = [];
  for (const v of vectors) {
    for (const point of product(v.map((s) => [...s]))) {
      const key = point.join('\0');
      if (seen.has(key)) continue;
      seen.add(key);
      list.push(point.map((x) => new Set([x])));
    }
  }
  let full = false;
  let changed = true;
  while (changed) {
    changed = false;
    list = list.sort(cmpVectors);
    let i1 = 0;
    while (i1 + 1 < list.length) {
      let item1 = list[i1] as Indexes[];
      let i2 = i1 + 1;
      i1++;
      while (i2 < list.length) {
        const item2 = list[i2] as Indexes[];
        i2++;
        const merged = mergeOne(item1, item2);
        if (merged) {
          changed = true;
          item1 = merged;
          list[i1 - 1] = merged;
          i2--;
          list.splice(i2, 1);
        } else if (!full) break;
      }
    }
    if (!changed && !full) {
      changed = true;
      full = true;
    }
  }
  return list;
}

/** Two vectors that differ on at most one axis (disjoint there, or one holding the other) as one; else null. */
function mergeOne(a: Indexes[], b: Indexes[]): Indexes[] | null {
  const out: Indexes[] = [];
  let diff = 0;
  for (let pos = 0; pos < a.length; pos++) {
    const x = a[pos] as Indexes;
    const y = b[pos] as Indexes;
    if (equalSets(x, y)) out.push(x);
    else if (disjoint(x, y)) {
      if (++diff > 1) return null;
      out.push(new Set([...x, ...y]));
    } else if (subset(x, y) || subset(y, x)) {
      if (++diff > 1) return null;
      out.push(x.size > y.size ? x : y);
    } else return null;
  }
  return out;
}

function* product(axes: string[][]): Generator<string[]> {
  if (axes.length === 0) {
    yield [];
    return;
  }
  const [head, ...rest] = axes as [string[], ...string[][]];
  for (const x of head) for (const tail of product(rest)) yield [x, ...tail];
}

/** Fill a pattern's `%s` with `args` (and `%%` with `%`). */
function fill(pattern: string, args: readonly string[]): string {
  let i = 0;
  return pattern.replace(/%%|%s/g, (m) => (m === '%%' ? '%' : (args[i++] as string)));
}

/** A name with one number (`node017`, `cn12-ib`): where its digits start and end; null for none or several. */
function oneNumber(name: string): [number, number] | null {
  let start = -1;
  let end = -1;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (end >= 0) return null;
      if (start < 0) start = i;
    } else if (start >= 0 && end < 0) end = i;
  }
  return start < 0 ? null : [start, end < 0 ? name.length : end];
}

/** Host names folded as `nodeset -f` folds them: `node[1-3,5],login1`. Duplicates count once. */
export function foldNodes(names: Iterable<string>): string {
  const byPattern = new Map<string, Indexes[][]>();
  // Names of one number (almost every fleet's) gather their indexes in one set per pattern: one axis needs no more.
  const oneAxis = new Map<string, Indexes>();
  for (const name of names) {
    if (name === '') continue;
    const one = name.includes('%') ? null : oneNumber(name);
    if (one) {
      const pattern = `${name.slice(0, one[0])}%s${name.slice(one[1])}`;
      let set = oneAxis.get(pattern);
      if (!set) {
        set = new Set();
        oneAxis.set(pattern, set);
        byPattern.set(pattern, [[set]]);
      }
      set.add(name.slice(one[0], one[1]));
      continue;
    }
    const { pattern, indexes } = split(name);
    let vectors = byPattern.get(pattern);
    if (!vectors) {
      vectors = [];
      byPattern.set(pattern, vectors);
    }
    vectors.push(indexes.map((x) => new Set([x])));
  }
  const out: string[] = [];
  for (const pattern of [...byPattern.keys()].sort(cmpText)) {
    const vectors = byPattern.get(pattern) as Indexes[][];
    if ((vectors[0] as Indexes[]).length === 0) {
      out.push(fill(pattern, []));
      continue;
    }
    for (const v of foldVectors(vectors)) {
      out.push(
        fill(
          pattern,
          v.map((s) => (s.size > 1 ? `[${rangesText(s)}]` : rangesText(s))),
        ),
      );
    }
  }
  return out.join(',');
}

/** The host names of a node set written as ClusterShell writes one: `node[001-003,7],login1`, `r[1-2]n[1-2]`. */
export function expandNodes(text: string): string[] {
  const out: string[] = [];
  for (const part of splitTopLevel(text.trim())) {
    if (part === '') continue;
    let names = [''];
    let rest = part;
    while (rest !== '') {
      const open = rest.indexOf('[');
      if (open < 0) {
        names = names.map((n) => n + rest);
        break;
      }
      const close = rest.indexOf(']', open);
      if (close < 0) throw new Error(`${JSON.stringify(part)}: a [ without its ]`);
      const prefix = rest.slice(0, open);
      const indexes = expandRanges(rest.slice(open + 1, close), part);
      names = names.flatMap((n) => indexes.map((x) => `${n}${prefix}${x}`));
      rest = rest.slice(close + 1);
    }
    out.push(...names);
  }
  return [...new Set(out)];
}

/** The parts of a node set between its top-level commas (commas inside brackets belong to the ranges). */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const c of text) {
    if (c === '[') depth++;
    else if (c === ']') depth--;
    if (c === ',' && depth === 0) {
      parts.push(cur.trim());
      cur = '';
    } else cur += c;
  }
  parts.push(cur.trim());
  return parts;
}

/** `1-3,07,10-12/2` as its indexes, each written with the padding of its range's start. */
function expandRanges(ranges: string, part: string): string[] {
  const out: string[] = [];
  for (const r of ranges.split(',')) {
    const m = /^(\d+)(?:-(\d+)(?:\/(\d+))?)?$/.exec(r.trim());
    if (!m) throw new Error(`${JSON.stringify(part)}: ${JSON.stringify(r)} is not a range (N, N-M or N-M/STEP)`);
    const from = m[1] as string;
    const to = m[2] ?? from;
    const step = Number(m[3] ?? 1);
    const pad = from.length > 1 && from[0] === '0' ? from.length : 0;
    const a = Number(from);
    const b = Number(to);
    if (b < a || step < 1 || b - a > 1_000_000)
      throw new Error(`${JSON.stringify(part)}: ${JSON.stringify(r)} is not an ascending range`);
    for (let i = a; i <= b; i += step) out.push(String(i).padStart(pad, '0'));
  }
  return out;
}
