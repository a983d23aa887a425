// The emulator writes every file from the kernel's formats in its own code: nothing under src/emu imports the live
// reader (src/hw) or the commands (src/cli), so a writer and its reader cannot share a mistake.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../src');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? files(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );
}

describe('src/emu stands apart from src/hw and src/cli', () => {
  it('no module of the emulator imports from src/hw or src/cli', () => {
    const offending: string[] = [];
    const emu = files(join(ROOT, 'emu'));
    for (const f of emu) {
      for (const m of readFileSync(f, 'utf8').matchAll(/from '([^']+)'/g)) {
        const target = relative(ROOT, resolve(join(f, '..'), m[1] as string));
        if (/^(hw|cli)[\\/]/.test(target)) offending.push(`${relative(ROOT, f)} imports ${m[1]}`);
      }
    }
    expect(emu.length).toBeGreaterThan(30);
    expect(offending).toEqual([]);
  });
});
