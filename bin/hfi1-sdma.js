#!/usr/bin/env node
// hfi1-sdma: the command-line entry. The program is TypeScript compiled to dist/ by `npm ci`
// (the `prepare` script); this file installs the exit handlers, hands the arguments over and
// sets the exit code.
import { installExitHandlers } from '../dist/src/cleanup.js';
import { main } from '../dist/src/cli/main.js';

installExitHandlers();
process.exitCode = await main(process.argv.slice(2));
