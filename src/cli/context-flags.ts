// The next commands an error names are text written where the error is raised, which cannot know the
// --state-dir, --definition or --pki-dir the operator gave. Run as printed, `fleetkit db restore FILE
// --force` after `fleetkit db restore FILE --state-dir /srv/s1` would replace the default state's
// database. So the command line's context flags are added to every fleetkit command of the actions that
// takes them and does not name them already. A flag set through the environment needs nothing: the
// shell that ran the command still has it.

/** The flags that say which fleet a command acts on. */
const CONTEXT_FLAGS = ['state-dir', 'definition', 'pki-dir'] as const

export interface ContextFlag {
  name: string
  char?: string
  value: string
}

/** What the command line knows of a command: its flags, with their one-letter names. */
export type FlagsOf = (commandId: string) => Readonly<Record<string, { char?: string }>> | undefined

/**
 * The context flags given on the command line `argv` (not from the environment or a default):
 * `--name VALUE`, `--name=VALUE`, `-c VALUE` or `-cVALUE`; the last one given wins, as for oclif.
 */
export function givenContextFlags(
  argv: readonly string[],
  flags: Readonly<Record<string, { char?: string }>>,
): ContextFlag[] {
  const given = new Map<string, ContextFlag>()
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '--') break
    for (const name of CONTEXT_FLAGS) {
      if (!(name in flags)) continue
      const char = flags[name]?.char
      let value: string | undefined
      if (arg === `--${name}` || (char !== undefined && arg === `-${char}`)) value = argv[++i]
      else if (arg.startsWith(`--${name}=`)) value = arg.slice(name.length + 3)
      else if (char !== undefined && arg.startsWith(`-${char}`) && !arg.startsWith('--'))
        value = arg.slice(arg[2] === '=' ? 3 : 2)
      else continue
      if (value !== undefined) given.set(name, { name, ...(char === undefined ? {} : { char }), value })
      break
    }
  }
  return [...given.values()]
}

/**
 * A fleetkit command to run in an action: the word `fleetkit` and the lower-case words after it, where
 * a command starts (the action's start, after a colon, `or`, `then`, `run`, `sudo` or a parenthesis), not one named in
 * passing ("a file written by fleetkit db backup").
 */
const COMMAND_IN_TEXT = /(?<=^|: |\bor |\bthen |\brun |\bsudo |\()fleetkit((?: [a-z][a-z0-9-]*)+)/g

/** `action` with the `given` flags added after each fleetkit command in it that takes them and lacks them. */
export function withContextFlags(action: string, given: readonly ContextFlag[], flagsOf: FlagsOf): string {
  if (given.length === 0 || action.includes('--help')) return action
  return action.replace(COMMAND_IN_TEXT, (whole, words: string) => {
    const parts = words.trim().split(' ')
    // The longest run of words that names a command: `db restore`, not `db` (a topic) or `db restore FILE`.
    for (let n = parts.length; n > 0; n--) {
      const flags = flagsOf(parts.slice(0, n).join(':'))
      if (!flags) continue
      const missing = given.filter((flag) => flag.name in flags && !names(action, flag))
      if (missing.length === 0) return whole
      const added = missing.map((flag) => ` --${flag.name} ${shellWord(flag.value)}`).join('')
      return `fleetkit ${parts.slice(0, n).join(' ')}${added}${words.slice(parts.slice(0, n).join(' ').length + 1)}`
    }
    return whole
  })
}

/** Whether `action` already names the flag (its long name, or its letter as a word). */
function names(action: string, flag: ContextFlag): boolean {
  if (action.includes(`--${flag.name}`)) return true
  return flag.char !== undefined && new RegExp(`(^| )-${flag.char}( |=|$)`).test(action)
}

/** A value as one shell word: left bare when it needs no quoting, else in single quotes. */
function shellWord(value: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`
}
