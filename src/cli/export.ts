// `export`: the Prometheus exporter. Binds loopback unless told otherwise; runs until SIGINT or
// SIGTERM, then closes the listener and the backend and exits 0.
import type { Argv } from 'yargs';
import { usageError } from '../errors.js';
import { parseIntArg } from './args.js';
import type { CommandSpec } from './context.js';

/** Parse `HOST:PORT` (IPv6 as `[::1]:PORT`). */
export function parseListen(raw: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(raw);
  if (!m) throw usageError(`--listen expects HOST:PORT (e.g. 127.0.0.1:9469 or [::1]:9469), got ${JSON.stringify(raw)}`);
  const port = parseIntArg('--listen port', m[3], 0, 65535);
  return { host: m[1] ?? m[2] ?? '127.0.0.1', port };
}

export const exportCommand: CommandSpec = {
  fallback: false,
  command: 'export',
  describe: 'Prometheus exporter: per-engine metrics on /metrics',
  builder: (y: Argv) =>
    y
      .option('listen', { type: 'string', default: '127.0.0.1:9469', describe: 'address to listen on (loopback by default)' })
      .option('min-interval-ms', { type: 'string', default: '1000', describe: 'scrapes within this interval share one sample' })
      .option('stall-ms', { type: 'string', default: '1000', describe: 'no head movement this long while in flight is a stall' })
      .example('$0 export', 'serve http://127.0.0.1:9469/metrics')
      .example('$0 export --listen 0.0.0.0:9469', 'serve every interface (put a firewall in front)'),
  async run(args, ctx) {
    const { host, port } = parseListen(String(args.listen));
    const minIntervalMs = parseIntArg('--min-interval-ms', args.minIntervalMs, 0, 3_600_000);
    const stallMs = parseIntArg('--stall-ms', args.stallMs, 1, 3_600_000);
    const { startExporter } = await import('../export/server.js');
    const backend = await ctx.openBackend();
    const advance = (backend as { advanceMs?: (ms: number) => void | Promise<void> }).advanceMs?.bind(backend);
    let server: import('node:http').Server | undefined;
    try {
      const started = await startExporter(
        {
          backend,
          minIntervalMs,
          stallMs,
          nowMs: () => Date.now(),
          log: (line) => ctx.io.stderr(`${line}\n`),
          ...(advance ? { beforeSample: (ms: number) => advance(ms) } : {}),
        },
        host,
        port,
      );
      server = started.server;
      ctx.io.stderr(
        `hfi1-sdma export: serving http://${host.includes(':') ? `[${host}]` : host}:${started.port}/metrics (backend ${backend.kind})\n`,
      );
      await new Promise<void>((resolve) => {
        const stop = () => {
          process.off('SIGINT', stop);
          process.off('SIGTERM', stop);
          resolve();
        };
        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
      });
      return 0;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE') throw usageError(`--listen ${host}:${port}: address already in use; pick another port`);
      if (code === 'EACCES') throw usageError(`--listen ${host}:${port}: permission denied (ports below 1024 need root)`);
      if (code === 'EADDRNOTAVAIL') throw usageError(`--listen ${host}:${port}: no such local address`);
      throw e;
    } finally {
      const s = server;
      if (s) {
        await new Promise<void>((resolve) => {
          s.close(() => resolve());
          s.closeAllConnections();
        });
      }
      await backend.close();
    }
  },
};
