// The state health and the textfile exporter carry between runs is trusted only when it can only be this
// user's: read from a directory of this user (or a sticky one) and a file this user owns that no other may
// write; what it holds is range-checked, bounded in depth, and its text escaped before any note shows it. A
// file --state names that is not a state (a typo naming nrpe.cfg) is never replaced, and neither an empty
// --state nor one inside the tree read is accepted.
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Backend } from '../../src/backend.js';
import { newMonitorTracks } from '../../src/monitor/monitor.js';
import { encodeState, STATE_VERSION, type StateKey } from '../../src/monitor/state.js';
import { loadState } from '../../src/monitor/state-file.js';
import { runCli } from '../support/cli.js';
import { FakeBackend } from '../support/fake-backend.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('health-trust-');
const ROOT = process.getuid?.() === 0;
const KEY: StateKey = { host: 'h', bootId: null, sysroot: '/', units: {} };

/** A sound state of KEY, saved now, as text; `edit` changes the decoded object before it is written. */
function stateText(edit: (s: Record<string, unknown>) => void = () => {}): string {
  const s = JSON.parse(encodeState({ version: STATE_VERSION, key: KEY, savedAtMs: Date.now(), tracks: newMonitorTracks() }));
  edit(s);
  return JSON.stringify(s);
}

/** A state file at `dir/name` holding `text`, mode `mode`. */
function plant(dir: string, text: string, mode = 0o600, name = 'health.state'): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  chmodSync(p, mode);
  return p;
}

/** The note of loading `path` (null when the state was used). */
async function note(path: string): Promise<string | null> {
  return (await loadState(path, KEY, Date.now())).note;
}

/** A state with one engine track whose fields `track` sets. */
function withEngine(track: Record<string, unknown>): string {
  return stateText((s) => {
    const t = s.tracks as { engines: { $map: unknown[] } };
    t.engines.$map.push([
      'hfi1_0/2',
      {
        prev: null,
        lastMoveMs: 1000,
        lastMoveObserved: true,
        lastHeadDmaMoveMs: null,
        haltSinceMs: null,
        flushSinceMs: null,
        suspect: false,
        stalled: false,
        stallCount: 0,
        stallMaxMs: 0,
        seenMove: true,
        wasHalted: false,
        halts: 0,
        recoveries: 0,
        errCountFirst: null,
        lastErrors: [],
        ...track,
      },
    ]);
  });
}

describe('a state is used only when it can only be this user’s', () => {
  it('a sound state of this user is used; one writable by others is not', async () => {
    const d = tmp();
    expect(await note(plant(d, stateText()))).toBeNull();
    expect(await note(plant(d, stateText(), 0o664))).toMatch(
      /health\.state is writable by other users, so another user could have written it: ignored/,
    );
  });

  it.skipIf(!ROOT)(
    'planted by another user, in their directory or in a sticky one, it is ignored (runs only as root)',
    async () => {
      const theirs = join(tmp(), 'hfi1-sdma-4242');
      mkdirSync(theirs, { mode: 0o755 });
      const p = plant(theirs, stateText(), 0o644);
      chownSync(theirs, 65534, 65534);
      chownSync(p, 65534, 65534);
      expect(await note(p)).toMatch(
        /hfi1-sdma-4242 belongs to uid 65534, not this user, so another user could have written it: ignored/,
      );
      const sticky = join(tmp(), 'sticky');
      mkdirSync(sticky);
      chmodSync(sticky, 0o1777);
      const q = plant(sticky, stateText(), 0o644);
      chownSync(q, 65534, 65534);
      expect(await note(q)).toMatch(
        /health\.state belongs to uid 65534, not this user, so another user could have written it: ignored/,
      );
    },
  );

  it('its text reaches a note escaped: the key, a map key, the parser’s own quote', async () => {
    const d = tmp();
    const forged = '\x1b]0;PWNED\x07\x1b[2J\nCRITICAL: SD201 forged line';
    const key = await note(
      plant(
        d,
        stateText((s) => Object.assign(s.key as object, { sysroot: forged })),
      ),
    );
    const bad = await note(plant(d, `\x1b]0;T\x07\nCRITICAL: forged\n`, 0o600, 'bad.state'));
    const mapKey = await note(plant(d, withEngine({ stallCount: -1 }).replace('hfi1_0/2', forged), 0o600, 'k.state'));
    for (const n of [key, bad, mapKey]) {
      expect(n).not.toBeNull();
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
      expect(n).not.toMatch(/[\x00-\x1f\x7f]/);
    }
    expect(key).toContain('\\x1b]0;PWNED\\x07');
  });

  it('absurd times and counts, and nesting deeper than any state, are corrupt: ignored', async () => {
    const d = tmp();
    expect(await note(plant(d, withEngine({ lastMoveMs: -1e300 }), 0o600, 'a.state'))).toMatch(
      /corrupt \(.*lastMoveMs .* is not a time/,
    );
    expect(
      await note(
        plant(d, withEngine({ errCountFirst: { $bigint: '-9999999999999999999999999999999999999' } }), 0o600, 'b.state'),
      ),
    ).toMatch(/corrupt \(.*errCountFirst is not a counter value/);
    expect(await note(plant(d, withEngine({ stallCount: 1e300 }), 0o600, 'c.state'))).toMatch(/stallCount is not a count/);
    expect(await note(plant(d, withEngine({ haltSinceMs: 10, lastMoveMs: 9e12 }), 0o600, 'e.state'))).toMatch(
      /its times span \d+ days, more than a year/,
    );
    const deep = `${'['.repeat(4_000_000)}${']'.repeat(4_000_000)}`;
    expect(await note(plant(d, deep, 0o600, 'deep.state'))).toMatch(/corrupt \(nested deeper than 32 levels\)/);
  });
});

/** A 4-engine host the fake backend plays, and one health run at its current time. */
const host = () => new FakeBackend(() => ({ dh: 500 }), 4, 2048, { kind: 'hw' }) as unknown as Backend;

describe('--state naming a file that is not a state', () => {
  it('health leaves it as it is and says so; an empty file and a state of its own are replaced', async () => {
    const d = tmp();
    const cfg = plant(d, 'command[check_hfi1]=/usr/local/bin/hfi1-sdma health\n', 0o600, 'nrpe.cfg');
    const r = await runCli(['health', '--state', cfg], {}, false, '', host());
    expect(r.stdout).toMatch(/state not saved: .*nrpe\.cfg is not a state file of hfi1-sdma \(left as it is\)/);
    expect(readFileSync(cfg, 'utf8')).toBe('command[check_hfi1]=/usr/local/bin/hfi1-sdma health\n');
    const empty = plant(d, '', 0o600, 'empty.state');
    await runCli(['health', '--state', empty], {}, false, '', host());
    expect(readFileSync(empty, 'utf8')).toMatch(/^\{"version":1,/);
    await runCli(['health', '--state', empty], {}, false, '', host());
    expect(readFileSync(empty, 'utf8')).toMatch(/^\{"version":1,/);
  });

  it('export --textfile leaves it as it is too', async () => {
    const d = tmp();
    const notes = plant(d, 'keep me\n', 0o600, 'notes.txt');
    const r = await runCli(
      ['export', '--textfile', join(d, 'x.prom'), '--state', notes, '--min-interval-ms', '1', '--strand-ms', '1'],
      {},
      false,
      '',
      host(),
    );
    expect(r.stderr).toMatch(/state not saved: .*notes\.txt is not a state file of hfi1-sdma \(left as it is\)/);
    expect(readFileSync(notes, 'utf8')).toBe('keep me\n');
  });
});

describe('--state refused before anything is read', () => {
  it('empty: a usage error (health UNKNOWN 3, export 64)', async () => {
    const h = await runCli(['health', '--state', ''], {}, false, '', host());
    expect(h.code).toBe(3);
    expect(h.stdout).toMatch(/^HFI1-SDMA UNKNOWN - --state is empty: name a file \(or none/);
    const x = await runCli(['export', '--textfile', join(tmp(), 'x.prom'), '--state', ''], {}, false, '', host());
    expect(x.code).toBe(64);
  });

  it('inside the sysroot read: nothing is written there (health UNKNOWN 3, export 73)', async () => {
    const tree = tmp();
    mkdirSync(join(tree, 'sys/module/hfi1'), { recursive: true });
    const inside = join(tree, 'sys/h.state');
    const h = await runCli(['--sysroot', tree, 'health', '--state', inside], {}, false, '', host());
    expect(h.code).toBe(3);
    expect(h.stdout).toMatch(/--state .*h\.state: lies inside .*, which is being read: nothing is written there/);
    const prom = join(tmp(), 'x.prom');
    const x = await runCli(
      ['--sysroot', tree, 'export', '--textfile', prom, '--state', join(tree, 'sys/module/hfi1/x.state')],
      {},
      false,
      '',
      host(),
    );
    expect(x.code).toBe(73);
    expect(existsSync(inside) || existsSync(join(tree, 'sys/module/hfi1/x.state')) || existsSync(prom)).toBe(false);
  });
});
