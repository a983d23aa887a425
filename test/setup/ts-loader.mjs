// `node --import ./test/setup/ts-loader.mjs`: Node loads the TypeScript sources itself (see ts-hooks.mjs), and
// maps stack traces back to them.
import { register } from 'node:module';

process.setSourceMapsEnabled(true);
register('./ts-hooks.mjs', import.meta.url);
