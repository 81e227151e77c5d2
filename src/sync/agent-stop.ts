// `node decommission`'s word to a reachable host: `systemctl disable --now` of the agent unit over SSH
// with the pinned host key (ssh-client.ts, as sync dials); a host that cannot be reached never blocks it.
import type { Env } from '../config/state-dir.js'
import type { Definition } from '../definition/types.js'
import { FleetkitError } from '../checks/fleetkit-error.js'
import { printableText } from '../protocol/wire-format.js'
import { type PinnedSession, type SshTarget, SshUnreachable, openPinned } from './ssh-client.js'
import { type SshTargetRow, sshTargets } from './ssh-targets.js'

/** The unit the seed and the agent role install (cloud-init/fleetkit-agent.service.tmpl). */
const AGENT_UNIT = 'fleetkit-agent.service'

/** How long `systemctl disable --now` may take (the unit's own stop timeout is shorter) before the stop is given up. */
const STOP_TIMEOUT_MS = 120_000

export interface AgentStopOutcome {
  /**
   * `stopped`: the unit is disabled and stopped; `absent`: the host has no such unit (nothing runs);
   * `not_stopped`: it could not be stopped, and the agent stops itself at the gateway's refusal.
   */
  state: 'stopped' | 'absent' | 'not_stopped'
  /** Why it was not stopped. */
  reason?:
    'host_key_not_pinned' | 'host_key_mismatch' | 'address_disagrees' | 'unreachable' | 'command_failed' | 'timed_out'
  /** One line for a person. */
  detail: string
}

export interface AgentStopOptions {
  /** Opens the pinned session (tests hand in their own server's); defaults to ssh-client's openPinned. */
  open?: (target: SshTarget, env: Env) => Promise<PinnedSession>
  timeoutMs?: number
}

/**
 * Runs `systemctl disable --now fleetkit-agent.service` (through sudo -n when the user is not root)
 * on the node, logging in only when the host presents its pinned key. Never throws for the host's
 * sake: an unpinned, mismatched, unreachable or refusing host is `not_stopped` with its reason.
 */
export async function stopAgentOverSsh(
  target: SshTarget,
  env: Env,
  options: AgentStopOptions = {},
): Promise<AgentStopOutcome> {
  const open = options.open ?? openPinned
  let session: PinnedSession
  try {
    session = await open(target, env)
  } catch (error) {
    if (error instanceof SshUnreachable)
      return {
        state: 'not_stopped',
        reason: 'unreachable',
        detail: `${target.node} is unreachable (${oneLine(error.message)})`,
      }
    if (error instanceof FleetkitError && error.code === 'SSH_HOST_KEY_NOT_PINNED')
      return {
        state: 'not_stopped',
        reason: 'host_key_not_pinned',
        detail: `${target.node} has no pinned SSH host key`,
      }
    if (error instanceof FleetkitError && error.code === 'SSH_HOST_KEY_MISMATCH')
      return {
        state: 'not_stopped',
        reason: 'host_key_mismatch',
        detail: `${target.node} answered with a host key other than the pinned one; fleetkit did not log in`,
      }
    throw error
  }
  let timer: NodeJS.Timeout | undefined
  try {
    const timedOut = new Promise<'timed_out'>((resolve) => {
      timer = setTimeout(() => resolve('timed_out'), options.timeoutMs ?? STOP_TIMEOUT_MS)
    })
    const result = await Promise.race([
      session.exec(`${session.asRoot}systemctl disable --now ${AGENT_UNIT}`),
      timedOut,
    ])
    if (result === 'timed_out')
      return { state: 'not_stopped', reason: 'timed_out', detail: `systemctl on ${target.node} did not answer in time` }
    if (result.code === 0) return { state: 'stopped', detail: `${AGENT_UNIT} disabled and stopped on ${target.node}` }
    const said = oneLine(result.stderr || result.stdout)
    if (/does not exist|not loaded|No such file/i.test(said))
      return { state: 'absent', detail: `${target.node} has no ${AGENT_UNIT}: no agent runs there` }
    return {
      state: 'not_stopped',
      reason: 'command_failed',
      detail: `systemctl disable --now ${AGENT_UNIT} on ${target.node} exited ${result.code ?? 'on a signal'}: ${said}`,
    }
  } finally {
    clearTimeout(timer)
    session.close()
  }
}

/**
 * Stops NODE's agent, dialled as sync dials it (ssh-targets.ts): its declaration in `nodes` first (a
 * decommissioned node may be gone from fleet.yaml), then the state's address and pinned key.
 */
export function stopNodeAgent(
  definition: Pick<Definition, 'nodes' | 'providers' | 'pools'>,
  node: SshTargetRow,
  env: Env,
  options: AgentStopOptions = {},
): Promise<AgentStopOutcome> {
  let target: SshTarget
  try {
    target = sshTargets(definition, [node], [node.id]).get(node.id)!
  } catch (error) {
    // fleet.yaml names another address than the server fleetkit made: dial neither (which is the node?).
    if (error instanceof FleetkitError && error.code === 'NODE_ADDRESS_DISAGREES')
      return Promise.resolve({ state: 'not_stopped', reason: 'address_disagrees', detail: error.message })
    throw error
  }
  return stopAgentOverSsh(target, env, options)
}

function oneLine(text: string): string {
  // The host's words, shown to a person: its first line, printable characters only, bounded.
  return printableText(text.split('\n').find((l) => l.trim() !== '') ?? 'no output', 200).trim()
}
