// `decode QW0 QW1`: one hardware descriptor, both qwords decoded (the SDMA_DESC0_ and SDMA_DESC1_ fields, sdma.h).
import type { Argv } from 'yargs';
import { type DescriptorFields, decode, flagString, hex16 } from '../progress/descriptor.js';
import { parseU64Arg } from './args.js';
import type { CommandSpec } from './context.js';
import { keyValues } from './format.js';

const AHG_MODES = [
  'none',
  'copy header into AHG entry',
  'apply 1 update (UPDATE1)',
  'apply 2-5 updates (UPDATE2)',
  'apply 6-9 updates (UPDATE3)',
];

/** The `decode --json` shape (docs/json.md). */
export function decodeJson(qw0: bigint, qw1: bigint, d: DescriptorFields) {
  return {
    qw0: hex16(qw0),
    qw1: hex16(qw1),
    first: d.first,
    last: d.last,
    len: d.len,
    addr: hex16(d.addr),
    gen: d.gen,
    intReq: d.intReq,
    headToHost: d.headToHost,
    ahgMode: d.ahgMode,
    ahgIdx: d.ahgIdx,
    ahgDws: d.ahgDws,
    ahgUpdate: `0x${d.ahgUpdate.toString(16).padStart(8, '0')}`,
    flags: flagString(d),
  };
}

function render(qw0: bigint, qw1: bigint, d: DescriptorFields): string {
  const bit = (b: boolean) => (b ? '1' : '0');
  return keyValues([
    ['qw0', hex16(qw0)],
    ['qw1', hex16(qw1)],
    ['flags', `${flagString(d)}  (I INT_REQ, H HEAD_TO_HOST, F FIRST, L LAST)`],
    ['FIRST_DESC', bit(d.first)],
    ['LAST_DESC', bit(d.last)],
    ['BYTE_COUNT', `${d.len} bytes`],
    ['PHY_ADDR', hex16(d.addr)],
    ['GENERATION', String(d.gen)],
    ['INT_REQ', bit(d.intReq)],
    ['HEAD_TO_HOST', bit(d.headToHost)],
    ['HEADER_MODE', `${d.ahgMode} (${AHG_MODES[d.ahgMode] ?? 'reserved'})`],
    ['HEADER_INDEX', String(d.ahgIdx)],
    ['HEADER_DWS', `${d.ahgDws} dwords`],
    ['HEADER_UPDATE1', `0x${d.ahgUpdate.toString(16).padStart(8, '0')}`],
  ]);
}

export const decodeCommand: CommandSpec = {
  command: 'decode <qw0> <qw1>',
  describe: 'decode one hardware descriptor (both qwords)',
  builder: (y: Argv) =>
    y
      .positional('qw0', { type: 'string', describe: 'first qword, 0x-prefixed hex or decimal' })
      .positional('qw1', { type: 'string', describe: 'second qword' })
      .example('$0 decode 0xc040000000100000 0x5', 'a one-descriptor 64-byte packet, generation 1'),
  async run(args, ctx) {
    const qw0 = parseU64Arg('QW0', args.qw0);
    const qw1 = parseU64Arg('QW1', args.qw1);
    const d = decode(qw0, qw1);
    ctx.io.stdout(ctx.global.json ? `${JSON.stringify(decodeJson(qw0, qw1, d))}\n` : render(qw0, qw1, d));
    return 0;
  },
};
