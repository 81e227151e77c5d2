// Hand-written argv parsing for fleetkit-agent: one subcommand, then --flag VALUE,
// --flag=VALUE or boolean --flag. Small on purpose: the agent bundle carries no CLI framework.
import { FleetkitError } from '../checks/fleetkit-error.js'

export interface ParsedArgv {
  command: string | undefined
  flags: Record<string, string>
  booleans: Set<string>
}

export function parseArgv(
  argv: readonly string[],
  booleanFlags: ReadonlySet<string>,
  valueFlags: ReadonlySet<string>,
): ParsedArgv {
  const flags: Record<string, string> = {}
  const booleans = new Set<string>()
  let command: string | undefined
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!
    if (arg === '-v' || arg === '-h') {
      booleans.add(arg === '-v' ? 'version' : 'help')
      continue
    }
    if (!arg.startsWith('--')) {
      if (command !== undefined) throw usage(`unexpected argument ${JSON.stringify(arg)}`)
      command = arg
      continue
    }
    const eq = arg.indexOf('=')
    const name = arg.slice(2, eq === -1 ? undefined : eq)
    if (booleanFlags.has(name)) {
      if (eq !== -1) throw usage(`--${name} takes no value`)
      booleans.add(name)
      continue
    }
    if (!valueFlags.has(name)) throw usage(`unknown flag --${name}`)
    let value: string | undefined
    if (eq !== -1) value = arg.slice(eq + 1)
    else value = argv[++i]
    if (value === undefined) throw usage(`--${name} needs a value`)
    flags[name] = value
  }
  return { command, flags, booleans }
}

function usage(message: string): FleetkitError {
  return new FleetkitError('USAGE_INVALID', message, { actions: ['fleetkit-agent --help'] })
}
