#!/usr/bin/env node
// hfi1-sdma: the command-line entry. `npm ci` (the `prepare` script) compiles the TypeScript and
// bundles the command into dist/bundle (scripts/bundle.ts), which installs the exit handlers, runs
// the command and sets the exit code.
import '../dist/bundle/main.mjs';
