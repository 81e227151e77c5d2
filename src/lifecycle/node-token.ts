// `fleetkit node token`: a fresh single-use enrollment secret for a node enrolled by hand.
// It replaces the previous one; only its SHA-256 is stored, the clear value is handed out once.
import type { Clock } from '../config/clock.js'
import type { Env } from '../config/state-dir.js'
import type { Definition } from '../definition/types.js'
import type { Rng } from '../config/rng.js'
import { newEnrollmentSecret } from '../render/enrollment-secret.js'
import { nodeTarget } from '../render/seed-documents.js'
import { outputWriteFailed } from './output-sink.js'
import { actorOf, applySecretPlan, planSecret } from './secret-reissue.js'

export interface NodeTokenOptions {
  nodeId: string
  ttlMs: number
  /** A new secret for a node past provisioning, on purpose (recorded as secret_reissued). */
  reissue?: boolean
  /** Read only when the node is not in the state yet (a declared node enrolled by hand). */
  loadDefinition: () => Promise<Definition>
  /**
   * Hands the secret to the operator (prints it). Called BEFORE the state changes: when it
   * throws (a closed pipe), the previous secret stays valid and nothing is stored.
   */
  deliver: (result: NodeTokenResult) => Promise<void>
  env: Env
  clock: Clock
  rng: Rng
}

export interface NodeTokenResult {
  /** @minLength 1 */
  node: string
  /**
   * The clear secret: printed once, by design; the state keeps only its SHA-256.
   * @pattern ^[0-9a-f]{64}$
   */
  secret: string
  /** @format date-time */
  expiresAt: string
  /** True when the node was registered by this call (declared, not in the state before). */
  registered: boolean
  /** True when --reissue gave a node past provisioning a new secret. */
  reissued: boolean
}

export async function issueNodeToken(options: NodeTokenOptions): Promise<NodeTokenResult> {
  const { openDatabase, withTransaction } = await import('../store/database.js')
  const nodes = await import('../store/nodes.js')
  const { lockNodeSecretState } = await import('../store/enrollment-secrets.js')
  const database = await openDatabase({ env: options.env })
  try {
    const row = await nodes.getNode(database.pool, options.nodeId)
    const retry = `fleetkit node token ${options.nodeId}`
    const plan = planSecret(
      options.nodeId,
      row
        ? {
            status: row.status,
            secretExpiresAt: row.enrollmentSecretExpiresAt,
            secretUsedAt: row.enrollmentSecretUsedAt,
          }
        : undefined,
      options.reissue === true,
      retry,
      options.clock.now(),
    )
    const target = row
      ? { id: row.id, pool: row.pool }
      : nodeTarget(await options.loadDefinition(), options.nodeId, undefined)
    const secret = newEnrollmentSecret(options.rng)
    const now = options.clock.now()
    const expiresAt = new Date(now.getTime() + options.ttlMs)
    const result: NodeTokenResult = {
      node: target.id,
      secret: secret.secret,
      expiresAt: expiresAt.toISOString(),
      registered: !row,
      reissued: plan.mode !== 'provision',
    }
    try {
      await options.deliver(result)
    } catch (error) {
      throw outputWriteFailed('-', error)
    }
    await withTransaction(database.pool, async (client) => {
      const locked = await lockNodeSecretState(client, target.id)
      const current = planSecret(target.id, locked, options.reissue === true, retry, options.clock.now())
      await applySecretPlan(client, {
        plan: current,
        node: target,
        secretSha256: secret.sha256,
        expiresAt,
        actor: actorOf(options.env),
        via: 'node token',
        now,
      })
    })
    return result
  } finally {
    await database.close()
  }
}
