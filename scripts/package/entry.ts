// The bundled command-line entry: what bin/hfi1-sdma.js does in the repository, from the sources.
import { installExitHandlers } from '../../src/cleanup.js';
import { main } from '../../src/cli/main.js';

installExitHandlers();
process.exitCode = await main(process.argv.slice(2));
