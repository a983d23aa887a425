// `ring <engine>`: the decoded descriptors between software head and tail (sdma_seqfile_dump_sde, sdma.c; the descriptor fields, sdma.h).
import type { RingDump } from '../backend.js';
import { hex16 } from '../progress/descriptor.js';
import type { CommandSpec } from './context.js';
import { table } from './format.js';
import { goneStatus, WarningSayer } from './observe.js';
import { documentStamp, stamped } from './stamp.js';
import { engineArg, sampleOne, singleUnit, withBackend } from './units.js';

/** The `ring --json` shape (docs/json.md). */
export function ringJson(r: RingDump, unitName: string) {
  return {
    unit: unitName,
    engine: r.engine,
    descqCnt: r.descqCnt,
    head: r.head,
    tail: r.tail,
    descriptors: r.descriptors.map((d) => ({
      slot: d.slot,
      flags: d.flags,
      addr: hex16(d.addr),
      gen: d.gen,
      len: d.len,
      ...(d.ahgIdx === undefined ? {} : { ahgIdx: d.ahgIdx }),
      ...(d.ahgMode === undefined ? {} : { ahgMode: d.ahgMode }),
      ...(d.qw0 === undefined ? {} : { qw0: hex16(d.qw0) }),
      ...(d.qw1 === undefined ? {} : { qw1: hex16(d.qw1) }),
    })),
  };
}

function renderRing(r: RingDump, name: string): string {
  const head = `${name} sdma${r.engine}: ${r.descriptors.length} descriptors from slot ${r.head} to ${r.tail} (ring of ${r.descqCnt}); flags I H F L = INT_REQ HEAD_TO_HOST FIRST LAST\n`;
  if (r.descriptors.length === 0) return `${head}(empty ring)\n`;
  const rows = r.descriptors.map((d) => [
    String(d.slot),
    d.flags,
    hex16(d.addr),
    String(d.gen),
    String(d.len),
    d.ahgMode === undefined ? '' : `idx ${d.ahgIdx ?? 0} mode ${d.ahgMode}`,
  ]);
  return head + table(['slot', 'flags', 'addr', 'gen', 'len', 'ahg'], rows, new Set([0, 3, 4]));
}

export const ringCommand: CommandSpec = {
  command: 'ring <engine>',
  describe: 'the decoded descriptor ring between head and tail',
  builder: (y) => y.positional('engine', { type: 'string', describe: 'engine number' }),
  async run(args, ctx) {
    return withBackend(ctx, async (backend) => {
      const unit = await singleUnit(backend, ctx.global.unit);
      const engine = engineArg(args.engine, unit.info);
      const r = await unit.ring(engine);
      new WarningSayer(ctx.io).say([unit]);
      ctx.io.stdout(
        ctx.global.json
          ? `${JSON.stringify(stamped(documentStamp(backend, ctx), ringJson(r, unit.info.name)))}\n`
          : renderRing(r, unit.info.name),
      );
      // The ring is host memory and outlives the device: say when the engine behind it is gone.
      return goneStatus(ctx.io, [{ unit, s: await sampleOne(unit, engine) }]);
    });
  },
};
