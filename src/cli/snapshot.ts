// `snapshot -o FILE.tar.gz`: capture the sources hfi1-sdma reads, for a bug report.
import { hostname } from 'node:os';
import type { Argv } from 'yargs';
import { usageError } from '../errors.js';
import { sysrootOf } from './backend-select.js';
import type { CommandSpec } from './context.js';
import { version } from './version.js';

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
    const m = await captureSnapshot(sysrootOf(ctx.global), out, { host: hostname(), toolVersion: version(), now: new Date() });
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
