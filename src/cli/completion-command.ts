// `completion [bash|zsh]` as a command of its own, so that `completion --help` is help like every other command's.
// The script itself is printed before the parser is built (main.ts): this is what --help and the command list see.
import type { Argv } from 'yargs';
import { chooseShell, completionScript, SHELLS } from './completion.js';
import type { CommandSpec } from './context.js';

export const completionCommand: CommandSpec = {
  command: 'completion [shell]',
  describe: 'print a shell completion script for bash or zsh (default: your $SHELL)',
  builder: (y: Argv) =>
    y
      .positional('shell', { type: 'string', describe: `${SHELLS.join(' or ')}` })
      .example('eval "$($0 completion bash)"', 'in ~/.bashrc')
      .example('eval "$($0 completion zsh)"', 'in ~/.zshrc')
      .epilogue(
        'The script calls hfi1-sdma by its name, or npx --no-install hfi1-sdma where it is not on PATH (a checkout after npm ci). Another shell is a usage error (64).',
      ),
  async run(args, ctx) {
    ctx.io.stdout(completionScript(chooseShell(args.shell === undefined ? undefined : String(args.shell), ctx.io.env.SHELL)));
    return 0;
  },
};
