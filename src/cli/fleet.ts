// `fleet [INPUT...]`: what many hosts said, rolled up. It talks to no host itself (ClusterShell, pdsh, Slurm and
// Prometheus do the fan-out): it reads what they print (`host: line`, `clush -b`/`dshbak -c` blocks, `health
// --json` documents) and directories of captures (`FILE.<host>` as clush --rcopy and rpdcp write, `<host>/FILE`,
// opacaptureall uploads), judges each capture as `health` does, and prints findings grouped by code with folded
// node sets, the hosts that said nothing useful, and exits with the largest status, as `clush -S` does. With
// --baseline it keeps (-b) or compares against raw captures, as opa-ff's opafabricanalysis does.
import { readFileSync, statSync } from 'node:fs';
import type { Argv } from 'yargs';
import { usageError } from '../errors.js';
import { Answers, readFanout } from '../fleet/answer.js';
import { baselineRef, compareHost, type HostChange, loadBaseline, storeBaseline } from '../fleet/baseline.js';
import { type CaptureRef, findCaptures, isCaptureDir, type Judge, type JudgedCapture, judgeCapture } from '../fleet/captures.js';
import { expandNodes, foldNodes } from '../fleet/nodeset.js';
import { rollup, rollupText } from '../fleet/rollup.js';
import { parseIntArg } from './args.js';
import type { CliContext, CommandSpec } from './context.js';
import { stdinChunks } from './files.js';
import { briefAnswer } from './health.js';
import { documentStamp, stamped } from './stamp.js';
import { version } from './version.js';

/** The most text read from one input (a fan-out of 10,000 hosts' `health --json` is well under it). */
const MAX_TEXT_BYTES = 1024 * 1024 * 1024;

const HOST_SUFFIX = /\.(?:tar\.gz|tgz)\.[A-Za-z0-9][A-Za-z0-9._-]*$/;
const ARCHIVE = /\.(?:tar\.gz|tgz)$/;

/** What the inputs hold: fan-out text, and captures. */
interface Inputs {
  texts: string[];
  captures: CaptureRef[];
}

async function readInputs(names: readonly string[], ctx: CliContext): Promise<Inputs> {
  const out: Inputs = { texts: [], captures: [] };
  for (const name of names.length === 0 ? ['-'] : names) {
    if (name === '-') {
      let text = '';
      for await (const c of stdinChunks(ctx.io)) text += typeof c === 'string' ? c : Buffer.from(c).toString('utf8');
      out.texts.push(text);
      continue;
    }
    const st = statSync(name, { throwIfNoEntry: false });
    if (!st) throw usageError(`${name}: no such file or directory: name fan-out output, a capture, or a directory of captures`);
    if (st.isDirectory()) {
      if (isCaptureDir(name)) out.captures.push({ host: null, path: name, kind: 'dir' });
      else {
        const found = findCaptures(name);
        if (found.length === 0) {
          throw usageError(
            `${name}: no captures in it: expected FILE.tar.gz.<host> (clush --rcopy, rpdcp), <host>/FILE.tar.gz, or opacaptureall's <host>/<name>.tgz`,
          );
        }
        out.captures.push(...found);
      }
    } else if (HOST_SUFFIX.test(name)) {
      out.captures.push({
        host: (/\.(?:tar\.gz|tgz)\.(.+)$/.exec(name) as RegExpExecArray)[1] as string,
        path: name,
        kind: 'archive',
      });
    } else if (ARCHIVE.test(name)) {
      out.captures.push({ host: null, path: name, kind: 'archive' });
    } else {
      if (st.size > MAX_TEXT_BYTES) throw usageError(`${name}: ${st.size} bytes, more than fleet reads of fan-out text`);
      out.texts.push(readFileSync(name, 'utf8'));
    }
  }
  return out;
}

/** How the CLI opens and judges a capture: as --sysroot does, then as health --brief does. */
function cliJudge(ctx: CliContext, stallMs: number): Judge {
  return {
    async open(ref) {
      const { openSnapshotBackend, openOpacaptureBackend } = await import('../snapshot/backend.js');
      return ref.kind === 'dir' ? openOpacaptureBackend(ref.path, { dir: ref.path }) : openSnapshotBackend(ref.path);
    },
    answer: (backend) => briefAnswer(backend, ctx, { stallMs }),
  };
}

async function judgeAll(refs: readonly CaptureRef[], judge: Judge): Promise<JudgedCapture[]> {
  const out: JudgedCapture[] = [];
  for (const ref of refs) out.push(await judgeCapture(ref, judge));
  return out;
}

/** Hosts grouped by one change description: `hfi1_0 driverVersion 10.14.0.0 → 10.15.0.0: node[01-40] (40)`. */
function changeGroups(changes: readonly HostChange[]): { change: string; nodes: string; count: number }[] {
  const by = new Map<string, string[]>();
  const add = (what: string, host: string) => by.set(what, [...(by.get(what) ?? []), host]);
  for (const c of changes) {
    if (c.kind === 'new') add('not in the baseline', c.host);
    if (c.kind === 'missing') add('in the baseline, no capture now', c.host);
    for (const l of c.added) add(`new ${l}`, c.host);
    for (const l of c.cleared) add(`cleared ${l}`, c.host);
    for (const d of c.drift) add(d, c.host);
  }
  return [...by].map(([change, hosts]) => ({ change, nodes: foldNodes(hosts), count: hosts.length }));
}

/** Compare the run with the baseline: exit 1 on a change, 0 when the same (or only the rendering changed). */
async function compare(dir: string, now: readonly JudgedCapture[], judge: Judge, ctx: CliContext): Promise<number> {
  const base = loadBaseline(dir);
  const byHost = new Map(now.map((j) => [j.host, j]));
  const hosts = [...new Set([...base.hosts.map((h) => h.host), ...now.map((j) => j.host)])].sort();
  const changes: HostChange[] = [];
  for (const host of hosts) {
    const record = base.hosts.find((h) => h.host === host);
    let c = compareHost(record, byHost.get(host));
    // Judged by another version: judge the raw baseline again before calling it a change.
    if (c.kind === 'changed' && record && base.toolVersion !== version()) {
      const again = await judgeCapture(baselineRef(dir, record), judge);
      const c2 = compareHost({ ...record, lines: again.lines, units: again.units }, byHost.get(host));
      c = c2.kind === 'same' ? { ...c2, kind: 'rendering' } : c2;
    }
    changes.push(c);
  }
  const changed = changes.filter((c) => c.kind !== 'same' && c.kind !== 'rendering');
  const rendering = changes.filter((c) => c.kind === 'rendering').map((c) => c.host);
  const same = changes.filter((c) => c.kind === 'same').map((c) => c.host);
  const groups = changeGroups(changed);
  const set = (hs: string[]) => ({ nodes: foldNodes(hs), count: hs.length });
  if (ctx.global.json) {
    const doc = {
      status: changed.length > 0 ? 'changed' : 'same',
      baseline: { dir, time: base.time, toolVersion: base.toolVersion },
      changes: groups,
      changed: set(changed.map((c) => c.host)),
      same: set(same),
      newBaselineRecommended: set(rendering),
    };
    ctx.io.stdout(`${JSON.stringify(stamped(documentStamp(null, ctx), doc))}\n`);
  } else {
    const lines = groups.map((g) => `${g.change}: ${g.nodes} (${g.count})`);
    if (rendering.length > 0) {
      lines.push(
        `New baseline recommended: ${foldNodes(rendering)} (${rendering.length}) differ from the baseline only as hfi1-sdma ${version()} renders their captures (the baseline was rendered by ${base.toolVersion}); take it again with -b`,
      );
    }
    lines.push(
      changed.length > 0
        ? `Changed since the baseline of ${base.time}: ${foldNodes(changed.map((c) => c.host))} (${changed.length}); as baselined: ${same.length}`
        : `All ${same.length + rendering.length} hosts as baselined on ${base.time}`,
    );
    ctx.io.stdout(`${lines.join('\n')}\n`);
  }
  return changed.length > 0 ? 1 : 0;
}

export const fleetCommand: CommandSpec = {
  command: 'fleet [inputs..]',
  describe:
    'roll up many hosts (clush/pdsh output, health --json, directories of captures): findings by code over folded node sets',
  builder: (y: Argv) =>
    y
      .positional('inputs', {
        type: 'string',
        array: true,
        describe: 'fan-out output (- for stdin, the default), a capture, or a directory of captures',
      })
      .option('hosts', { type: 'string', describe: 'the node set expected (node[001-040]): those that said nothing are listed' })
      .option('baseline', {
        type: 'string',
        describe: 'compare the captures with the baseline kept in DIR (with -b: keep them as it)',
      })
      .option('b', { type: 'boolean', describe: 'with --baseline: keep these captures (raw) as the baseline' })
      .option('stall-ms', { type: 'string', default: '1000', describe: "judging a capture: health's --stall-ms" })
      .example('clush -w @compute hfi1-sdma health --json | $0 fleet --hosts @compute', 'findings by code over the nodes')
      .example('clush -w node[01-40] --rcopy /tmp/snap.tar.gz --dest caps && $0 fleet caps', 'each capture judged as health does')
      .example('$0 fleet --baseline /var/lib/hfi1-sdma/fleet -b caps', 'keep the captures as the baseline')
      .epilogue(
        'Exit: the largest status of any host (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN, also for a host that said nothing), as clush -S; with --baseline, 1 when a host changed since the baseline, 0 otherwise.',
      ),
  async run(args, ctx) {
    const stallMs = parseIntArg('--stall-ms', args.stallMs, 1, 3_600_000);
    let expected: string[] = [];
    if (args.hosts !== undefined) {
      try {
        expected = expandNodes(String(args.hosts));
      } catch (e) {
        throw usageError(`--hosts: ${(e as Error).message}`);
      }
    }
    const names = ((args.inputs as string[] | undefined) ?? []).map(String);
    const inputs = await readInputs(names, ctx);
    const judge = cliJudge(ctx, stallMs);
    const judged = await judgeAll(inputs.captures, judge);
    if (args.baseline !== undefined) {
      const dir = String(args.baseline);
      if (inputs.texts.length > 0)
        throw usageError('--baseline keeps and compares raw captures: give directories of captures, not fan-out text');
      if (judged.length === 0) throw usageError('--baseline needs captures to keep or compare');
      if (args.b === true) {
        const index = storeBaseline(dir, judged, version(), new Date(ctx.io.nowMs?.() ?? Date.now()).toISOString());
        ctx.io.stdout(
          ctx.global.json
            ? `${JSON.stringify(stamped(documentStamp(null, ctx), { status: 'baselined', baseline: { dir, time: index.time, toolVersion: index.toolVersion }, hosts: { nodes: foldNodes(index.hosts.map((h) => h.host)), count: index.hosts.length } }))}\n`
            : `Baselined ${foldNodes(index.hosts.map((h) => h.host))} (${index.hosts.length}) in ${dir}/baseline\n`,
        );
        return 0;
      }
      return compare(dir, judged, judge, ctx);
    }
    if (args.b === true) throw usageError('-b keeps a baseline: give --baseline DIR');
    const answers = new Answers();
    for (const text of inputs.texts) readFanout(text, answers);
    for (const j of judged) for (const line of j.lines) answers.line(j.host, line);
    const r = rollup(answers.all(expected));
    ctx.io.stdout(ctx.global.json ? `${JSON.stringify(stamped(documentStamp(null, ctx), r))}\n` : rollupText(r));
    return r.code;
  },
};
