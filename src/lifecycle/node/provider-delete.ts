// The provider half of `fleetkit node decommission` (spec 06): after the retirement committed,
// delete the node's server by its recorded ID, else (none recorded, one that is not an ID, or one that
// now names a server not labelled as this node's) by its fleetkit.node_id label. The delete is owed
// durably (provider_delete_pending, set in the retiring transaction) until each server answered it with
// a 2xx or a 404 (already gone), so running decommission again retries one that failed.
import type { StatePool } from '../../store/transaction.js'

import { FleetkitError, isFleetkitError } from '../../checks/fleetkit-error.js'
import type { Provider } from '../../provider/provider.js'
import { appendEvent } from '../../store/events.js'
import { withTransaction } from '../../store/database.js'
import { markServerDeleted, type ProvisionRow } from '../../store/provider/provisioning.js'
import { NODE_ID_LABEL } from '../../provider/create-or-adopt.js'
import { recordedId } from '../../provider/hetzner-readers.js'

/** Builds the client when a provider-managed node needs it; throws PROVIDER_TOKEN_MISSING without a token. */
export type ProviderFactory = () => Provider

/** Whether the node has a provider server that fleetkit still owes a delete. */
export function owesProviderDelete(row: ProvisionRow): boolean {
  return row.provider === 'hetzner' && row.providerDeletedAt === null
}

/** What a decommission did with the node's server(s). */
export interface ServerDelete {
  /** Deleted by this run. */
  deleted: number[]
  /** Already gone (a 404): counted as deleted. */
  gone: number[]
  /** The recorded ID names a server that is not labelled as this node's (left alone), and whose it is. */
  notOurs?: { id: number; labelledFor: string | null }
}

export async function deleteProviderServer(
  pool: StatePool,
  client: Provider,
  row: ProvisionRow,
): Promise<ServerDelete> {
  const result: ServerDelete = { deleted: [], gone: [] }
  // A recorded value that is not an ID ('undefined' from a create answer without one) is never sent:
  // DELETE /servers/NaN answers 404, which would read as "already gone" while the server runs on.
  const recorded = recordedId(row.providerServerId)
  let byLabel = recorded === undefined
  let ids: number[] = []
  try {
    if (recorded !== undefined) {
      // Deleted only when it is still this node's: an ID can name another server than the one recorded
      // (a local cloud restarted numbers its servers anew; a label changed by hand in the console).
      const server = await client.getServer(recorded)
      if (server === undefined) result.gone.push(recorded)
      else if (server.labels[NODE_ID_LABEL] === row.id) ids = [recorded]
      else {
        result.notOurs = { id: recorded, labelledFor: server.labels[NODE_ID_LABEL] ?? null }
        byLabel = true
      }
    }
    if (byLabel) ids = (await client.listServers({ labelSelector: `${NODE_ID_LABEL}=${row.id}` })).map((s) => s.id)
    for (const id of ids) ((await client.deleteServer(id)) === undefined ? result.gone : result.deleted).push(id)
  } catch (error) {
    const code = isFleetkitError(error) ? error.code : 'PROVIDER_ERROR'
    throw new FleetkitError(
      'PROVIDER_DELETE_FAILED',
      `${row.id} is retired, but deleting its server ${ids.join(', ') || (byLabel ? '(by label)' : String(recorded))} failed (${code}); the delete is recorded as pending`,
      {
        cause: error,
        actions: [`fleetkit node decommission ${row.id}   (retries the delete)`, `fleetkit runbook ${code}`],
        data: { node: row.id, serverIds: ids, providerCode: code },
      },
    )
  }
  await withTransaction(pool, async (q) => {
    await markServerDeleted(q, row.id)
    await appendEvent(q, {
      kind: 'provider_server_deleted',
      nodeId: row.id,
      data: {
        server_ids: [...result.deleted, ...result.gone],
        ...(result.gone.length > 0 ? { already_gone: result.gone } : {}),
        ...(byLabel ? { found_by: 'label', recorded_server_id: row.providerServerId } : {}),
        ...(result.notOurs ? { recorded_server_labelled_for: result.notOurs.labelledFor } : {}),
      },
    })
  })
  return result
}

/** The delete in the command's one line: what was deleted, what was gone, and a recorded ID left alone. */
export function serverDeleteSentence(nodeId: string, d: ServerDelete): string {
  const parts: string[] = []
  if (d.deleted.length > 0) parts.push(`deleted server ${d.deleted.join(', ')}`)
  if (d.gone.length > 0) parts.push(`server ${d.gone.join(', ')} was already gone`)
  if (d.notOurs) {
    const whose = d.notOurs.labelledFor === null ? 'no node' : d.notOurs.labelledFor
    parts.push(
      `server ${d.notOurs.id}, recorded for ${nodeId}, is now labelled ${NODE_ID_LABEL}=${whose} and was left alone`,
    )
  }
  return parts.length > 0 ? parts.join('; ') : `no server of ${nodeId} was left at the provider`
}

/** The token a decommission needs, as an error naming its variable (never a value). */
export function tokenError(nodeId: string, error: unknown): unknown {
  if (isFleetkitError(error) && error.code === 'PROVIDER_TOKEN_MISSING') {
    return new FleetkitError(
      'PROVIDER_TOKEN_MISSING',
      `${nodeId} has a Hetzner Cloud server to delete and ${String(error.data?.tokenEnv ?? 'HETZNER_API_TOKEN')} is unset: nothing changed`,
      { actions: error.actions.filter((a) => !a.startsWith('fleetkit runbook')), data: error.data ?? {} },
    )
  }
  return error
}
