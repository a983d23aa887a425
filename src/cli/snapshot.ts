// `snapshot -o FILE.tar.gz`: capture the sources hfi1-sdma reads, for a bug report.
import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Argv } from 'yargs';
import { usageError } from '../errors.js';
import { sysrootOf } from './backend-select.js';
import type { CommandSpec, GlobalOptions } from './context.js';
import { version } from './version.js';

/** Render the emulator's sysroot into a temporary tree and capture that. */
async function captureEmulated(global: GlobalOptions, out: string, meta: { host: string; toolVersion: string; now: Date }) {
  const [{ emuUnitFromOptions, defaultAtMs }, { writeSysroot }, { captureSnapshot }] = await Promise.all([
    import('../emu/index.js'),
    import('../emu/sysroot.js'),
    import('../snapshot/capture.js'),
  ]);
  const u = emuUnitFromOptions(global);
  u.runUntilMs(defaultAtMs(global));
  const dir = await mkdtemp(join(tmpdir(), 'hfi1-sdma-emu-'));
  try {
    await writeSysroot(u, dir);
    return await captureSnapshot(dir, out, meta);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export const snapshotCommand: CommandSpec = {
  command: 'snapshot',
  describe: 'capture sysfs/debugfs/procfs and the SDMA CSR block into a .tar.gz (read back with --sysroot FILE)',
  builder: (y: Argv) =>
    y
      .option('o', { alias: 'output', type: 'string', demandOption: true, describe: 'archive to write (FILE.tar.gz)' })
      .example('sudo $0 snapshot -o node17.tar.gz', 'capture this host')
      .example('$0 --sysroot node17.tar.gz engines', 'inspect the capture elsewhere'),
  async run(args, ctx) {
    const out = String(args.o ?? '');
    if (!/\.(tar\.gz|tgz)$/.test(out)) throw usageError(`-o must name a .tar.gz (or .tgz) file, got ${JSON.stringify(out)}`);
    const { captureSnapshot } = await import('../snapshot/capture.js');
    const meta = { host: hostname(), toolVersion: version(), now: new Date() };
    const sysroot = sysrootOf(ctx.global);
    let emulated = ctx.global.backend === 'emu';
    if (ctx.global.backend === 'auto') {
      const { findUnits } = await import('../hw/index.js');
      emulated = (await findUnits(sysroot)).length === 0;
      if (emulated)
        ctx.io.stderr(`hfi1-sdma: no hfi1 unit under ${sysroot}: capturing the emulator's host instead (--backend emu)\n`);
    }
    const m = emulated ? await captureEmulated(ctx.global, out, meta) : await captureSnapshot(sysroot, out, meta);
    const missing = m.sources.filter((s) => !s.captured);
    if (ctx.global.json) {
      ctx.io.stdout(`${JSON.stringify({ file: out, ...m })}\n`);
    } else {
      ctx.io.stdout(
        `wrote ${out}: ${m.units.map((u) => u.name).join(', ')}, ${m.sources.length - missing.length} files captured` +
          (missing.length
            ? `, ${missing.length} not readable:\n${missing.map((s) => `  ${s.path}: ${s.reason}`).join('\n')}\n`
            : '\n'),
      );
    }
    return 0;
  },
};
