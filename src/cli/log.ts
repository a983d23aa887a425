// `log [FILE|-]`: decode the SDMA lines of a kernel log of hfi1 (upstream or the Cornelis build) or hfi2 (the driver
// log lines, sdma.c).
import type { Argv } from 'yargs';
import { Hfi1SdmaError } from '../errors.js';
import { decodeSFlags } from '../hw/parse/s-flags.js';
import { linkEventsByPort } from '../kmsg/ipoib.js';
import { type KernelLog, type LogEvent, MAX_EVENTS, MAX_UNITS } from '../kmsg/parse.js';
import { MAX_LINE_BYTES, readKernelLog } from '../kmsg/stream.js';
import type { ChipName } from '../progress/chip.js';
import { flagString, hex16 } from '../progress/descriptor.js';
import type { CommandSpec } from './context.js';
import { readLogFile, stdinChunks } from './files.js';
import { type Chosen, chooseFlavour, chosenNote } from './flavour-default.js';
import { table } from './format.js';
import type { Paint } from './io.js';
import { documentStamp, stamped } from './stamp.js';

/** The `log --json` shape (docs/json.md). */
export function logJson(log: KernelLog) {
  return {
    chip: log.chip,
    units: log.units.map((u) => ({
      name: u.name,
      module: u.module,
      pci: u.pci,
      engines: u.engines,
      descqCnt: u.descqCnt,
      engineCpu: u.engineCpu,
      chipEngines: u.chipEngines,
      memSize: u.memSize,
    })),
    /** The link events counted per unit and port (down, up, training failures, other link errors). */
    links: linkEventsByPort(log.events),
    // Addresses and qwords are strings of one form in every output: "0x" and 16 lowercase digits.
    events: log.events.map((e) =>
      e.decoded
        ? {
            ...e,
            decoded: {
              ...e.decoded,
              addr: hex16(e.decoded.addr),
              ahgUpdate: `0x${e.decoded.ahgUpdate.toString(16).padStart(8, '0')}`,
            },
          }
        : e,
    ),
  };
}

/** The build that printed a line of unit `unit` (a name such as hfi1_0, or a bare module): hfi2, or hfi1's. */
function buildOf(log: Pick<KernelLog, 'units'>, unit: string): 'hfi1' | 'hfi2' {
  const known = log.units.find((u) => u.name === unit)?.module;
  return known ?? (unit.startsWith('hfi2') ? 'hfi2' : 'hfi1');
}

/**
 * What an event of `log` says, after the line's place (`line 12 [5.000000]: hfi1_0 sdma3: `); null for a
 * descriptor line, which eventLine lays out on its own.
 */
export function eventDescription(e: LogEvent, paint: Paint, log: Pick<KernelLog, 'units'>): string | null {
  switch (e.kind) {
    case 'engine-error': {
      const bits = (e.errors ?? []).map((b) => (b.halts ? paint('red', `${b.name}(${b.bit})`) : `${b.name}(${b.bit})`)).join(' ');
      return `engine error ${e.value} in ${e.state}: ${bits || '(no bits)'}${e.halts ? paint('red', ' -> halts the engine (e60)') : ' (does not halt)'}`;
    }
    case 'ring-dump':
      if (e.used !== undefined) {
        // The newer dump (Cornelis hfi1, hfi2): `used` is their in-process count, the true in flight.
        const tag = e.tag === undefined ? '' : `; descriptors follow as [desc ${e.tag}]`;
        return `ring dump: head slot ${e.head}, tail slot ${e.tail}, used ${e.used} (in flight; upstream's in-process would read ${e.used + 1}), free ${e.freecnt}, ring ${e.descqCnt}, flush list ${e.flushListNonEmpty ? 'non-empty' : 'empty'}${tag}`;
      }
      return `ring dump: head slot ${e.head}, tail slot ${e.tail}, free ${e.freecnt}, flush list ${e.flushListNonEmpty ? 'non-empty' : 'empty'}`;
    case 'descriptor':
    case 'trace-descriptor':
      return null;
    case 'halt-timeout':
      return 'timed out (10 ms) waiting for the engine to halt; the driver went on anyway';
    case 'clean-timeout': {
      // Only the Cornelis hfi1 and hfi2 give up (upstream hfi1 polls without a limit): the prefix tells which.
      const build = buildOf(log, e.unit) === 'hfi2' ? 'hfi2' : 'the Cornelis hfi1';
      return `timed out (100 polls of 10 us) waiting for the engine to clean up (${build} hw clean-up); the driver went on anyway`;
    }
    case 'check-scheduled':
      return 'A-step progress check scheduled (pre-production silicon workaround)';
    case 'progress-check':
      return 'A-step progress check ran';
    case 'bad-head':
      return `bad head from ${e.source}: hw ${e.hwHead}, sw head ${e.swHead}, sw tail ${e.swTail}, ring ${e.cnt}`;
    case 'dmawait-not-empty':
      return 'unloaded with senders still waiting for descriptors (dmawait not empty)';
    case 'spurious-interrupt':
      return 'interrupt with no status bits set';
    case 'invalid-interrupt':
      return `invalid SDMA interrupt source ${e.value}`;
    case 'state-change':
      return `state ${e.fromState} -> ${e.state} (trace event${e.engine === undefined ? '; hfi1_sdma_state names no engine' : ''})`;
    case 'ipoib-timeout': {
      const waits = e.noDesc ? ' (it waits for SDMA descriptors)' : '';
      const tail = [
        e.sent === undefined ? null : `sent ${e.sent} completed ${e.completed} used ${e.used}`,
        e.waitQueued === undefined ? null : `wait queued ${e.waitQueued ? 1 : 0}`,
        e.txListEmpty === undefined ? null : `tx_list ${e.txListEmpty ? 'empty' : 'not empty'}`,
      ].filter(Boolean);
      return `IPoIB queue txq ${e.txq} timed out${e.engine === undefined ? ' (engine not printed)' : ''}: stopped ${e.stopped ? 1 : 0}, stops ${e.stops}, no_desc ${e.noDesc}${waits}, ring_full ${e.ringFull}${tail.length ? `; ${tail.join(', ')}` : ''}`;
    }
    case 'netdev-watchdog':
      return `NETDEV WATCHDOG: ${e.netdev} transmit queue ${e.txq} timed out${e.timedOutMs === undefined ? '' : ` after ${e.timedOutMs} ms`}${e.cpu === undefined ? '' : ` (CPU ${e.cpu})`}`;
    case 'txq-event':
      return `IPoIB txq ${e.txq} ${e.event}: used ${e.used}, stops ${e.stops}, no_desc ${e.noDesc}, stopped ${e.stopped ? 1 : 0} (trace event)`;
    case 'link-up':
      return `port ${e.port}: link up`;
    case 'link-down':
      return `port ${e.port}: ${paint('yellow', 'link down')}`;
    case 'link-down-reason':
      return `port ${e.port}: link down reason: ${e.text}`;
    case 'link-training-failed':
      return `port ${e.port}: ${paint('yellow', 'link training failed')}: ${e.text}`;
    case 'link-error':
      return `port ${e.port}: link error: ${e.text}`;
    case 'link-state':
      return `port ${e.port}: ${e.physState ? `physical state now ${e.physState}` : `logical state now ${e.state}`}`;
    case 'qp-sleep':
    case 'qp-wakeup':
    case 'iowait-set':
    case 'iowait-clear':
    case 'psm-defer':
    case 'psm-activate':
      return waitEventText(e, log);
    case 'pad':
      return `${e.padDescriptors} pad descriptors after ${e.packets} packet${e.packets === 1 ? '' : 's'} of ${e.packetDescriptors} descriptors (pad_sdma_desc ${e.padSdmaDesc}; ${buildOf(log, e.unit)}_sdma_pad trace event)`;
    default:
      return paint('dim', `(not decoded) ${e.text ?? ''}`);
  }
}

/** IOWAIT_PENDING_IB and IOWAIT_PENDING_TID as the iowait events print them (1 << bit, iowait.h). */
const PENDING: Readonly<Record<string, string>> = { '0x1': 'IOWAIT_PENDING_IB', '0x2': 'IOWAIT_PENDING_TID' };

/** A sleep or wake-up trace event in words, with the event's name and the task that printed it. */
function waitEventText(e: LogEvent, log: Pick<KernelLog, 'units'>): string {
  const build = buildOf(log, e.unit);
  const by = `${e.task ? `, ${e.task}` : ''}${e.cpu === undefined ? '' : ` on cpu ${e.cpu}`}`;
  const qp = `QP 0x${(e.qpn ?? 0).toString(16)}`;
  const flag = (hex: string | undefined) => {
    const names = decodeSFlags(Number(hex ?? 0), 'C').names;
    return names.length ? names.join('|') : '0';
  };
  switch (e.kind) {
    case 'qp-sleep':
      return `${qp} asleep on ${flag(e.waitFlag)}${flag(e.waitFlag) === 'WAIT_DMA_DESC' ? " (an engine's dmawait)" : ''}; s_flags ${flag(e.sFlags)} (${build}_qpsleep trace event${by})`;
    case 'qp-wakeup':
      return `${qp} woken: ${flag(e.waitFlag)} cleared; s_flags ${flag(e.sFlags)} (${build}_qpwakeup trace event${by})`;
    case 'iowait-set':
    case 'iowait-clear': {
      const what = e.iowaitFlag ? (PENDING[e.iowaitFlag] ?? e.iowaitFlag) : '?';
      const verb = e.kind === 'iowait-set' ? 'set' : 'cleared';
      return `${qp} (iowait ${e.iowait}): ${what} ${verb}, flags ${e.iowaitFlags} before (${build}_${e.kind.replace('-', '_')} trace event${by})`;
    }
    case 'psm-defer':
      return `PSM queue pq ${e.pq} deferred${e.empty ? ' (not on a list yet)' : ' (already on a list)'} (${build}_usdma_defer trace event${by})`;
    default:
      return `PSM queue pq ${e.pq} activated (reason ${e.reason}${e.reason === 0 ? ': descriptors available' : ''}) (${build}_usdma_activate trace event${by})`;
  }
}

function eventLine(e: LogEvent, paint: Paint, chip: string, log: KernelLog): string {
  const at = `line ${e.line}${e.ts === null ? '' : ` [${e.ts}]`}: ${e.unit}${e.engine === undefined ? '' : ` sdma${e.engine}`}`;
  const what = eventDescription(e, paint, log);
  if (what !== null) return `${at}: ${what}`;
  const d = e.decoded;
  const raw = e.qw0 ? `  qw0 ${e.qw0} qw1 ${e.qw1}` : '';
  const check =
    d && e.flags && flagString(d) !== e.flags
      ? paint('yellow', ` (raw flags ${flagString(d)} as ${chip} differ: is --chip right?)`)
      : '';
  const ahg = e.ahgMode === undefined ? '' : `  ahg idx ${e.ahgIdx} mode ${e.ahgMode} len ${e.ahgLen}`;
  // A trace event is a descriptor as it was written, on a line of its own; a dump's lines follow their dump.
  const where =
    e.kind === 'trace-descriptor'
      ? `${at}: written `
      : `    ${e.tag === undefined ? '' : `[desc ${e.tag}]${e.engine === undefined ? '' : ` sdma${e.engine}`} `}`;
  return `${where}desc[${e.slot ?? '?'}] ${e.flags ?? '????'} addr ${e.addr ?? '?'} gen ${e.gen ?? '?'} len ${e.len ?? '?'}${ahg}${raw}${check}`;
}

/** `1 line`, `2 lines`. */
function plural(n: number, what: string): string {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}

/** The text report of a parsed log. */
export function renderLog(log: KernelLog, paint: Paint, chosen?: Chosen<ChipName>): string {
  let out = '';
  const decodes = log.events.some((e) => e.decoded);
  if (decodes && chosen) out += `descriptor qwords decoded as ${log.chip} ${chosenNote(chosen, '--chip')}\n`;
  if (log.units.length) {
    out += table(
      ['unit', 'module', 'pci', 'engines', 'descq_cnt', 'engine -> irq cpu'],
      log.units.map((u) => [
        u.name,
        u.module,
        u.pci,
        u.engines === null ? '-' : String(u.engines),
        u.descqCnt === null ? '-' : String(u.descqCnt),
        // Indexed by absolute engine: list the engines the log names, not the positions before a window.
        u.engineCpu.some((c) => c !== null) ? u.engineCpu.flatMap((c, e) => (c === null ? [] : [`${e}:${c}`])).join(' ') : '-',
      ]),
    );
    out += '\n';
  }
  const errors = log.events.filter((e) => e.kind === 'engine-error').length;
  out += `${plural(log.events.length, 'SDMA event')} (${plural(errors, 'engine error')}) in ${plural(log.linesRead, 'line')}\n`;
  for (const p of linkEventsByPort(log.events)) {
    out += `${p.unit} port ${p.port}: ${p.down} link down, ${p.up} link up, ${plural(p.trainingFailures, 'link training failure')}${p.errors ? `, ${plural(p.errors, 'other link error')}` : ''}\n`;
  }
  for (const e of log.events) out += `${eventLine(e, paint, log.chip, log)}\n`;
  return out;
}

export const logCommand: CommandSpec = {
  command: 'log [file]',
  describe: 'decode the hfi1/hfi2 SDMA lines of a kernel log (dmesg/journalctl text; - for stdin)',
  // Only to learn the chip of the unit here: never the emulator in place of a host without one.
  fallback: false,
  builder: (y: Argv) =>
    y
      .positional('file', { type: 'string', default: '-', describe: 'log file, or - for standard input' })
      .example('dmesg | $0 log', 'decode this host’s log')
      .example('$0 log node17-dmesg.txt --json', 'a log pasted from a failed node')
      .example('$0 log --chip jkr cn5000-dmesg.txt', 'descriptor qwords of a CN5000 log')
      .epilogue(
        'Descriptor qwords (d0/d1, desc0/desc1) are decoded as --chip when given, else as the chip of the unit found here (--unit, else the first), else wfr; a log line does not say which chip wrote it.',
      ),
  async run(args, ctx) {
    const file = String(args.file ?? '-');
    const chosen = await chooseFlavour(ctx, 'chip', 'wfr');
    const opts = { chip: chosen.value };
    const log = file === '-' ? await readKernelLog(stdinChunks(ctx.io), opts) : await readLogFile(file, opts);
    const name = file === '-' ? 'standard input' : file;
    if (log.overlongLines > 0) {
      ctx.io.stderr(
        `hfi1-sdma: ${name}: skipped ${log.overlongLines} line(s) longer than ${MAX_LINE_BYTES} bytes (not kernel messages)\n`,
      );
    }
    if (log.eventsDropped > 0) {
      ctx.io.stderr(
        `hfi1-sdma: ${name}: kept the first ${MAX_EVENTS} SDMA events of ${MAX_UNITS} unit(s) at most; ${log.eventsDropped} more were left out: narrow the log (e.g. journalctl -k --since ...)\n`,
      );
    }
    // A kernel log without a line of the driver (it did not load, or the log rotated) is an answer, not bad
    // input; so is no input at all (dmesg as a user the kernel restricts prints nothing).
    if (log.hfi1Lines === 0 && (log.linesRead === 0 || log.looksLikeLog)) {
      ctx.io.stderr(
        log.linesRead === 0
          ? `hfi1-sdma: ${name}: empty: no kernel log to decode (dmesg prints nothing where kernel.dmesg_restrict is 1 and it is not run as root; try sudo, or journalctl -k)\n`
          : `hfi1-sdma: ${name}: no hfi1 or hfi2 lines among ${log.linesRead} kernel log lines: the driver logged nothing there (not loaded, or the log was rotated; journalctl -k -b shows the whole boot)\n`,
      );
    }
    if (log.hfi1Lines === 0 && log.linesRead > 0 && !log.looksLikeLog) {
      throw new Hfi1SdmaError(
        'E_PARSE',
        `${file === '-' ? 'standard input' : file}: no hfi1 lines among ${log.linesRead} lines; expected dmesg or journalctl -k text with lines like "hfi1 0000:05:00.0: hfi1_0: SDMA ..." (or "hfi2 ...: hfi2_0: ...")`,
      );
    }
    ctx.io.stdout(
      ctx.global.json
        ? `${JSON.stringify(stamped(documentStamp(null, ctx), logJson(log)))}\n`
        : renderLog(log, ctx.paint, chosen),
    );
    return 0;
  },
};
