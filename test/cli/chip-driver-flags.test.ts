import { describe, expect, it } from 'vitest';
import { runCli, withoutStamp } from '../support/cli.js';

describe('decode --chip', () => {
  it('reads the JKR layout: FIRST/LAST/BYTE_COUNT from qw1, a 58-bit address from qw0', async () => {
    const r = await runCli(['decode', '--chip', 'jkr', '0x03ffffffffffffff', '0x00000007c0402a35', '--json']);
    expect(r.code).toBe(0);
    expect(withoutStamp(JSON.parse(r.stdout))).toEqual({
      chip: 'jkr',
      qw0: '0x03ffffffffffffff',
      qw1: '0x00000007c0402a35',
      first: true,
      last: true,
      len: 64,
      addr: '0x03ffffffffffffff',
      gen: 1,
      intReq: false,
      headToHost: true,
      ahgMode: 1,
      ahgIdx: 0x0a,
      ahgDws: 3,
      ahgUpdate: '0x00000007',
      flags: '-HFL',
    });
  });

  it('defaults to wfr and says so; the same qwords read differently per chip', async () => {
    const wfr = JSON.parse((await runCli(['decode', '0xc040000000100000', '0x5', '--json'])).stdout);
    const jkr = JSON.parse((await runCli(['decode', '--chip', 'jkr', '0xc040000000100000', '0x5', '--json'])).stdout);
    expect(wfr).toMatchObject({ chip: 'wfr', first: true, last: true, len: 64, addr: '0x0000000000100000' });
    expect(jkr).toMatchObject({ chip: 'jkr', first: false, last: false, len: 0, addr: '0x0040000000100000' });
  });

  it('names the layout in the text form and notes ignored reserved bits', async () => {
    const r = await runCli(['decode', '--chip', 'jkr', '0xfc00000000100000', '0xc0400005']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/chip\s+jkr/);
    expect(r.stdout).toMatch(/BYTE_COUNT\s+64 bytes\s+\(qw1 bits 29:16\)/);
    expect(r.stdout).toMatch(/PHY_ADDR\s+0x0000000000100000\s+\(qw0 bits 57:0\)/);
    expect(r.stdout).toMatch(/reserved\s+bits set that jkr does not define were ignored/);
    const wfr = await runCli(['decode', '0xc040000000100000', '0x5']);
    expect(wfr.stdout).toMatch(/BYTE_COUNT\s+64 bytes\s+\(qw0 bits 61:48\)/);
    expect(wfr.stdout).not.toMatch(/reserved/);
  });

  it('refuses an unknown chip with exit 64 naming the choices', async () => {
    const r = await runCli(['decode', '--chip', 'fxr', '0', '0']);
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(/--chip must be one of wfr, jkr, got "fxr"/);
    expect(r.stdout).toBe('');
  });
});

describe('fit --driver', () => {
  const ring = ['fit', '--descq-cnt', '2048', '--head', '0', '--tail', '255', '--num-desc', '1', '--json'];

  it('in flight 255 on a 2048 ring: upstream in-process 256 (fires), cornelis and hfi2 255 (does not)', async () => {
    const up = JSON.parse((await runCli(ring)).stdout);
    expect(up).toMatchObject({ driver: 'upstream', inFlight: 255, inProcess: 256, scheduleThreshold: 256, free: 1792 });
    for (const driver of ['cornelis', 'hfi2']) {
      const r = await runCli([...ring, '--driver', driver]);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ driver, inFlight: 255, inProcess: 255, free: 1792, numPad: 0 });
    }
  });

  it('says the rule and whether the schedule fires in the text form', async () => {
    const text = ring.filter((a) => a !== '--json');
    const up = await runCli(text);
    expect(up.stdout).toMatch(/driver\s+upstream \(in-process = in flight \+ 1\)/);
    expect(up.stdout).toMatch(/in-process ≥ 256 \(in flight ≥ 255\); now 256 \(fires\)/);
    const h = await runCli([...text, '--driver', 'hfi2']);
    expect(h.stdout).toMatch(/driver\s+hfi2 \(in-process = in flight\)/);
    expect(h.stdout).toMatch(/in-process ≥ 256 \(in flight ≥ 256\); now 255 \(does not fire\)/);
  });

  it('answers for both submission paths: txreq admits num_desc + num_pad, txlist num_desc against free rounded down', async () => {
    // 2020 in flight: 27 free. A 3-descriptor packet with pad_sdma_desc 32 needs 32 on the txreq path; the txlist
    // path admits 3 against round_down(27, 32) = 0.
    const args = ['fit', '--driver', 'hfi2', '--chip', 'jkr', '--descq-cnt', '2048', '--head', '0', '--tail', '2020'];
    const r = await runCli([...args, '--num-desc', '3', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({
      padSdmaDesc: 32,
      numPad: 29,
      path: 'txreq',
      fits: false,
      headroom: -5,
      paths: { txreq: { need: 32, room: 27, fits: false }, txlist: { need: 3, room: 0, fits: false } },
    });
    const roomy = [...args.slice(0, -1), '1988', '--num-desc', '3'];
    const t = await runCli([...roomy, '--pad-sdma-desc', '8']);
    expect(t.code).toBe(0);
    expect(t.stdout).toMatch(/pads\s+pad_sdma_desc 8 \(--pad-sdma-desc\)/);
    expect(t.stdout).toMatch(
      /txreq path\s+sdma_send_txreq \(verbs QPs, IPoIB\): 3 \+ 5 pads = 8 against 59 free: fits, 51 to spare/,
    );
    expect(t.stdout).toMatch(/txlist path\s+sdma_send_txlist \(PSM\): 3 against 56 \(free rounded down to 8\): fits/);
    const list = await runCli([...args.slice(0, -1), '2000', '--num-desc', '20', '--path', 'txlist', '--json']);
    // 47 free: txreq needs 32 and fits; txlist admits 20 against 32 and fits too.
    expect(JSON.parse(list.stdout)).toMatchObject({ path: 'txlist', fits: true, headroom: 12 });
    expect((await runCli([...roomy, '--pad-sdma-desc', '7'])).stderr).toMatch(/--pad-sdma-desc must be one of 0, 4, 8, 16, 32/);
    const up = JSON.parse((await runCli([...ring])).stdout);
    expect(up).toMatchObject({ padSdmaDesc: 0, paths: { txreq: { need: 1, room: 1792 }, txlist: { need: 1, room: 1792 } } });
  });

  it('refuses an unknown driver with exit 64 naming the choices', async () => {
    const r = await runCli([...ring, '--driver', 'fxr']);
    expect(r.code).toBe(64);
    expect(r.stderr).toMatch(/--driver must be one of upstream, cornelis, hfi2, got "fxr"/);
    expect(r.stdout).toBe('');
  });
});
