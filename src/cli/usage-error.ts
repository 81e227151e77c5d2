// oclif's parse errors as USAGE_INVALID: the whole message on one line (which flag or argument,
// which values are allowed) and `fleetkit help <command>` as the next step.
import { FleetkitError, isFleetkitError } from '../checks/fleetkit-error.js'
import { suggestFlags } from './did-you-mean.js'

/** The command as an operator types it: `node token`, not oclif's `node:token`. */
export function spokenCommand(commandId: string | undefined): string {
  return (commandId ?? '').replaceAll(':', ' ').trim()
}

function helpAction(commandId: string | undefined): string {
  const spoken = spokenCommand(commandId)
  return spoken === '' ? 'fleetkit help' : `fleetkit help ${spoken}`
}

/** True for the errors oclif's parser throws (missing or unexpected arguments, bad flags and values). */
export function isParseError(error: unknown): boolean {
  if (!(error instanceof Error)) return false
  const parse = (error as { parse?: unknown }).parse
  return (typeof parse === 'object' && parse !== null) || /^Parsing --/.test(error.message)
}

// eslint-disable-next-line no-control-regex -- oclif colours parts of its messages
const ANSI = /\x1b\[[0-9;]*m/g

/**
 * oclif's multi-line message on one line, nothing dropped but the "--help" hint (the action says it):
 * "Missing 1 required arg:\nnode  node id" → "Missing 1 required arg: node (node id)".
 */
export function oneLineUsageMessage(message: string): string {
  const text = message.replace(ANSI, '').replace(/\r/g, '')
  const paragraphs = text
    .split(/\n\s*\n/)
    .map((p) =>
      p
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '' && !/^See more help with --help$/.test(l)),
    )
    .filter((lines) => lines.length > 0)
  const rendered = paragraphs.map((lines) => {
    let [head, ...rest] = lines as [string, ...string[]]
    // "The following error occurred:" says nothing the error itself does not.
    if (/^The following errors? occurred:$/.test(head) && rest.length > 0)
      [head, ...rest] = rest as [string, ...string[]]
    const items = rest.map((line) => line.replace(/^(\S+)\s{2,}(.+)$/, '$1 ($2)'))
    if (items.length === 0) return head
    if (/^Parsing --\S+$/.test(head)) return `${head}: ${items.join('; ')}`
    return head.endsWith(':') ? `${head} ${items.join(', ')}` : `${head} ${items.join('; ')}`
  })
  return rendered.join(' ').replace(/\s+/g, ' ').trim() || 'the command line could not be parsed'
}

/**
 * The usage error for `error`, or undefined when it is not one. A USAGE_INVALID a command threw
 * itself gets the help action too; oclif's parse errors become USAGE_INVALID with their whole message.
 */
export function usageError(error: unknown, commandId: string | undefined): FleetkitError | undefined {
  const help = helpAction(commandId)
  if (isFleetkitError(error)) {
    if (error.code !== 'USAGE_INVALID' || error.actions.includes(help)) return undefined
    const actions = error.actions.filter((a) => a !== 'fleetkit runbook USAGE_INVALID' && a !== 'fleetkit help')
    return new FleetkitError('USAGE_INVALID', error.message, {
      actions: [...actions, help],
      detailLines: error.detailLines,
      cause: error.cause ?? error,
      ...(error.data === undefined ? {} : { data: error.data }),
    })
  }
  if (!isParseError(error)) return undefined
  const suggestions = flagSuggestions(error)
  const didYouMean = suggestions.length === 0 ? '' : `; did you mean ${suggestions.map((s) => `"${s}"`).join(' or ')}?`
  return new FleetkitError('USAGE_INVALID', `${oneLineUsageMessage((error as Error).message)}${didYouMean}`, {
    actions: [help],
    cause: error,
    ...(suggestions.length === 0 ? {} : { data: { suggestions } }),
  })
}

/**
 * For oclif's "Nonexistent flag" error: the command's own flags nearest each unknown one. oclif
 * keeps the flags it parsed against on the error (`parse.input.flags`), so no command list is needed.
 */
function flagSuggestions(error: unknown): string[] {
  const unknown = (error as { flags?: unknown }).flags
  const declared = (error as { parse?: { input?: { flags?: unknown } } }).parse?.input?.flags
  if (!Array.isArray(unknown) || typeof declared !== 'object' || declared === null) return []
  const known = Object.entries(declared as Record<string, { hidden?: boolean }>)
    .filter(([, flag]) => flag?.hidden !== true)
    .map(([name]) => `--${name}`)
  return [...new Set(unknown.flatMap((typed) => suggestFlags(String(typed).split('=')[0]!, known)))].slice(0, 3)
}
