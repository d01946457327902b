import { COMMAND_TABLE, optionsOf, type CommandSpec, type Shell } from './cli-args.js';
import { PRODUCT_NAME } from './version.js';

/**
 * `completion bash|zsh|fish`: a script that completes this program's commands, subcommands,
 * options and the words an argument is one of. It is generated from the command table that --help
 * and "did you mean" read (USAGE), so a new command completes with no list to keep. The script
 * holds the table: a TAB runs no process.
 */
export function completionScript(shell: Shell): string {
  const entries = completionEntries();
  const valueOptions = optionsTakingValues();
  const fn = `_${PRODUCT_NAME.replace(/-/g, '_')}`;
  if (shell === 'fish') return fishScript(fn, entries, valueOptions);
  const [first, second, count] = shell === 'bash' ? ['${words[0]-}', '${words[1]-}', '${#words[@]}'] : ['${ws[1]-}', '${ws[2]-}', '${#ws}'];
  const table = entries.map(
    (e) => `    ${caseKey(e.key)}) n=${e.words} o=${shellQuote(e.options.join(' '))} p=${shellQuote(e.choices.join(' '))} ;;`,
  );
  const lookup = [`  local n=0 o= p=`, `  case "${first} ${second}" in`, ...table, `  esac`, `  (( ${count} > n )) && p=`];
  if (shell === 'bash') {
    return `# bash completion for ${PRODUCT_NAME}. Load it with: source <(${PRODUCT_NAME} completion bash)
${fn}() {
  local cur=\${COMP_WORDS[COMP_CWORD]} words=() skip= i
  # The command words typed so far: not options, nor the value after an option that takes one.
  for ((i = 1; i < COMP_CWORD; i++)); do
    if [[ -n $skip ]]; then skip=; continue; fi
    case \${COMP_WORDS[i]} in
      --) return ;;
      ${valueOptions.join('|')}) skip=1 ;;
      -*) ;;
      *) words+=("\${COMP_WORDS[i]}") ;;
    esac
  done
  [[ -n $skip ]] && return
${lookup.join('\n')}
  if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "$o" -- "$cur")); else COMPREPLY=($(compgen -W "$p" -- "$cur")); fi
}
# Where nothing is offered (a value, a path), file names are.
complete -o default -F ${fn} ${PRODUCT_NAME}
`;
  }
  return `#compdef ${PRODUCT_NAME}
# zsh completion for ${PRODUCT_NAME}. Load it (after compinit) with: source <(${PRODUCT_NAME} completion zsh)
${fn}() {
  local -a ws
  local skip= i
  # The command words typed so far: not options, nor the value after an option that takes one.
  for ((i = 2; i < CURRENT; i++)); do
    if [[ -n $skip ]]; then skip=; continue; fi
    case \${words[i]} in
      --) _files; return ;;
      ${valueOptions.join('|')}) skip=1 ;;
      -*) ;;
      *) ws+=("\${words[i]}") ;;
    esac
  done
  if [[ -n $skip ]]; then _files; return; fi
${lookup.join('\n')}
  if [[ \${words[CURRENT]} == -* ]]; then compadd -- \${=o}
  elif [[ -n $p ]]; then compadd -- \${=p}
  else _files; fi
}
compdef ${fn} ${PRODUCT_NAME}
`;
}

function fishScript(fn: string, entries: Entry[], valueOptions: string[]): string {
  const table = entries.map(
    // fish matches a quoted case as a pattern; unquoted, a * would be expanded to file names first.
    (e) =>
      `        case ${shellQuote(e.key)}\n            set n ${e.words}; set -- o ${e.options.join(' ')}; set -- p ${e.choices.join(' ')}`,
  );
  return `# fish completion for ${PRODUCT_NAME}. Load it with: ${PRODUCT_NAME} completion fish | source
function ${fn}
    set -l ws
    set -l skip 0
    # The command words typed so far: not options, nor the value after an option that takes one.
    for w in (commandline -opc)[2..-1]
        if test $skip = 1
            set skip 0
            continue
        end
        switch $w
            case '--'
                __fish_complete_path (commandline -ct)
                return
            case ${valueOptions.join(' ')}
                set skip 1
            case '-*'
            case '*'
                set -a ws $w
        end
    end
    if test $skip = 1
        __fish_complete_path (commandline -ct)
        return
    end
    set -l n 0
    set -l o
    set -l p
    switch "$ws[1] $ws[2]"
${table.join('\n')}
    end
    if string match -q -- '-*' (commandline -ct)
        printf '%s\\n' $o
    else if test (count $ws) -le $n; and test (count $p) -gt 0
        printf '%s\\n' $p
    else
        __fish_complete_path (commandline -ct)
    end
end
complete -c ${PRODUCT_NAME} -f -a '(${fn})'
`;
}

interface Entry {
  /** What the case matches: the first two command words typed, joined by a space ("token create", "token *"). */
  key: string;
  /** How many command words the entry's own are: a choice is offered only as the next one. */
  words: number;
  options: string[];
  choices: string[];
}

/**
 * One entry per command and subcommand, most specific first: a command with subcommands offers
 * them as its choices; the program alone offers its commands.
 */
function completionEntries(): Entry[] {
  const commands = [...new Set(COMMAND_TABLE.flatMap((spec) => spec.words.slice(0, 1)))];
  const subsOf = (command: string) => COMMAND_TABLE.filter((spec) => spec.words[0] === command && spec.words.length === 2);
  const names = (spec: CommandSpec) => optionsOf(spec).map((option) => option.name);
  const entries: Entry[] = [];
  for (const spec of COMMAND_TABLE.filter((s) => s.words.length === 2))
    entries.push({ key: spec.words.join(' '), words: 2, options: names(spec), choices: spec.choices });
  for (const command of commands) {
    const subs = subsOf(command);
    const own = COMMAND_TABLE.find((spec) => spec.words.length === 1 && spec.words[0] === command);
    entries.push({
      key: `${command} *`,
      words: 1,
      options: own ? names(own) : ['--help'],
      choices: subs.length ? subs.map((spec) => spec.words[1]!) : command === 'help' ? commands : (own?.choices ?? []),
    });
  }
  const serve = COMMAND_TABLE.find((spec) => spec.words.length === 0)!;
  entries.push({ key: ' ', words: 0, options: names(serve), choices: commands });
  return entries;
}

/** Every option that a value follows; refused if one command reads it as a flag and another as taking a value. */
function optionsTakingValues(): string[] {
  const all = COMMAND_TABLE.flatMap(optionsOf);
  const values = new Set(all.filter((option) => option.takesValue).map((option) => option.name));
  const both = all.find((option) => !option.takesValue && values.has(option.name));
  if (both) throw new Error(`${both.name} takes a value in one command's usage and none in another's: completion cannot tell them apart.`);
  return [...values];
}

/** A case pattern: the words quoted, and a trailing `*` left to match anything. */
function caseKey(key: string): string {
  return key.endsWith(' *') ? `${shellQuote(key.slice(0, -1))}*` : shellQuote(key);
}

/** A word for sh, bash, zsh and fish alike: in single quotes (none of the table's words holds one). */
function shellQuote(text: string): string {
  if (text.includes("'")) throw new Error(`a completion word holds a quote: ${text}`);
  return `'${text}'`;
}
