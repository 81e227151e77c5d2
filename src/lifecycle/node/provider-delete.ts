// The provider half of `fleetkit node decommission` (spec 06): after the retirement committed,
// delete the node's server by its recorded ID, else (none recorded, or one that is not an ID) by its
// fleetkit.node_id label. The delete is owed durably (provider_delete_pending, set in the retiring
// transaction) until each server answered it with a 2xx or a 404 (already gone), so running
// decommission again retries one that failed.
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

export async function deleteProviderServer(
  pool: StatePool,
  client: Provider,
  row: ProvisionRow,
): Promise<{ serverIds: number[] }> {
  let serverIds: number[] = []
  // A recorded value that is not an ID ('undefined' from a create answer without one) is never sent:
  // DELETE /servers/NaN answers 404, which would read as "already gone" while the server runs on.
  const recorded = recordedId(row.providerServerId)
  const byLabel = recorded === undefined
  try {
    if (!byLabel) serverIds = [recorded]
    else serverIds = (await client.listServers({ labelSelector: `${NODE_ID_LABEL}=${row.id}` })).map((s) => s.id)
    for (const id of serverIds) await client.deleteServer(id)
  } catch (error) {
    const code = isFleetkitError(error) ? error.code : 'PROVIDER_ERROR'
    throw new FleetkitError(
      'PROVIDER_DELETE_FAILED',
      `${row.id} is retired, but deleting its server ${serverIds.join(', ') || '(by label)'} failed (${code}); the delete is recorded as pending`,
      {
        cause: error,
        actions: [`fleetkit node decommission ${row.id}   (retries the delete)`, `fleetkit runbook ${code}`],
        data: { node: row.id, serverIds, providerCode: code },
      },
    )
  }
  await withTransaction(pool, async (q) => {
    await markServerDeleted(q, row.id)
    await appendEvent(q, {
      kind: 'provider_server_deleted',
      nodeId: row.id,
      data: {
        server_ids: serverIds,
        ...(byLabel ? { found_by: 'label', recorded_server_id: row.providerServerId } : {}),
      },
    })
  })
  return { serverIds }
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
