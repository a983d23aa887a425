import { describe, expect, it } from 'vitest';
import { ParseError } from '../../src/errors.js';
import { hfi1DeviceUnit, type PsmProcInput, parseProcStack, parseProcSyscall, psmVerdict } from '../../src/hw/parse/proc-psm.js';
import { fixture } from './fixtures.js';

const psm = (name: string) => fixture(`proc/psm/${name}`);
const FDS = [
  { fd: 0, target: '/dev/pts/3' },
  { fd: 7, target: '/dev/infiniband/uverbs0' },
  { fd: 11, target: '/dev/hfi1_0' },
  { fd: 12, target: 'anon_inode:[eventfd]' },
];
const blocked: PsmProcInput = {
  pid: 4711,
  comm: psm('comm'),
  fds: FDS,
  stack: psm('stack-blocked'),
  syscall: psm('syscall-writev'),
  wchan: psm('wchan-blocked'),
};

describe('proc parsers (fs/proc/base.c)', () => {
  it('reads the kernel stack of a current kernel and of a 3.10 kernel', () => {
    const now = parseProcStack(psm('stack-blocked'));
    expect(now[0]).toEqual({ symbol: 'hfi1_user_sdma_process_request', offset: 0x5b1, module: 'hfi1' });
    expect(now).toHaveLength(8);
    const old = parseProcStack(psm('stack-blocked-rhel7'));
    expect(old[0]).toEqual({ symbol: 'schedule_timeout', offset: 0x239, module: null });
    expect(old[8]).toEqual({ symbol: null, offset: null, module: null });
    expect(parseProcStack('')).toEqual([]);
  });

  it('reads the syscall file: writev with its fd, running, blocked outside a syscall', () => {
    const w = parseProcSyscall(psm('syscall-writev'));
    expect(w).toMatchObject({ running: false, nr: 20 });
    expect(w.running === false && w.args[0]).toBe(11n);
    expect(parseProcSyscall(psm('syscall-running'))).toEqual({ running: true });
    expect(parseProcSyscall('-1 0x7ffd5c8a1e40 0x7f3a9d2c1b8f\n')).toEqual({ running: false, nr: -1, args: [] });
  });

  it('refuses malformed files with ParseError naming file and line', () => {
    const e = (() => {
      try {
        parseProcStack('[<0>] hfi1_poll+0x6d/0xb0 [hfi1]\ngarbage\n', '/proc/9/stack');
      } catch (x) {
        return x;
      }
    })();
    expect(e).toBeInstanceOf(ParseError);
    expect([(e as ParseError).file, (e as ParseError).line]).toEqual(['/proc/9/stack', 2]);
    expect(() => parseProcSyscall('20 0xb\n')).toThrow(ParseError);
  });

  it('knows /dev/hfi1_N and nothing else', () => {
    expect(hfi1DeviceUnit('/dev/hfi1_0')).toBe(0);
    expect(hfi1DeviceUnit('/dev/hfi1_12 (deleted)')).toBe(12);
    expect(hfi1DeviceUnit('/dev/hfi1_01')).toBeNull();
    expect(hfi1DeviceUnit('/dev/infiniband/uverbs0')).toBeNull();
  });
});

describe('psmVerdict', () => {
  it('blocked in the user SDMA request on hfi1_0, with the evidence', () => {
    const v = psmVerdict(blocked);
    expect(v).toMatchObject({ blocked: true, unit: 0, fd: 11, pid: 4711, command: 'mpi_app', units: [0] });
    expect(v.evidence).toEqual([
      'fd 11 -> /dev/hfi1_0',
      'syscall: writev on fd 11',
      'stack: hfi1_user_sdma_process_request+0x5b1',
    ]);
  });

  it('the 3.10 stack (scheduler frames on top) and the wchan alone also say blocked', () => {
    expect(psmVerdict({ ...blocked, stack: psm('stack-blocked-rhel7') })).toMatchObject({ blocked: true, unit: 0 });
    expect(psmVerdict({ ...blocked, stack: null })).toMatchObject({ blocked: true, unit: 0 });
  });

  it('aarch64 numbers writev 66', () => {
    const sc = psm('syscall-writev').replace(/^20 /, '66 ');
    expect(psmVerdict({ ...blocked, syscall: sc, arch: 'aarch64' })).toMatchObject({ blocked: true });
    expect(psmVerdict({ ...blocked, syscall: sc })).toMatchObject({ blocked: false });
  });

  it('not blocked: no hfi1 fd, running, another syscall, writev elsewhere, another hfi1 function', () => {
    expect(psmVerdict({ ...blocked, fds: FDS.slice(0, 2) })).toMatchObject({ blocked: false, why: 'holds no /dev/hfi1_N open' });
    expect(psmVerdict({ ...blocked, syscall: psm('syscall-running') })).toMatchObject({ blocked: false });
    expect(psmVerdict({ ...blocked, syscall: psm('syscall-poll'), stack: psm('stack-poll') })).toMatchObject({ blocked: false });
    const onOther = psm('syscall-writev').replace(' 0xb ', ' 0x1 ');
    expect(psmVerdict({ ...blocked, syscall: onOther })).toMatchObject({ blocked: false });
    const v = psmVerdict({ ...blocked, syscall: null, stack: psm('stack-poll') });
    expect(v).toMatchObject({ blocked: false, why: 'the top hfi1 frame is hfi1_poll' });
  });

  it('cannot tell without root: says which files are missing', () => {
    const v = psmVerdict({ ...blocked, stack: null, syscall: null, wchan: psm('wchan-hidden') });
    expect(v).toMatchObject({ blocked: null, units: [0] });
    expect(v.blocked === null && v.missing).toEqual([
      '/proc/4711/syscall',
      '/proc/4711/stack',
      '/proc/4711/wchan (reads 0: hidden, or an unwinder that cannot tell)',
    ]);
    expect(psmVerdict({ ...blocked, fds: null })).toMatchObject({ blocked: null, missing: ['/proc/4711/fd'] });
    expect(psmVerdict({ ...blocked, stack: null, syscall: null, wchan: null, comm: null })).toMatchObject({
      blocked: null,
      command: null,
    });
  });

  it('two units open: the syscall fd names the unit; without it the unit is unknown', () => {
    const fds = [...FDS, { fd: 13, target: '/dev/hfi1_1' }];
    expect(psmVerdict({ ...blocked, fds })).toMatchObject({ blocked: true, unit: 0, fd: 11, units: [0, 1] });
    expect(psmVerdict({ ...blocked, fds, syscall: null })).toMatchObject({ blocked: true, unit: null, fd: null });
  });
});
