// The gateway's systemd unit as `fleetkit gateway install` writes it: the shipped template
// (systemd/fleetkit-gateway.service, hardening and all) with this machine's paths and account.
export const GATEWAY_UNIT_NAME = 'fleetkit-gateway.service'
export const GATEWAY_ACCOUNT = 'fleetkit-gateway'

export interface GatewayUnitOptions {
  /** The command that runs this fleetkit: the Node.js binary and the CLI's bin script, absolute. */
  command: readonly string[]
  stateDir: string
  user: string
  group: string
}

/**
 * A word of ExecStart: systemd expands `%` specifiers and splits on spaces, so `%` is doubled
 * and a word with a space is quoted. Characters systemd would read otherwise are refused earlier
 * (unitPathProblem).
 */
function unitWord(word: string): string {
  const escaped = word.replaceAll('%', '%%')
  return /\s/.test(escaped) ? `"${escaped}"` : escaped
}

/** Why a path cannot go into the unit as is, or undefined when it can. */
export function unitPathProblem(path: string): string | undefined {
  if (!path.startsWith('/')) return 'is not absolute'
  // Quotes, backslashes and control characters change how systemd reads the line; `$` expands.
  if (/["'\\$\p{Cc}]/u.test(path)) return 'holds a quote, backslash, $ or control character'
  return undefined
}

/** Replaces each `Key=` line the template must have; a template without one is a bug. */
export function renderGatewayUnit(template: string, options: GatewayUnitOptions): string {
  const command = options.command.map(unitWord).join(' ')
  const wanted: Record<string, string> = {
    User: options.user,
    Group: options.group,
    Environment: `FLEETKIT_STATE_DIR=${unitWord(options.stateDir)}`,
    ExecStart: `${command} gateway serve`,
    ExecStopPost: `-${command} db stop`,
    ReadWritePaths: unitWord(options.stateDir),
  }
  const seen = new Set<string>()
  const lines = template.split('\n').map((line) => {
    const key = /^([A-Za-z]+)=/.exec(line)?.[1]
    if (key === undefined || !(key in wanted)) return line
    if (key === 'Environment' && !line.startsWith('Environment=FLEETKIT_STATE_DIR=')) return line
    seen.add(key)
    return `${key}=${wanted[key]}`
  })
  const missing = Object.keys(wanted).filter((key) => !seen.has(key))
  if (missing.length > 0) throw new Error(`the gateway unit template lacks ${missing.join(', ')}`)
  return lines.join('\n')
}
