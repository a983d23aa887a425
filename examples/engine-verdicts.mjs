#!/usr/bin/env node
// Each engine's verdict from a snapshot (or a sysroot, or this host): `node engine-verdicts.mjs FILE.tar.gz`.
// A snapshot of several instants is replayed to its end, so stalls and strands are judged in its own time.
import { createMonitor, EXIT_CODES, isHfi1SdmaError, openBackend } from 'hfi1-sdma';

const sysroot = process.argv[2];
let backend;
try {
  // With no argument, this host: no hfi1 or hfi2 unit is an error (E_NO_DEVICE), never the emulator.
  backend = await openBackend(sysroot ? { sysroot } : {});
} catch (e) {
  if (!isHfi1SdmaError(e)) throw e;
  process.stderr.write(`engine-verdicts: ${e.message}\n`);
  process.exit(EXIT_CODES[e.code]);
}
const monitor = createMonitor(backend);
try {
  let last = null;
  for await (const round of monitor.rounds({ intervalMs: 1000, ...(backend.recording ? {} : { count: 3 }) })) last = round;
  for (const u of last?.units ?? []) {
    for (const e of u.engines) {
      process.stdout.write(`${u.info.name}/${e.sample.engine} ${e.verdict.verdict} (${e.verdict.reason})\n`);
    }
  }
  for (const f of last?.findings ?? []) if (f.severity !== 'note') process.stdout.write(`${f.code} ${f.text}\n`);
} finally {
  await monitor.close();
  await backend.close();
}
