// The provider half of `fleetkit node decommission` (spec 06): after the retirement committed,
// delete the node's server by its recorded ID, else by its fleetkit.node_id label. The delete is
// owed durably (provider_delete_pending, set in the retiring transaction) until it succeeded, so
// running decommission again retries one that failed; a server already gone counts as deleted.
import type { StatePool } from '../../store/transaction.js'

import { FleetkitError, isFleetkitError } from '../../checks/fleetkit-error.js'
import type { HetznerClient } from '../../provider/hetzner.js'
import { appendEvent } from '../../store/events.js'
import { withTransaction } from '../../store/database.js'
import { markServerDeleted, type ProvisionRow } from '../../store/provider/provisioning.js'
import { NODE_ID_LABEL } from '../../provider/create-or-adopt.js'

/** Builds the client when a provider-managed node needs it; throws PROVIDER_TOKEN_MISSING without a token. */
export type ProviderFactory = () => HetznerClient

/** Whether the node has a provider server that fleetkit still owes a delete. */
export function owesProviderDelete(row: ProvisionRow): boolean {
  return row.provider === 'hetzner' && row.providerDeletedAt === null
}

export async function deleteProviderServer(
  pool: StatePool,
  client: HetznerClient,
  row: ProvisionRow,
): Promise<{ serverIds: number[] }> {
  let serverIds: number[] = []
  try {
    if (row.providerServerId !== null) serverIds = [Number(row.providerServerId)]
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
    await appendEvent(q, { kind: 'provider_server_deleted', nodeId: row.id, data: { server_ids: serverIds } })
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
