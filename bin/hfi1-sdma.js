#!/usr/bin/env node
// hfi1-sdma: the command-line entry. The program is TypeScript compiled to dist/ by `npm ci`
// (the `prepare` script); this file only hands the arguments over and sets the exit code.
import { main } from '../dist/src/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
