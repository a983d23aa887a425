// /proc/<pid>/status (the fields a QP's owner needs: Name, Tgid, Uid) and /etc/passwd (a uid's name). Pure.

/** What /proc/<pid>/status says of a task. */
export interface ProcStatus {
  name: string | null;
  /** The thread group (process) the task belongs to. */
  tgid: number | null;
  /** The real uid. */
  uid: number | null;
}

/** Parse /proc/<pid>/status; fields it lacks are null. */
export function parseProcStatus(text: string): ProcStatus {
  const out: ProcStatus = { name: null, tgid: null, uid: null };
  for (const line of text.split('\n')) {
    const m = /^(Name|Tgid|Uid):\t?(.*)$/.exec(line);
    if (!m) continue;
    const value = (m[2] as string).trim();
    if (m[1] === 'Name') out.name = value.slice(0, 64);
    else {
      const n = /^(\d{1,10})\b/.exec(value);
      const v = n ? Number(n[1]) : null;
      if (m[1] === 'Tgid') out.tgid = v;
      else out.uid = v;
    }
  }
  return out;
}

/** The user names of /etc/passwd by uid (the first line of a uid wins). */
export function parsePasswd(text: string): Map<number, string> {
  const out = new Map<number, string>();
  for (const line of text.split('\n')) {
    const f = line.split(':');
    if (f.length < 3 || f[0] === '' || !/^\d{1,10}$/.test(f[2] as string)) continue;
    const uid = Number(f[2]);
    if (!out.has(uid)) out.set(uid, (f[0] as string).slice(0, 64));
  }
  return out;
}
