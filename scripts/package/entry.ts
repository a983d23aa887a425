// The bundled command-line entry: what bin/hfi1-sdma.js does in the repository, from the sources.
// First, before the command does any work: its V8 tier-up budget (tier-up.ts).
import '../../src/cli/tier-up.js';
import { installExitHandlers } from '../../src/cleanup.js';
import { main } from '../../src/cli/main.js';

installExitHandlers();
process.exitCode = await main(process.argv.slice(2));
