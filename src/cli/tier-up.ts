// How soon V8 optimises the command's functions, set before the command does any work (the first import of the
// command's entry, scripts/package/entry.ts; in the bundle the chunks it shares are evaluated first, which only
// defines functions: a function's budget is given when it first runs). The emulator's inner loop is a few hundred small functions whose
// object shapes settle only after its first thousands of events (the rings fill, the senders meet a full ring,
// the fast model starts matching periods). With V8's default budget (66 K bytecode units a function runs before
// it is considered, on Node 20) they are optimised before that, deoptimised on the first new shape ("wrong map",
// "code dependencies") and optimised again, so a command that emulates a second or less spent more CPU compiling
// the model than running it. A budget of a million lets the feedback settle first. Measured on 2 cores (CPU
// seconds, medians of 3-6 runs): `--backend emu engines` 1.34 -> 0.90, the CI recipe `health --backend emu
// --fault stop-fetch@200:3` 1.75 -> 1.28, `watch --count 5` on the emulator 1.91 -> 1.19, `emu run
// --duration-ms 3000` 2.82 -> 1.48 (CN5000 builds alike); a command that does not emulate (fit, a sysroot's
// health) is unchanged, and long runs gain less (the code is optimised either way). Only the command's own
// process: the library never changes a setting of the process that imports it.
import { setFlagsFromString } from 'node:v8';

setFlagsFromString('--interrupt-budget=1000000');
