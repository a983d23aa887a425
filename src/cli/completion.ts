// Shell completion: `completion [bash|zsh]` prints a script that asks this very program (by the
// path it was run as, so it works without hfi1-sdma on PATH, e.g. after `npm ci`) for the words
// that may come next; values of --workload, --fault, --backend, --chip, --driver, --ports and --active-ports complete by name.
import { usageError } from '../errors.js';

export const SHELLS = ['bash', 'zsh'] as const;
export type Shell = (typeof SHELLS)[number];

/** The option yargs answers completion requests on. */
export const COMPLETION_KEY = '--get-yargs-completions';

/** A word quoted for a POSIX shell. */
function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The shell named by the argument, else the login shell ($SHELL), else bash; 64 for any other. */
export function chooseShell(raw: string | undefined, envShell: string | undefined): Shell {
  if (raw === undefined) return envShell?.endsWith('zsh') ? 'zsh' : 'bash';
  if ((SHELLS as readonly string[]).includes(raw)) return raw as Shell;
  throw usageError(`completion supports ${SHELLS.join(' and ')}, not ${JSON.stringify(raw)}: hfi1-sdma completion bash`);
}

/** The completion script for `shell`; `invoke` is the command line that runs this program. */
export function completionScript(shell: Shell, invoke: readonly string[], name = 'hfi1-sdma'): string {
  const run = invoke.map(shellQuote).join(' ');
  const fn = `_${name.replace(/[^\w]/g, '_')}_completions`;
  if (shell === 'bash') {
    return `# ${name} completion for bash: eval "$(${name} completion bash)" (or add this to ~/.bashrc)
${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}"
  local -a words
  mapfile -t words < <(${run} ${COMPLETION_KEY} "\${COMP_WORDS[@]:0:COMP_CWORD+1}" 2>/dev/null)
  mapfile -t COMPREPLY < <(compgen -W "\${words[*]}" -- "$cur")
}
complete -o bashdefault -o default -F ${fn} ${name}
`;
  }
  return `#compdef ${name}
# ${name} completion for zsh: eval "$(${name} completion zsh)" (or add this to ~/.zshrc)
${fn}() {
  local -a reply
  local IFS=$'\\n'
  reply=($(ZSH_NAME=zsh ${run} ${COMPLETION_KEY} "\${(@)words[1,CURRENT]}" 2>/dev/null))
  if (( \${#reply} > 0 )); then
    _describe 'values' reply
  else
    _default
  fi
}
if [[ "\${zsh_eval_context[-1]}" == "loadautofunc" ]]; then
  ${fn} "$@"
else
  compdef ${fn} ${name}
fi
`;
}

/**
 * Values for the option before the word being completed (`--workload ⇥`, `--fault ⇥`), or null
 * to let the parser complete commands and options. `words` are the words after COMPLETION_KEY,
 * the program name first and the word being completed last.
 */
export async function valueCompletions(words: readonly string[]): Promise<string[] | null> {
  const prev = words.length >= 2 ? words[words.length - 2] : undefined;
  const cur = words[words.length - 1] ?? '';
  let values: string[];
  switch (prev) {
    case '--workload':
      values = (await import('../emu/workload.js')).WORKLOADS.map((w) => w.name);
      break;
    case '--fault':
      values = (await import('../emu/faults.js')).FAULT_NAMES.map((n) => `${n}@`);
      break;
    case '--backend':
      values = ['auto', 'hw', 'emu'];
      break;
    case '--chip':
      values = ['wfr', 'jkr'];
      break;
    case '--driver':
      values = ['upstream', 'cornelis', 'hfi2'];
      break;
    case '--ports':
      values = ['1', '2'];
      break;
    case '--active-ports':
      values = ['1', '2', '1,2'];
      break;
    case 'completion':
      values = [...SHELLS];
      break;
    default:
      return null;
  }
  return values.filter((v) => v.startsWith(cur));
}
