// `fleetkit node decommission NODE [--wait S]`: refused while the node holds active allocations
// or live leases (waited for with --wait); then, in one transaction holding the node row FOR
// UPDATE: check again, revoke every certificate, fail its queued jobs, set `retired`.
// Only after that commit is its agent stopped over SSH (when a `stopAgent` is given; never blocking),
// then its provider volume detached (kept, or deleted with --delete-volume:
// volume-release.ts) and its server deleted (provider-delete.ts), a failed step retried by running
// it again; rows, certificates and events are kept.
import type { StatePool } from '../../store/transaction.js'
import type { NodeRow } from '../../store/nodes/nodes.js'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { Clock } from '../../config/clock.js'
import { revokeNodeCertificates } from '../../store/pki/certificates.js'
import { appendEvent } from '../../store/events.js'
import { failQueuedJobs, nodeHoldings, writeNodeLifecycle } from '../../store/nodes/node-lifecycle.js'
import { getProvisionRow, markDeletePending } from '../../store/provider/provisioning.js'
import {
  type Confirm,
  stateConflict,
  transition,
  type TransitionResult,
  unknownNode,
  withLockedNode,
} from './node-transition.js'
import { asOnlyRun } from './node-run.js'
import {
  deleteProviderServer,
  owesProviderDelete,
  type ProviderFactory,
  serverDeleteSentence,
  tokenError,
} from './provider-delete.js'
import { NODE_ID_LABEL } from '../../provider/create-or-adopt.js'
import { waitFor, type WaitOptions } from '../wait.js'
import { deleteNodeVolume, detachNodeVolume, owesVolumeRelease, type VolumeRelease } from './volume-release.js'

export interface DecommissionResult extends TransitionResult {
  /**
   * @minimum 0
   * @asType integer
   */
  revokedCertificates: number
  /**
   * @minimum 0
   * @asType integer
   */
  failedQueuedJobs: number
  /**
   * @minimum 0
   * @asType integer
   */
  waitedSeconds?: number
  /** The provider servers deleted by this run (by recorded ID, else by the node's label); absent when none was owed. */
  deletedServers?: number[]
  /** The node's provider volume this run detached (kept unless --delete-volume) or deleted; absent when none was owed. */
  volume?: VolumeRelease
  /** Its agent stopped over SSH after the retirement committed; absent when the run was not asked to stop it. */
  agentStop?: AgentStop
}

/** What became of the node's agent: stopped over SSH, or left to stop itself at the gateway's refusal. */
interface AgentStop {
  /**
   * `stopped`: `systemctl disable --now fleetkit-agent.service` ran on the host; `absent`: the host has no
   * such unit; `not_stopped`: it could not be run, and the agent stops itself when the gateway refuses its
   * revoked certificate (it exits 77, which its unit does not restart).
   */
  state: 'stopped' | 'absent' | 'not_stopped'
  /** Why it was not stopped. */
  reason?:
    'host_key_not_pinned' | 'host_key_mismatch' | 'address_disagrees' | 'unreachable' | 'command_failed' | 'timed_out'
  /** @maxLength 400 */
  detail: string
}

/** Stops the node's agent on its host; resolves with what happened and never rejects for the host's sake. */
/** What dialling the node needs of its row: its address (the address rule's fields) and pinned key. */
type StopAgent = (
  node: Pick<
    NodeRow,
    'id' | 'pool' | 'sshHost' | 'hostKeyPublic' | 'provider' | 'providerServerId' | 'publicIpv4' | 'publicIpv6'
  >,
) => Promise<AgentStop>

const DECOMMISSIONABLE = ['draining', 'provisioning', 'failed', 'lost', 'retired'] as const

type DecommissionOptions = {
  pool: StatePool
  nodeId: string
  actor: string
  clock: Clock
  waitSeconds?: number
  /** Asked before a node is retired (not for one already retired): the id is never usable again. */
  confirm?: Confirm
  /** The Hetzner client, built only for a node with a server to delete (PROVIDER_TOKEN_MISSING before any change). */
  provider?: ProviderFactory
  /** Delete the node's volume once detached (its data is gone); without it the volume is kept. */
  deleteVolume?: boolean
  /** How often provider actions (the volume's detach) are polled. */
  actionPollMs?: number
  /** Stops the agent over SSH once the retirement committed (before the server is deleted). */
  stopAgent?: StopAgent
} & WaitOptions

/** Held on the node for the whole run: one provision, replace or decommission of a node acts at once (NODE_BUSY). */
export async function decommissionNode(options: DecommissionOptions): Promise<DecommissionResult> {
  return asOnlyRun(options.pool, options.nodeId, `node decommission ${options.nodeId}`, () => decommissionHeld(options))
}

async function decommissionHeld(options: DecommissionOptions): Promise<DecommissionResult> {
  const { pool, nodeId } = options
  const before = await getProvisionRow(pool, nodeId)
  if (!before) throw await unknownNode(pool, nodeId)
  if (!(DECOMMISSIONABLE as readonly string[]).includes(before.status))
    throw stateConflict(before, 'decommission', DECOMMISSIONABLE, `fleetkit node drain ${nodeId}`)
  const deleteVolume = options.deleteVolume ?? false
  // The token before anything changes: a node with a server or volume to release is refused without one.
  let hetzner: ReturnType<ProviderFactory> | undefined
  if (owesProviderDelete(before) || owesVolumeRelease(before, deleteVolume)) {
    try {
      if (!options.provider) throw new FleetkitError('PROVIDER_TOKEN_MISSING', 'no provider client', { data: {} })
      hetzner = options.provider()
    } catch (error) {
      throw tokenError(nodeId, error)
    }
  }
  const deletesData = deleteVolume && before.providerVolumeId !== null && owesVolumeRelease(before, true)
  if ((before.status !== 'retired' || deletesData) && options.confirm) {
    const retire =
      before.status === 'retired'
        ? `${nodeId} is retired`
        : `retire ${nodeId} (${before.status}): every certificate of it is revoked, its queued jobs fail, and the id ${nodeId} can never be enrolled again`
    await options.confirm({
      what: `${retire}${deletesData ? `; its volume ${before.providerVolumeId} is deleted with all its data` : ''}`,
      command: `fleetkit node decommission ${nodeId}${deleteVolume ? ' --delete-volume' : ''} --yes`,
      data: { nodeId, status: before.status, ...(deletesData ? { volumeId: Number(before.providerVolumeId) } : {}) },
    })
  }
  let waitedSeconds: number | undefined
  if (options.waitSeconds !== undefined) {
    // Stranded allocations never end by themselves: waiting for them would only time out.
    const now = await nodeHoldings(pool, nodeId)
    if (now.strandedAllocations.length > 0) throw holdingsRefusal(nodeId, now)
    const started = options.clock.now().getTime()
    await waitFor({
      ...options,
      timeoutSeconds: options.waitSeconds,
      probe: () => nodeHoldings(pool, nodeId),
      done: (h) => h.activeAllocations.length === 0 && h.liveLeases.length === 0,
    })
    waitedSeconds = Math.round((options.clock.now().getTime() - started) / 1000)
  }
  const retired = await withLockedNode(pool, nodeId, async (client, node) => {
    if (!(DECOMMISSIONABLE as readonly string[]).includes(node.status))
      throw stateConflict(node, 'decommission', DECOMMISSIONABLE, `fleetkit node drain ${nodeId}`)
    // Checked again under the row lock: a reservation cannot slip in between the check and the retirement.
    const holdings = await nodeHoldings(client, nodeId)
    if (
      holdings.activeAllocations.length > 0 ||
      holdings.strandedAllocations.length > 0 ||
      holdings.liveLeases.length > 0
    )
      throw holdingsRefusal(nodeId, holdings, waitedSeconds)
    const revoked = await revokeNodeCertificates(client, nodeId, node.dbNow)
    const failed = await failQueuedJobs(client, nodeId, 'node decommissioned')
    if (owesProviderDelete(before)) await markDeletePending(client, nodeId)
    const after = await writeNodeLifecycle(client, nodeId, {
      status: 'retired',
      schedulable: false,
      retired: node.status !== 'retired',
    })
    const t = transition(
      node,
      'decommission',
      after,
      node.status === 'retired'
        ? `${nodeId}: already retired${revoked > 0 ? `; revoked ${revoked} certificate(s) left live` : '; nothing changed'}`
        : `${nodeId}: retired (was ${node.status}); revoked ${revoked} certificate(s), failed ${failed} queued job(s); its agent is refused from now on`,
    )
    if (t.changed || revoked > 0)
      await appendEvent(client, {
        kind: 'node_retired',
        nodeId,
        data: { from: node.status, revoked_certificates: revoked, failed_queued_jobs: failed, actor: options.actor },
      })
    return {
      ...t,
      changed: t.changed || revoked > 0,
      revokedCertificates: revoked,
      failedQueuedJobs: failed,
      ...(waitedSeconds === undefined ? {} : { waitedSeconds }),
    }
  })
  // Decided and committed: its agent is told to stop now, while its server still exists. An
  // unreachable host is only reported: its agent exits 77 at the gateway's first refusal.
  // A server fleetkit already deleted has no agent left to stop; one deleted below stops with it, so
  // running decommission again to reach its agent would be advice that cannot work.
  let stopped: DecommissionResult = retired
  const serverDeleted = before.provider === 'hetzner' && before.providerDeletedAt !== null
  if (options.stopAgent && !serverDeleted) {
    const agentStop = await options.stopAgent(before)
    const sentence = agentStopSentence(nodeId, agentStop, { serverGoes: owesProviderDelete(before) })
    stopped = { ...retired, agentStop, message: `${retired.message}; ${sentence}` }
  }
  if (!hetzner) return stopped
  // After the commit, each step recorded as it succeeds: the volume detached first, then the server
  // deleted (PROVIDER_DELETE_FAILED leaves it pending), then with --delete-volume the volume deleted.
  let result: DecommissionResult = stopped
  let row = (await getProvisionRow(pool, nodeId))!
  let volume: VolumeRelease | undefined
  if (owesVolumeRelease(row, deleteVolume))
    volume = await detachNodeVolume(pool, hetzner, row, {
      deleteVolume,
      ...(options.actionPollMs === undefined ? {} : { pollMs: options.actionPollMs }),
    })
  row = (await getProvisionRow(pool, nodeId))!
  if (owesProviderDelete(row)) {
    const servers = await deleteProviderServer(pool, hetzner, row)
    result = {
      ...result,
      deletedServers: [...servers.deleted, ...servers.gone],
      message: `${result.message}; ${serverDeleteSentence(nodeId, servers)}`,
    }
  }
  if (deleteVolume && row.volumeState === 'detached') volume = await deleteNodeVolume(pool, hetzner, row)
  if (!volume) return result
  return { ...result, volume, message: `${result.message}; ${volumeSentence(nodeId, volume)}` }
}

/**
 * Why the node cannot be retired yet, and what ends each holding: owners release active allocations and
 * live leases end (--wait waits for both); stranded ones are a person's decision, which no wait replaces.
 */
function holdingsRefusal(
  nodeId: string,
  holdings: { activeAllocations: string[]; strandedAllocations: string[]; liveLeases: string[] },
  waitedSeconds?: number,
): FleetkitError {
  const { activeAllocations, strandedAllocations, liveLeases } = holdings
  const parts = [
    ...(activeAllocations.length > 0 || strandedAllocations.length === 0
      ? [`${activeAllocations.length} active allocation(s)`]
      : []),
    ...(strandedAllocations.length > 0
      ? [`${strandedAllocations.length} stranded allocation(s) (kept for a person's decision when it was lost)`]
      : []),
    ...(liveLeases.length > 0 || strandedAllocations.length === 0 ? [`${liveLeases.length} live lease(s)`] : []),
  ]
  const message = `cannot decommission ${nodeId}: ${parts.join(' and ')}`
  const waitable = activeAllocations.length > 0 || liveLeases.length > 0
  const details = {
    actions: [
      ...(strandedAllocations.length > 0
        ? [
            `fleetkit alloc list --node ${nodeId} --status stranded`,
            `fleetkit alloc release --stranded ${nodeId} --yes   (gives up what they held)`,
          ]
        : []),
      ...(activeAllocations.length > 0
        ? [`fleetkit alloc list --node ${nodeId}`, 'fleetkit alloc release ID (by its owner)']
        : []),
      `fleetkit node decommission ${nodeId}${waitable ? ' --wait 600' : ''}`,
    ],
    data: { nodeId, activeAllocations, strandedAllocations, liveLeases },
  }
  if (waitedSeconds !== undefined)
    return new FleetkitError('NODE_WAIT_TIMEOUT', `${message} after waiting ${waitedSeconds} s`, details)
  return new FleetkitError('NODE_HAS_ALLOCATIONS', message, details)
}

/** The volume's end in the command's one line. */
function volumeSentence(nodeId: string, volume: VolumeRelease): string {
  const gone = volume.alreadyGone
  if (gone?.labelledFor !== undefined) {
    const whose = gone.labelledFor === null ? 'no node' : gone.labelledFor
    return `volume ${volume.id}, recorded for ${nodeId}, is now labelled ${NODE_ID_LABEL}=${whose} and was left alone`
  }
  if (gone) return `volume ${volume.id} was already gone`
  if (volume.state === 'deleted') return `volume ${volume.id} deleted`
  return `volume ${volume.id} detached and kept (fleetkit node decommission ${nodeId} --delete-volume deletes it)`
}

/** The agent's fate in the command's one line. */
function agentStopSentence(nodeId: string, stop: AgentStop, options: { serverGoes: boolean }): string {
  if (stop.state === 'stopped') return `its agent is stopped and disabled (${stop.detail})`
  if (stop.state === 'absent') return `no agent unit to stop (${stop.detail})`
  const unreached = `its agent could not be stopped over SSH (${stop.detail})`
  if (options.serverGoes) return `${unreached}; it ends with its server`
  return `${unreached}; it stops itself when the gateway refuses its revoked certificate (exit 77, not restarted by its unit); fleetkit node decommission ${nodeId} --definition fleet.yaml tries again`
}
