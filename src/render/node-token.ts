// `fleetkit node token`: a fresh single-use enrollment secret for a node enrolled by hand.
// It replaces the previous one; only its SHA-256 is stored, the clear value is returned once.
import type { Clock } from '../config/clock.js'
import type { Env } from '../config/state-dir.js'
import type { Definition } from '../definition/types.js'
import { type Rng } from '../config/rng.js'
import { newEnrollmentSecret } from './enrollment-secret.js'
import { nodeTarget } from './seed-node.js'

export interface NodeTokenOptions {
  nodeId: string
  ttlMs: number
  /** Read only when the node is not in the state yet (a declared node enrolled by hand). */
  loadDefinition: () => Promise<Definition>
  env: Env
  clock: Clock
  rng: Rng
}

export interface NodeTokenResult {
  node: string
  /** The clear secret: printed once, by design; the state keeps only its SHA-256. */
  secret: string
  expiresAt: string
  /** True when the node was registered by this call (declared, not in the state before). */
  registered: boolean
}

export async function issueNodeToken(options: NodeTokenOptions): Promise<NodeTokenResult> {
  const { openDatabase, withTransaction } = await import('../store/database.js')
  const nodes = await import('../store/nodes.js')
  const database = await openDatabase({ env: options.env })
  try {
    const row = await nodes.getNode(database.pool, options.nodeId)
    const target = row
      ? { id: row.id, pool: row.pool }
      : nodeTarget(await options.loadDefinition(), options.nodeId, undefined)
    const secret = newEnrollmentSecret(options.rng)
    const expiresAt = new Date(options.clock.now().getTime() + options.ttlMs)
    await withTransaction(database.pool, async (client) => {
      if (!row) await nodes.upsertDeclaredNode(client, { id: target.id, pool: target.pool, status: 'provisioning' })
      await nodes.issueEnrollmentSecret(client, target.id, secret.sha256, expiresAt)
    })
    return { node: target.id, secret: secret.secret, expiresAt: expiresAt.toISOString(), registered: !row }
  } finally {
    await database.close()
  }
}
