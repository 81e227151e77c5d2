// The units `fleetkit gateway install` writes: the shipped templates (systemd/fleetkit-gateway.service and,
// with --with-reconcile, systemd/fleetkit-reconcile.service; with an off-host archive remote,
// systemd/fleetkit-archive-ship.service and its timer, hardening and all) with this machine's paths and account.
export const GATEWAY_UNIT_NAME = 'fleetkit-gateway.service'
export const RECONCILE_UNIT_NAME = 'fleetkit-reconcile.service'
export const ARCHIVE_SHIP_UNIT_NAME = 'fleetkit-archive-ship.service'
export const ARCHIVE_SHIP_TIMER_NAME = 'fleetkit-archive-ship.timer'
export { GATEWAY_ACCOUNT } from '../../config/gateway-account.js'

export interface GatewayUnitOptions {
  /** The command that runs this fleetkit: the Node.js binary and the CLI's bin script, absolute. */
  command: readonly string[]
  stateDir: string
  user: string
  group: string
  /**
   * The WAL archive directory when it lies outside the state (`fleetkit db archive enable DIR`): the
   * server the gateway starts copies segments there, which ProtectSystem=strict makes read-only otherwise.
   */
  archiveDir?: string
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

export function renderGatewayUnit(template: string, options: GatewayUnitOptions): string {
  const command = options.command.map(unitWord).join(' ')
  const state = accountAndState(options)
  // `-`: a missing archive directory (an unmounted disk) does not keep the gateway from starting.
  const archive = options.archiveDir === undefined ? '' : ` ${unitWord(`-${options.archiveDir}`)}`
  return renderUnit('gateway', template, {
    ...state,
    ReadWritePaths: `${state.ReadWritePaths}${archive}`,
    ExecStart: `${command} gateway serve`,
    ExecStopPost: `-${command} db stop`,
  })
}

/** The reconcile service: the same account and state as the gateway, `fleetkit reconcile` in ExecStart. */
export function renderReconcileUnit(template: string, options: GatewayUnitOptions): string {
  const command = options.command.map(unitWord).join(' ')
  return renderUnit('reconcile', template, { ...accountAndState(options), ExecStart: `${command} reconcile` })
}

/** The shipping service the timer starts: `fleetkit db archive ship` as the same account on the same state. */
export function renderArchiveShipUnit(template: string, options: GatewayUnitOptions): string {
  const command = options.command.map(unitWord).join(' ')
  return renderUnit('archive-ship', template, { ...accountAndState(options), ExecStart: `${command} db archive ship` })
}

function accountAndState(options: GatewayUnitOptions): Record<string, string> {
  return {
    User: options.user,
    Group: options.group,
    Environment: `FLEETKIT_STATE_DIR=${unitWord(options.stateDir)}`,
    ReadWritePaths: unitWord(options.stateDir),
  }
}

/** Replaces each `Key=` line the template must have; a template without one is a bug. */
function renderUnit(name: string, template: string, wanted: Record<string, string>): string {
  const seen = new Set<string>()
  const lines = template.split('\n').map((line) => {
    const key = /^([A-Za-z]+)=/.exec(line)?.[1]
    if (key === undefined || !(key in wanted)) return line
    if (key === 'Environment' && !line.startsWith('Environment=FLEETKIT_STATE_DIR=')) return line
    seen.add(key)
    return `${key}=${wanted[key]}`
  })
  const missing = Object.keys(wanted).filter((key) => !seen.has(key))
  if (missing.length > 0) throw new Error(`the ${name} unit template lacks ${missing.join(', ')}`)
  return lines.join('\n')
}
