// `fleetkit seed`: renders a node's seed within the size budget, writes it 0600, then registers
// the node in the state (a fresh single-use secret for an agent, the pinned host key for a worker).
import { chmod, mkdir, readFile, rm } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'

import { FleetkitError, isFleetkitError } from '../checks/fleetkit-error.js'
import type { Clock } from '../config/clock.js'
import { type Env, resolveStateDir } from '../config/state-dir.js'
import type { Definition } from '../definition/types.js'
import { resolvePkiDir } from '../pki/pki-dir.js'
import { assertPkiDirectoryPrivate } from '../pki/pki-files.js'
import type { Rng } from '../config/rng.js'
import { newEnrollmentSecret } from '../render/enrollment-secret.js'
import { writePrivateFile } from '../fs/private-file.js'
import { fitSeedBudget } from '../render/seed-budget.js'
import { agentSeedDocument, nodeTarget, type SeedKind, workerSeedDocument } from '../render/seed-documents.js'
import { generateSshHostKey } from '../render/ssh-host-key.js'
import type { Queryable } from '../store/database.js'
import { appendEvent } from '../store/events.js'
import { outputWriteFailed, type Sink } from './output-sink.js'
import { readReleaseCa } from '../render/release-ca.js'
import { actorOf, applySecretPlan, planSecret } from './secret-reissue.js'

export type { SeedKind } from '../render/seed-documents.js'

export interface SeedNodeOptions {
  nodeId: string
  kind: SeedKind
  definition: Definition
  ttlMs: number
  autoinstall: boolean
  /** File to write (0600); "-" for `stdout`; undefined: <state dir>/seeds/NODE.user-data. */
  output?: string
  /** Where "-" writes; it must have taken every byte before the state changes. */
  stdout?: Sink
  /** A new secret for a node past provisioning, on purpose (recorded as secret_reissued). */
  reissue?: boolean
  /** A new SSH host key for a worker whose key is pinned, on purpose. */
  rekey?: boolean
  env: Env
  clock: Clock
  rng: Rng
  /** Where a relative release.caFile is resolved from (the definition's directory). */
  definitionDir?: string
}

export interface SeedNodeResult {
  /** @pattern ^[a-z0-9][a-z0-9-]{0,62}$|^[0-9a-f-]{36}$ */
  node: string
  kind: SeedKind
  /** The file written, or null when the seed went to stdout. */
  path: string | null
  /**
   * @minimum 1
   * @maximum 32768
   * @asType integer
   */
  bytes: number
  /**
   * @minimum 1
   * @asType integer
   */
  plainBytes: number
  gzipped: boolean
  autoinstall: boolean
  /**
   * When the embedded enrollment secret expires (agent seeds). The secret itself is never reported.
   * @format date-time
   */
  secretExpiresAt: string | null
  /**
   * The pinned host key's public half (worker seeds), as stored in the state.
   * @pattern ^ssh-ed25519 [A-Za-z0-9+/=]+ [a-z0-9-]+$
   */
  hostKeyPublic: string | null
  /** True when --reissue gave a node past provisioning a new secret. */
  reissued: boolean
  /** True when --rekey replaced a pinned host key: put hostKeyPublic into fleet.yaml. */
  rekeyed: boolean
}

/** Where a seed goes without --output: the state directory, never the current one (the fleet's Git repository). */
function defaultSeedPath(env: Env, nodeId: string): string {
  return join(resolveStateDir(env), 'seeds', `${nodeId}.user-data`)
}

/** The CA bundle the agent pins until its first renewal; `fleetkit ca init` creates it. */
async function readGatewayCaBundle(env: Env): Promise<string> {
  const path = join(resolvePkiDir(env), 'ca-bundle.pem')
  // A bundle others could have edited would pin their CA on the new host.
  await assertPkiDirectoryPrivate(resolvePkiDir(env))
  try {
    return await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    throw new FleetkitError(
      'CA_MISSING',
      `the gateway CA bundle ${path} does not exist, so an agent seed cannot pin it`,
      {
        actions: ['fleetkit ca init', "or set FLEETKIT_PKI_DIR to the gateway's PKI directory"],
        data: { path },
      },
    )
  }
}

/**
 * Render the node's seed, deliver it (file or stdout), and only then register the node:
 * a seed that cannot be written, or a reader that stops early (`| head`), changes nothing.
 */
export async function seedNode(options: SeedNodeOptions): Promise<SeedNodeResult> {
  const { definition, clock, rng } = options
  const caBundle = options.kind === 'agent' ? await readGatewayCaBundle(options.env) : undefined
  const releaseCa = options.kind === 'agent' ? await readReleaseCa(definition, options.definitionDir ?? '.') : undefined
  const retry = `fleetkit seed ${options.nodeId} --kind ${options.kind}`
  const { openDatabase, withTransaction } = await import('../store/database.js')
  const nodes = await import('../store/nodes.js')
  const { lockNodeSecretState } = await import('../store/enrollment-secrets.js')
  const database = await openDatabase({ env: options.env })
  try {
    const row = await nodes.getNode(database.pool, options.nodeId)
    const target = nodeTarget(definition, options.nodeId, row)
    const now = clock.now()
    const actor = actorOf(options.env)

    let document: string
    let secretExpiresAt: Date | null = null
    let hostKeyPublic: string | null = null
    let reissued = false
    let rekeyed = false
    let register: (client: Queryable) => Promise<void>
    if (options.kind === 'agent') {
      // Refused before anything is rendered or written; checked again under the row lock.
      const plan = planSecret(
        target.id,
        row
          ? {
              status: row.status,
              secretExpiresAt: row.enrollmentSecretExpiresAt,
              secretUsedAt: row.enrollmentSecretUsedAt,
            }
          : undefined,
        options.reissue === true,
        retry,
        now,
      )
      reissued = plan.mode !== 'provision'
      const secret = newEnrollmentSecret(rng)
      const expiresAt = new Date(now.getTime() + options.ttlMs)
      secretExpiresAt = expiresAt
      document = agentSeedDocument(definition, target, caBundle!, secret.secret, releaseCa)
      register = async (client) => {
        const locked = await lockNodeSecretState(client, target.id)
        const current = planSecret(target.id, locked, options.reissue === true, retry, clock.now())
        await applySecretPlan(client, {
          plan: current,
          node: target,
          secretSha256: secret.sha256,
          expiresAt,
          actor,
          via: 'seed',
          now,
        })
      }
    } else {
      const pinned = row?.hostKeyPublic ?? target.declaredHostKey
      assertRekeyAllowed(target.id, pinned, options.rekey === true)
      rekeyed = pinned !== undefined && pinned !== null
      const hostKey = generateSshHostKey(target.id, rng)
      hostKeyPublic = hostKey.publicKey
      document = workerSeedDocument(definition, target, hostKey, options.autoinstall)
      register = async (client) => {
        const locked = await lockNodeSecretState(client, target.id)
        const previous = locked?.hostKeyPublic ?? target.declaredHostKey
        assertRekeyAllowed(target.id, previous, options.rekey === true)
        // A new row starts as provisioning; an existing node keeps its status.
        await nodes.upsertDeclaredNode(client, {
          id: target.id,
          pool: target.pool,
          region: target.region,
          serverType: target.serverType,
          ...(locked ? {} : { status: 'provisioning' }),
        })
        await nodes.setNodeHostKey(client, target.id, hostKey.publicKey)
        if (previous) {
          await appendEvent(client, {
            kind: 'host_key_replaced',
            nodeId: target.id,
            at: now,
            data: { actor, previous_host_key: previous, host_key: hostKey.publicKey },
          })
        }
      }
    }
    // Every value is validated and the budget met before anything is written.
    const budgeted = fitSeedBudget(document)
    const path = await deliverSeed(options, budgeted.bytes)
    try {
      await withTransaction(database.pool, register)
    } catch (error) {
      // The seed holds a secret or key the state never took: it must not be used.
      if (path !== null) await rm(path, { force: true })
      throw error
    }
    return {
      node: target.id,
      kind: options.kind,
      path,
      bytes: budgeted.bytes.length,
      plainBytes: budgeted.plainBytes,
      gzipped: budgeted.gzipped,
      autoinstall: options.kind === 'worker' && options.autoinstall,
      secretExpiresAt: secretExpiresAt?.toISOString() ?? null,
      hostKeyPublic,
      reissued,
      rekeyed,
    }
  } finally {
    await database.close()
  }
}

/** Writes the seed where it goes; the path written, or null for stdout. Any failure is OUTPUT_WRITE_FAILED. */
async function deliverSeed(options: SeedNodeOptions, bytes: Buffer): Promise<string | null> {
  if (options.output === '-') {
    if (!options.stdout) throw new Error('seedNode: --output - needs a stdout sink')
    try {
      await options.stdout(bytes)
    } catch (error) {
      throw outputWriteFailed('-', error)
    }
    return null
  }
  const path = resolve(options.output ?? defaultSeedPath(options.env, options.nodeId))
  try {
    if (options.output === undefined) {
      // The seeds directory holds secrets: only its owner may list or enter it.
      await mkdir(dirname(path), { recursive: true, mode: 0o700 })
      await chmod(dirname(path), 0o700)
    }
    await writePrivateFile(path, bytes)
  } catch (error) {
    if (isFleetkitError(error)) throw error
    throw outputWriteFailed(path, error)
  }
  return path
}

/** The definition's hostKey is the reviewed truth: a pinned key is replaced only with --rekey. */
function assertRekeyAllowed(nodeId: string, pinned: string | null | undefined, rekey: boolean): void {
  if (!pinned || rekey) return
  throw new FleetkitError(
    'HOST_KEY_PINNED',
    `node ${nodeId} has a pinned SSH host key (${pinned.split(' ').slice(0, 2).join(' ').slice(0, 40)}...); a worker seed would give it a new one, so nothing was written`,
    {
      actions: [
        `fleetkit seed ${nodeId} --kind worker --rekey   (only for a host being reinstalled; then put the printed hostKey into fleet.yaml)`,
      ],
      data: { node: nodeId },
    },
  )
}
