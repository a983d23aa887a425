// The tool version, for the commands (src/version.ts reads it).
export { version } from '../version.js';
