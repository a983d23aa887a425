// Whether a program is installed: an executable file of that name in a directory of PATH, found the way a shell
// finds it, without starting it.
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** True when `name` is an executable file in one of the directories of PATH. */
export function onPath(name: string): boolean {
  return (process.env.PATH ?? '')
    .split(delimiter)
    .filter((dir) => dir !== '')
    .some((dir) => {
      const file = join(dir, name);
      try {
        accessSync(file, constants.X_OK);
        return statSync(file).isFile();
      } catch {
        return false;
      }
    });
}
