// Where `snapshot --redact` keeps the site's map of masks unless told: one place per user, so that every capture of
// the site masks the same names the same way.
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Where the map is kept unless told: /etc/hfi1-sdma for root, else the user's configuration directory. */
export function defaultRedactMapPath(env: NodeJS.ProcessEnv = process.env, uid = process.getuid?.() ?? 0): string {
  if (env.HFI1_SDMA_REDACT_MAP) return env.HFI1_SDMA_REDACT_MAP;
  if (uid === 0) return '/etc/hfi1-sdma/redact-map.json';
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'hfi1-sdma', 'redact-map.json');
}
