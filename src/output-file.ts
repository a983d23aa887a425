// Where an output file (`export --textfile`, `snapshot -o`) may be written: a regular file, or a
// name not yet taken, in an existing directory, and never inside the tree being read. A device
// node, a FIFO, a socket, a symbolic link or a directory in its place is refused and left exactly as
// it is: the output is written to a temporary beside it and renamed over it, which would replace
// `/dev/full` or a link with a plain file.
import { lstatSync, realpathSync, type Stats } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { Hfi1SdmaError } from './errors.js';
import { fileKind } from './hw/read-file.js';

/** What a file that is not a regular file is, in words (lstat: a link is named as one). */
function kindOf(st: Stats): string {
  return st.isSymbolicLink() ? 'a symbolic link' : fileKind(st);
}

/** `path` with its directory resolved (links followed), or null when the directory cannot be resolved. */
export function realTarget(path: string): string | null {
  try {
    return join(realpathSync(dirname(resolve(path))), basename(path));
  } catch {
    return null;
  }
}

/** The first of `inputs` (a tree being read, other than `/`) that holds the real path `real`, or null. */
export function inputHolding(real: string, inputs: readonly string[]): string | null {
  for (const input of inputs) {
    let tree: string;
    try {
      tree = realpathSync(input);
    } catch {
      continue;
    }
    if (tree !== '/' && under(real, tree)) return input;
  }
  return null;
}

/** True when `real` is `tree` or lies under it. */
function under(real: string, tree: string): boolean {
  return real === tree || real.startsWith(tree === '/' ? '/' : `${tree}/`);
}

/**
 * Refuse (E_CANT_CREATE, exit 73) an output `target` named by `option` (`--textfile`, `-o`) that
 * exists and is not a regular file, or that lies inside one of `inputs` (the sysroot being read,
 * a snapshot file): nothing is written and the path is left untouched. Call it before the output is
 * produced and again just before the rename that puts it in place.
 */
export function checkOutputTarget(target: string, option: string, inputs: readonly string[] = [], shownAs = target): void {
  let st: Stats | undefined;
  try {
    st = lstatSync(target, { throwIfNoEntry: false });
  } catch {
    st = undefined; // a directory on the way that cannot be read: the write says why
  }
  if (st !== undefined && !st.isFile()) {
    throw new Hfi1SdmaError(
      'E_CANT_CREATE',
      `${option} ${shownAs}: is ${kindOf(st)}, not a regular file: it is left as it is; name a regular file (or a new one) in a directory`,
    );
  }
  const real = realTarget(target);
  if (real === null) return;
  const input = inputHolding(real, inputs);
  if (input !== null) {
    throw new Hfi1SdmaError(
      'E_CANT_CREATE',
      `${option} ${shownAs}: lies inside ${input}, which is being read: nothing is written there; name a file outside it`,
    );
  }
}
