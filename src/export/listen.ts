// The exporter's --listen address: parsed, resolved before anything is opened, judged for how far
// it exposes the metrics, and bind failures turned into errors with their documented exit codes.
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { Hfi1SdmaError, usageError } from '../errors.js';

/** Parse `HOST:PORT` (IPv6 as `[::1]:PORT`); E_USAGE for anything else. */
export function parseListen(raw: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(raw);
  if (!m) throw usageError(`--listen expects HOST:PORT (e.g. 127.0.0.1:9469 or [::1]:9469), got ${JSON.stringify(raw)}`);
  const port = Number(m[3]);
  if (port > 65535) throw usageError(`--listen port must be from 0 to 65535, got ${m[3]}`);
  return { host: m[1] ?? m[2] ?? '127.0.0.1', port };
}

type Lookup = (host: string) => Promise<{ address: string; family: number }>;

/** Resolve the host to one address (an IP literal as is); E_USAGE naming it when it does not resolve. */
export async function resolveListenHost(host: string, lookup: Lookup = (h) => dnsLookup(h)): Promise<string> {
  if (isIP(host)) return host;
  try {
    return (await lookup(host)).address;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? String(e);
    throw usageError(`--listen ${host}: cannot resolve the host name (${code}): give an address such as 127.0.0.1 or [::1]`);
  }
}

/** How far an address exposes what is served on it. */
export type Exposure = 'loopback' | 'every-interface' | 'interface';

/** Classify a resolved address: loopback stays on this host; anything else reaches beyond it. */
export function exposureOf(address: string): Exposure {
  const a = address.toLowerCase();
  if (a === '0.0.0.0' || /^[0:]+$/.test(a) || a === '::ffff:0.0.0.0') return 'every-interface';
  if (/^127\./.test(a) || a === '::1' || /^::ffff:127\./.test(a)) return 'loopback';
  return 'interface';
}

/** The stderr warning for an address that exposes the metrics beyond this host; null for loopback. */
export function exposureWarning(address: string, port: number): string | null {
  const e = exposureOf(address);
  if (e === 'loopback') return null;
  const where = e === 'every-interface' ? 'on every interface' : `on ${address}`;
  return `hfi1-sdma export: warning: listening ${where} (port ${port}): metrics are exposed beyond this host; put a firewall in front, or use 127.0.0.1 and scrape through a local agent\n`;
}

/** Turn a failure to bind into the documented error: 73 port in use, 77 permission, 64 bad address (EINVAL included). */
export function bindError(e: unknown, host: string, port: number): Hfi1SdmaError | null {
  const code = (e as NodeJS.ErrnoException).code;
  const where = `--listen ${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (code === 'EADDRINUSE') {
    return new Hfi1SdmaError('E_CANT_CREATE', `${where}: address already in use: pick another port or stop what holds it`, {
      cause: e,
    });
  }
  if (code === 'EACCES' || code === 'EPERM') {
    return new Hfi1SdmaError(
      'E_PERMISSION',
      `${where}: permission denied: ports below 1024 need root (or CAP_NET_BIND_SERVICE); pick a port from 1024`,
      { cause: e },
    );
  }
  if (code === 'EAFNOSUPPORT')
    return usageError(`${where}: this host has no IPv6 (or IPv4) stack for that address: use the other family`);
  if (code === 'EADDRNOTAVAIL') return usageError(`${where}: not an address of this host: give one of its addresses`);
  if (code === 'EINVAL') {
    const linkLocal = /^fe[89ab]/i.test(host)
      ? ' (a link-local IPv6 address needs the interface it is on, which --listen does not take)'
      : '';
    return usageError(
      `${where}: this address cannot be listened on (EINVAL)${linkLocal}: give a loopback or a global address of this host`,
    );
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'EAI_NONAME') {
    return usageError(`${where}: cannot resolve the host name (${code}): give an address such as 127.0.0.1 or [::1]`);
  }
  return null;
}
