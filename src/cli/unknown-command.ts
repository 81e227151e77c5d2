// An unknown command is a coded failure like any other: COMMAND_UNKNOWN with the closest
// commands ("did you mean"), in the --json envelope when --json was given.
import type { Config } from '@oclif/core'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { suggestCommands } from './did-you-mean.js'
import { reportError } from './error-output.js'
import { spokenCommand } from './usage-error.js'

/** Every command an operator can type, as typed (`db status`); hidden ones are left out. */
function knownCommands(config: Pick<Config, 'commands'>): string[] {
  return [...new Set(config.commands.filter((c) => !c.hidden).map((c) => spokenCommand(c.id)))].sort()
}

function unknownCommandError(typed: string, known: readonly string[]): FleetkitError {
  const words = typed.split(/\s+/)
  // `checks extra`: a real command followed by a word it does not take.
  const prefixes = known.filter(
    (k) => k.split(' ').length < words.length && words.slice(0, k.split(' ').length).join(' ') === k,
  )
  const suggestions = [...new Set([...suggestCommands(typed, known), ...prefixes])].slice(0, 3)
  const didYouMean = suggestions.length === 0 ? '' : `; did you mean ${suggestions.map((s) => `"${s}"`).join(' or ')}?`
  // Quoted as JSON, like every other echoed argument: the quotes cannot be closed from inside it.
  return new FleetkitError('COMMAND_UNKNOWN', `no fleetkit command ${JSON.stringify(typed)}${didYouMean}`, {
    actions: [...suggestions.map((s) => `fleetkit help ${s}`), 'fleetkit help'],
    data: { command: typed, suggestions },
  })
}

export interface UnknownCommandContext {
  id: string
  argv: readonly string[]
  config: Pick<Config, 'commands'>
}

/** Prints COMMAND_UNKNOWN (the envelope under --json), sets the exit code and returns it. */
export function reportUnknownCommand(context: UnknownCommandContext): number {
  const e = unknownCommandError(spokenCommand(context.id), knownCommands(context.config))
  reportError(e, {
    json: context.argv.includes('--json'),
    debug: context.argv.includes('--debug') || Boolean(process.env.FLEETKIT_DEBUG),
  })
  return e.exitCode
}
