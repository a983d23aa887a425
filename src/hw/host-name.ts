// The name of the host a sysroot shows: proc/sys/kernel/hostname (the kernel's nodename, kernel/utsname_sysctl.c),
// as a live host has it and as `emu write` writes it. Text from the tree is checked before it is believed: only a
// name made of the characters a host name may hold is taken; anything else is no name.
import { join } from 'node:path';
import { type HwFs, readTextOrNull } from './fsio.js';

/** The longest host name taken (a DNS name is at most 253 characters). */
const HOST_NAME_MAX = 253;
const HOST_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/;

/** The host name in the text of a hostname file, or null when it is not one. Pure. */
export function parseHostName(text: string): string | null {
  const name = text.split('\n', 1)[0]?.trim() ?? '';
  return name.length <= HOST_NAME_MAX && HOST_NAME.test(name) ? name : null;
}

/** The host name a sysroot shows (its proc/sys/kernel/hostname), or null where it shows none. */
export async function readHostName(fs: HwFs, sysroot: string): Promise<string | null> {
  try {
    const text = await readTextOrNull(fs, join(sysroot, 'proc/sys/kernel/hostname'), 4096);
    return text === null ? null : parseHostName(text);
  } catch {
    return null;
  }
}
