// Process and thread ids of a trace. Viewers group tracks by pid and may identify a thread by its tid alone, so a
// tid is unique across every process of every file: a process (one host's unit, or one race) takes a pid from a
// hash of its name, and its tracks take tids pid × TRACKS + track. Two hosts' files then merge without
// clashing (unless two names hash alike: one in a million).

/** Tracks a process may have: its own (0), engines 0-15 (1-16), ports (PORT_TRACK + port), race actors. */
export const TRACKS = 64;
/** A port's track: PORT_TRACK + port number. */
export const PORT_TRACK = 40;
/** Pids stay below this, so that every tid fits in 31 bits. */
const PID_RANGE = 999_983;

/** The pid of a process named `name` (FNV-1a, 32 bits, folded into 1…PID_RANGE). */
export function pidOf(name: string): number {
  let h = 0x811c9dc5;
  for (const b of Buffer.from(name, 'utf8')) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return 1 + (h % PID_RANGE);
}

/** The tid of track `track` (0 … TRACKS − 1) of process `pid`. */
export function tidOf(pid: number, track: number): number {
  return pid * TRACKS + track;
}
