// What the exporter writes for node_exporter (--textfile) and serves, read from a rendered host of
// each flavour: labels true to the flavour, absolute engine numbers, and no series whose value the
// process could not have seen.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { tempDirs } from '../support/temp.js';

const tmp = tempDirs('truth-export-');

/** Render a host of `flavour` at 300 ms and write its textfile; the metrics text. */
async function textfileOf(flavour: string[], workload = 'mixed:gbps=10'): Promise<string> {
  const d = tmp();
  const root = join(d, 'root');
  const w = await runCli(['emu', 'write', '--sysroot', root, ...flavour, '--workload', workload, '--at-ms', '300']);
  expect(w.code, w.stderr).toBe(0);
  const out = join(d, 'hfi1_sdma.prom');
  const r = await runCli(['--sysroot', root, 'export', '--textfile', out]);
  expect(r.code, r.stderr).toBe(0);
  return readFileSync(out, 'utf8');
}

const FLAVOURS: { args: string[]; info: string; engines: number[] }[] = [
  {
    args: ['--engines', '2'],
    info: 'unit="hfi1_0",name="Omni-Path 100",module="hfi1",chip="wfr",driver="upstream",ports="1"',
    engines: [0, 1],
  },
  {
    args: ['--chip', 'jkr', '--driver', 'cornelis', '--ports', '2', '--engines', '2'],
    info: 'unit="hfi1_0",name="CN5000",module="hfi1",chip="jkr",driver="cornelis",ports="2"',
    engines: [0, 1],
  },
  {
    args: ['--chip', 'jkr', '--driver', 'hfi2', '--ports', '2', '--engines', '8-15'],
    info: 'unit="hfi2_0",name="CN5000",module="hfi2",chip="jkr",driver="hfi2",ports="2"',
    engines: [8, 9, 10, 11, 12, 13, 14, 15],
  },
  {
    args: ['--chip', 'wfr', '--driver', 'hfi2', '--engines', '4-5'],
    info: 'unit="hfi2_0",name="Omni-Path 100",module="hfi2",chip="wfr",driver="hfi2",ports="1"',
    engines: [4, 5],
  },
];

describe('export --textfile of a rendered host, every flavour', () => {
  for (const f of FLAVOURS) {
    it(`${f.args.join(' ')}: unit_info as rendered, only the window's engines`, async () => {
      const text = await textfileOf(f.args);
      expect(text).toMatch(new RegExp(`^hfi1_sdma_unit_info\\{${f.info.replace(/[().]/g, '\\$&')}\\} 1$`, 'm'));
      const engines = new Set([...text.matchAll(/engine="(\d+)"/g)].map((m) => Number(m[1])));
      expect([...engines].sort((a, b) => a - b)).toEqual(f.engines);
    });
  }

  it('writes none of the series the exporter keeps across rounds: one sample would read 0 whatever happened', async () => {
    // PSM writers wait on this host, so the PSM stall counter has series when served live.
    const text = await textfileOf(['--engines', '2'], 'psm');
    expect(text).toMatch(/^hfi1_sdma_waiters\{unit="hfi1_0",engine="unknown",kind="psm"\} [1-9]/m);
    expect(text).not.toMatch(/hfi1_sdma_psm_stalls_total/);
    expect(text).not.toMatch(/hfi1_sdma_longest_stall_seconds/);
    expect(text).not.toMatch(/hfi1_sdma_stalls_total/);
    // The kernel's own counters stay.
    expect(text).toMatch(/^hfi1_sdma_descq_full_total\{unit="hfi1_0",engine="0"\} \d+$/m);
  });
});
