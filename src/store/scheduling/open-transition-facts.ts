// Where `fleetkit validate --since` reads its transition facts: the state database when one is
// reachable without starting anything (DATABASE_URL, or the embedded server already running).
import { systemClock, type Clock } from '../../config/clock.js'
import { resolveStateDir, type Env } from '../../config/state-dir.js'
import { NO_STATE_FACTS, type TransitionFacts, type TransitionFactsSource } from '../../definition/transitions/facts.js'
import { openDatabase } from '../database.js'
import { inspectEmbeddedServer } from '../embedded/server.js'
import { lastAppliedRevision } from '../sync/sync-ledger.js'
import { storeTransitionFacts } from './transition-facts.js'

export interface OpenTransitionFactsOptions {
  env?: Env
  /** Overrides FLEETKIT_STATE_DIR / XDG_STATE_HOME. */
  stateDir?: string
  clock?: Clock
}

export interface OpenedTransitionFacts {
  source: TransitionFactsSource
  facts: TransitionFacts
  /** One line: the database read (its password as ***), or why no state was read. */
  description: string
  /** The revision the last complete `fleetkit sync` applied (`validate --since applied`); undefined when none, or no state. */
  appliedRevision(): Promise<{ runId: number; revision: string } | undefined>
  close(): Promise<void>
}

/**
 * The state's facts, or "no state recorded" when DATABASE_URL is unset and the embedded server
 * is not running: validating never starts a server. A DATABASE_URL that cannot be reached is an
 * error (STATE_UNREACHABLE, STATE_AUTH_REFUSED), not a silent fall back to no facts.
 */
export async function openTransitionFacts(options: OpenTransitionFactsOptions = {}): Promise<OpenedTransitionFacts> {
  const env = options.env ?? process.env
  const clock = options.clock ?? systemClock
  const databaseUrl = env.DATABASE_URL?.trim()
  if (databaseUrl) {
    const db = await openDatabase({ env, databaseUrl, max: 2 })
    return {
      source: 'store',
      facts: storeTransitionFacts(db.pool, clock),
      description: `state read from DATABASE_URL ${db.url}`,
      appliedRevision: () => lastAppliedRevision(db.pool),
      close: () => db.close(),
    }
  }
  const stateDir = options.stateDir ?? resolveStateDir(env)
  // The same test `fleetkit db status` makes: postmaster.pid names a live, ready server.
  const embedded = await inspectEmbeddedServer(stateDir)
  if (!embedded.running) {
    return {
      source: 'none',
      facts: NO_STATE_FACTS,
      description: `no state read: DATABASE_URL is unset and the embedded PostgreSQL in ${stateDir} is not running`,
      appliedRevision: async () => undefined,
      close: async () => undefined,
    }
  }
  const db = await openDatabase({ env: { ...env, DATABASE_URL: '' }, stateDir, max: 2 })
  return {
    source: 'store',
    facts: storeTransitionFacts(db.pool, clock),
    description: `state read from the embedded PostgreSQL ${db.url}`,
    appliedRevision: () => lastAppliedRevision(db.pool),
    close: () => db.close(),
  }
}
