import { mkdtempSync } from 'node:fs';
import { emulatedCapture, SCENARIOS } from '../test/report/capture.js';
import { runCli } from '../test/support/cli.js';
const d = mkdtempSync('/tmp/t-');
for (const [name, s] of Object.entries(SCENARIOS)) {
  let c = process.cpuUsage(); let t = performance.now();
  const f = await emulatedCapture(d, name, s.units, s.plan);
  let u = process.cpuUsage(c); console.log(name, 'capture cpu', ((u.user + u.system) / 1000).toFixed(0), 'ms sys', (u.system/1000).toFixed(0), 'wall', (performance.now() - t).toFixed(0));
  c = process.cpuUsage(); t = performance.now();
  await runCli(['report', f, '-o', `${d}/${name}.html`]);
  u = process.cpuUsage(c); console.log(name, 'report cpu', ((u.user + u.system) / 1000).toFixed(0), 'ms sys', (u.system/1000).toFixed(0), 'wall', (performance.now() - t).toFixed(0));
}
