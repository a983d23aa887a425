// Shell completion: `completion [bash|zsh]` prints a script that asks this program, by its name (through
// `npx --no-install` in a checkout where it is not on PATH, never by a path that may go stale), for the words
// that may come next; the values of --workload, --fault, --param, --backend, --chip, --driver, --ports, --active-ports and
// --variant, the shells of completion and the engine numbers of the unit found complete by name.
import { usageError } from '../errors.js';

export const SHELLS = ['bash', 'zsh'] as const;
export type Shell = (typeof SHELLS)[number];

/** The option yargs answers completion requests on. */
export const COMPLETION_KEY = '--get-yargs-completions';

/** A word quoted for a POSIX shell. */
function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The shell named by the argument, else the login shell ($SHELL, when it is one of them), else bash; 64 for any other. */
export function chooseShell(raw: string | undefined, envShell: string | undefined): Shell {
  if (raw === undefined) {
    const login = envShell?.split('/').pop();
    if (login === undefined || login === '') return 'bash';
    if ((SHELLS as readonly string[]).includes(login)) return login as Shell;
    throw usageError(
      `completion supports ${SHELLS.join(' and ')}; your shell ($SHELL) is ${JSON.stringify(login)}: name one, e.g. hfi1-sdma completion bash`,
    );
  }
  if ((SHELLS as readonly string[]).includes(raw)) return raw as Shell;
  throw usageError(`completion supports ${SHELLS.join(' and ')}, not ${JSON.stringify(raw)}: hfi1-sdma completion bash`);
}

/** The completion script for `shell`; it runs `name` from PATH, else `npx --no-install name` (a checkout after npm ci). */
export function completionScript(shell: Shell, name = 'hfi1-sdma'): string {
  const q = shellQuote(name);
  const run = `$(command -v ${q} >/dev/null 2>&1 && echo ${q} || echo npx --no-install ${q})`;
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
    case '--param':
      values = (await import('../emu/params.js')).PARAM_NAMES.map((n) => `${n}=`);
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
    case '--variant':
      values = [...(await import('../emu/race/variants.js')).VARIANTS];
      break;
    case 'show':
    case 'ring':
    case 'waiters':
    case 'progress':
    case 'fit':
      values = await engineNumbers(words);
      break;
    default:
      return null;
  }
  return values.filter((v) => v.startsWith(cur));
}

/** The engine numbers of the first unit found under the sysroot the words name (the default's), else 0-15. */
async function engineNumbers(words: readonly string[]): Promise<string[]> {
  const i = words.indexOf('--sysroot');
  const sysroot = (i >= 0 ? words[i + 1] : undefined) ?? process.env.HFI1_SDMA_SYSROOT ?? '/';
  try {
    const { discoverUnits } = await import('../hw/discover.js');
    const [u] = await discoverUnits(sysroot);
    const ids = u?.engineDirIds;
    if (ids && ids.length > 0) return ids.map(String);
  } catch {
    // nothing readable there: the chip's engines
  }
  return Array.from({ length: 16 }, (_, e) => String(e));
}
