// One acting run per node (issue 37, item 3): `node provision` (and --resume), `node replace` and
// `node decommission` each hold a session advisory lock on the node for their whole run, taken with
// a try-lock (never waited for), so of runs at once on one node exactly one acts and the others are
// refused before any provider request. The holder names itself in its session's application_name,
// which is how a refused run says which command holds the node. A crashed holder frees it with its
// connection. Beside it, the node's seed-write lock (withNodeSeedLock), which `fleetkit seed` waits for.
import type { Queryable, StatePool, StateTransaction } from '../transaction.js'
import { withSession } from '../transaction.js'

/**
 * The first key of the two-key advisory lock: 'fkr' (fleetkit run); the second is hashtext(node id).
 * Two ids of one hash would share a lock: the later run is refused while the other acts, never wrong.
 */
const NODE_RUN_LOCK_CLASS = 0x666b72

/** What application_name a holder sets (at most 63 bytes are kept by PostgreSQL). */
const HOLDER_PREFIX = 'fleetkit: '

export type NodeRunLock<T> = { locked: true; value: T } | { locked: false; holder: string | null }

/**
 * Runs `fn` holding node `nodeId`'s run lock on a connection of its own, `command` (such as
 * `node provision build-2`) recorded as the holder; `{ locked: false, holder }` at once when another
 * session holds it (`holder` is its command, null when it cannot be seen or it let go meanwhile).
 */
export async function withNodeRunLock<T>(
  pool: StatePool,
  nodeId: string,
  command: string,
  fn: (session: StateTransaction) => Promise<T>,
): Promise<NodeRunLock<T>> {
  return withSession(pool, async (session) => {
    // Named first, so a session seen holding the lock always names its command.
    await session.query(`SELECT set_config('application_name', $1, false)`, [`${HOLDER_PREFIX}${command}`])
    const { rows } = await session.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok', [
      NODE_RUN_LOCK_CLASS,
      nodeId,
    ])
    if (!rows[0]!.ok) {
      await session.query('RESET application_name')
      return { locked: false as const, holder: await nodeRunHolder(session, nodeId) }
    }
    let value: T
    try {
      value = await fn(session)
    } catch (error) {
      // withSession closes this connection (and so frees the lock); a failed cleanup must not hide `error`.
      await letGo(session, nodeId).catch(() => {})
      throw error
    }
    await letGo(session, nodeId)
    return { locked: true as const, value }
  })
}

async function letGo(session: StateTransaction, nodeId: string): Promise<void> {
  await session.query('RESET application_name')
  await session.query('SELECT pg_advisory_unlock($1, hashtext($2))', [NODE_RUN_LOCK_CLASS, nodeId])
}

/** The command of the session holding node `nodeId`'s run lock, if any (and visible). */
async function nodeRunHolder(q: Queryable, nodeId: string): Promise<string | null> {
  const { rows } = await q.query<{ name: string | null }>(
    `SELECT a.application_name AS name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND l.classid = $1::int::oid AND l.objid = hashtext($2)::oid AND l.objsubid = 2`,
    [NODE_RUN_LOCK_CLASS, nodeId],
  )
  const name = rows[0]?.name
  return name?.startsWith(HOLDER_PREFIX) ? name.slice(HOLDER_PREFIX.length) : null
}

/**
 * The first key of a node's seed-write lock: 'fkw' (fleetkit write); the second is hashtext(node id). Its own
 * class: the secret lock (enrollment-secrets.ts) is 'fks', which a seed takes inside this one.
 */
const NODE_SEED_LOCK_CLASS = 0x666b77

/**
 * Runs `fn` holding node `nodeId`'s seed-write lock on a connection of its own, waiting for it: seeds of one
 * node commit and write their file (or stdout) one after another, so the seed left on disk is always the one
 * whose secret and host key the state holds. A crashed holder frees it with its connection.
 */
export async function withNodeSeedLock<T>(pool: StatePool, nodeId: string, fn: () => Promise<T>): Promise<T> {
  return withSession(pool, async (session) => {
    const unlock = () => session.query('SELECT pg_advisory_unlock($1, hashtext($2))', [NODE_SEED_LOCK_CLASS, nodeId])
    await session.query('SELECT pg_advisory_lock($1, hashtext($2))', [NODE_SEED_LOCK_CLASS, nodeId])
    let value: T
    try {
      value = await fn()
    } catch (error) {
      // withSession closes this connection on error (freeing the lock); a failed unlock must not hide `error`.
      await unlock().catch(() => {})
      throw error
    }
    await unlock()
    return value
  })
}
