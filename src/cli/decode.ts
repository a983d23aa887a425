// `decode QW0 QW1`: one hardware descriptor, both qwords decoded (the SDMA_DESC0_ and SDMA_DESC1_ fields, sdma.h).
import type { Argv } from 'yargs';
import type { ChipName } from '../progress/chip.js';
import { flagString, hex16 } from '../progress/descriptor.js';
import { type ChipDescriptor, DESC_RESERVED, decodeFor } from '../progress/descriptor-chip.js';
import { parseU64Arg } from './args.js';
import type { CommandSpec } from './context.js';
import { type Chosen, chooseFlavour, chosenNote } from './flavour-default.js';
import { keyValues } from './format.js';
import { documentStamp, stamped } from './stamp.js';

const AHG_MODES = [
  'none',
  'copy header into AHG entry',
  'apply 1 update (UPDATE1)',
  'apply 2-5 updates (UPDATE2)',
  'apply 6-9 updates (UPDATE3)',
];

/** The `decode --json` shape (docs/json.md). */
export function decodeJson(qw0: bigint, qw1: bigint, d: ChipDescriptor, chip: ChipName = 'wfr') {
  return {
    chip,
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

// Where FIRST, LAST, BYTE_COUNT and the address live on each chip, for the text form.
const LAYOUT: Record<ChipName, { first: string; last: string; count: string; addr: string }> = {
  wfr: { first: 'qw0 bit 63', last: 'qw0 bit 62', count: 'qw0 bits 61:48', addr: 'qw0 bits 47:0' },
  jkr: { first: 'qw1 bit 31', last: 'qw1 bit 30', count: 'qw1 bits 29:16', addr: 'qw0 bits 57:0' },
};

function render(qw0: bigint, qw1: bigint, d: ChipDescriptor, chosen: Chosen<ChipName>): string {
  const chip = chosen.value;
  const bit = (b: boolean) => (b ? '1' : '0');
  const at = LAYOUT[chip];
  const reserved = DESC_RESERVED[chip];
  const ignored = (qw0 & reserved.qw0) !== 0n || (qw1 & reserved.qw1) !== 0n;
  return keyValues([
    ['chip', `${chip}${chip === 'wfr' ? ' (Intel Omni-Path 100)' : ' (Cornelis CN5000)'}  ${chosenNote(chosen, '--chip')}`],
    ['qw0', hex16(qw0)],
    ['qw1', hex16(qw1)],
    ['flags', `${flagString(d)}  (I INT_REQ, H HEAD_TO_HOST, F FIRST, L LAST)`],
    ['FIRST_DESC', `${bit(d.first)}  (${at.first})`],
    ['LAST_DESC', `${bit(d.last)}  (${at.last})`],
    ['BYTE_COUNT', `${d.len} bytes  (${at.count})`],
    ['PHY_ADDR', `${hex16(d.addr)}  (${at.addr})`],
    ['GENERATION', String(d.gen)],
    ['INT_REQ', bit(d.intReq)],
    ['HEAD_TO_HOST', bit(d.headToHost)],
    ['HEADER_MODE', `${d.ahgMode} (${AHG_MODES[d.ahgMode] ?? 'reserved'})`],
    ['HEADER_INDEX', String(d.ahgIdx)],
    ['HEADER_DWS', `${d.ahgDws} dwords`],
    ['HEADER_UPDATE1', `0x${d.ahgUpdate.toString(16).padStart(8, '0')}`],
    ...(ignored ? [['reserved', `bits set that ${chip} does not define were ignored`] as [string, string]] : []),
  ]);
}

export const decodeCommand: CommandSpec = {
  command: 'decode <qw0> <qw1>',
  describe: 'decode one hardware descriptor (both qwords)',
  // Only to learn the chip of the unit here: never the emulator in place of a host without one.
  fallback: false,
  builder: (y: Argv) =>
    y
      .positional('qw0', { type: 'string', describe: 'first qword, 0x-prefixed hex or decimal' })
      .positional('qw1', { type: 'string', describe: 'second qword' })
      .example('$0 decode 0xc040000000100000 0x5', 'a one-descriptor 64-byte packet, generation 1')
      .example('$0 decode --chip jkr 0x100000 0xc0400005', 'the same packet in the CN5000 layout')
      .epilogue('The layout is --chip when given, else the chip of the unit found here (--unit, else the first), else wfr.'),
  async run(args, ctx) {
    const qw0 = parseU64Arg('QW0', args.qw0);
    const qw1 = parseU64Arg('QW1', args.qw1);
    const chosen = await chooseFlavour(ctx, 'chip', 'wfr');
    const chip = chosen.value;
    const d = decodeFor(chip, qw0, qw1);
    ctx.io.stdout(
      ctx.global.json
        ? `${JSON.stringify(stamped(documentStamp(null, ctx), decodeJson(qw0, qw1, d, chip)))}\n`
        : render(qw0, qw1, d, chosen),
    );
    return 0;
  },
};
