// `fleetkit seed`: renders a node's seed within the size budget, stages it 0600 beside its place,
// registers the node in the state (a fresh single-use secret for an agent, the pinned host key for
// a worker), and only once that committed puts the seed in place (a rename) or prints it.
import type { Stats } from 'node:fs'
import { chmod, lstat, rename, rm } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'

import type { StatePool } from '../../store/transaction.js'

import { isFleetkitError } from '../../checks/fleetkit-error.js'
import type { Clock } from '../../config/clock.js'
import { type Env, resolveStateDir } from '../../config/state-dir.js'
import type { Definition } from '../../definition/types.js'
import type { Rng } from '../../config/rng.js'
import { newEnrollmentSecret } from '../../render/enrollment-secret.js'
import { syncDirectory, tempPathFor } from '../../fs/atomic-file.js'
import { assertSecretOutsideGit, type GitRunner } from '../../fs/output-in-git.js'
import { writePrivateFile } from '../../fs/private-file.js'
import { fitSeedBudget } from '../../render/seed-budget.js'
import { agentSeedDocument, nodeTarget, type SeedKind, workerSeedDocument } from '../../render/seed-documents.js'
import { generateSshHostKey } from '../../render/ssh-host-key.js'
import { type Queryable, withTransaction } from '../../store/database.js'
import { lockNodeSecretState, onDatabaseClock } from '../../store/nodes/enrollment-secrets.js'
import { withNodeSeedLock } from '../../store/nodes/node-run-lock.js'
import { getNode, upsertDeclaredNode } from '../../store/nodes/nodes.js'
import { recordPoolPolicies } from '../../store/nodes/pool-policies.js'
import type { Confirm } from '../node/node-transition.js'
import { outputLostAfterCommit, outputWriteFailed, type Sink } from '../output-sink.js'
import { assertSamePending, confirmReplacing, otherPendingSeed, secretTimes } from './pending-seed.js'
import { assertRekeyAllowed, pinSeedHostKey, shortKey } from './seed-host-key.js'
import type { SeedFiles } from './seed-files.js'
import { settleStagedSeeds } from './staged-seeds.js'
import { assertNoProvisionRun } from '../provision/provision-guard.js'
import { applySecretPlan, planSecret, reissueAtStake, replanLocked, type SecretHolder } from '../node/secret-reissue.js'
import { makeDirectories, STATE_PARENT_MODE } from '../../fs/make-directories.js'

export type { SeedKind } from '../../render/seed-documents.js'

export interface SeedNodeOptions {
  /** The command's pool: this function runs one transaction on it and never opens or closes it. */
  pool: StatePool
  nodeId: string
  kind: SeedKind
  definition: Definition
  ttlMs: number
  autoinstall: boolean
  /** File to write (0600); "-" for `stdout`; undefined: <state dir>/seeds/NODE.user-data. */
  output?: string
  /**
   * Write an --output FILE inside a Git work tree that does not ignore it (refused otherwise with
   * SECRET_OUTPUT_IN_GIT, before anything is written or stored).
   */
  force?: boolean
  /** Runs git for that check; the real git by default. */
  git?: GitRunner
  /** Where "-" writes, once the state changed: a secret is printed only after its hash is stored. */
  stdout?: Sink
  /** A new secret for a node past provisioning, on purpose (recorded as secret_reissued). */
  reissue?: boolean
  /** A new SSH host key for a worker whose key is pinned, on purpose. */
  rekey?: boolean
  /**
   * Asked before a reissue to an enrolled node, a rekey of a pinned host key, or a seed that replaces
   * a pending seed of the other kind. Without it the first two go ahead (--reissue and --rekey say
   * it) and the last is refused with SEED_KIND_PENDING: a pending seed is never replaced unasked.
   */
  confirm?: Confirm
  env: Env
  /** Who seeds, recorded in the secret's and the host key's events: the command's actor (src/cli/actor.ts). */
  actor: string
  clock: Clock
  rng: Rng
  /** The local files an agent seed embeds, read by `readSeedFiles` before the database is opened. */
  files: SeedFiles
  /**
   * When the operator's command started, on `clock`'s time (default: this process's start). A --reissue
   * is refused when another run stored a secret after it, as `node token --reissue` is (secret-reissue.ts).
   */
  startedAt?: Date
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
   * The pinned host key's public half (worker seeds, and agent seeds of a node that declares ssh.user), as stored in the state.
   * @pattern ^ssh-ed25519 [A-Za-z0-9+/=]+ [a-z0-9-]+$
   */
  hostKeyPublic: string | null
  /** True when --reissue gave a node past provisioning a new secret. */
  reissued: boolean
  /** True when --rekey replaced a pinned host key: put hostKeyPublic into fleet.yaml. */
  rekeyed: boolean
  /**
   * True when this run stored nothing and put into place the seed a killed run had committed and staged
   * (its secret and host key are the ones the state holds).
   */
  finishedInterrupted: boolean
}

/** Where a seed goes without --output: the state directory, never the current one (the fleet's Git repository). */
function defaultSeedPath(env: Env, nodeId: string): string {
  return join(resolveStateDir(env), 'seeds', `${nodeId}.user-data`)
}

/**
 * Render the node's seed, stage it beside its place (a file that cannot be written, a full disk,
 * changes nothing), register the node in one transaction holding its lock, and only once that
 * committed rename the staged file into place or print the seed. So a seed that exists or was
 * printed always holds what the state took, and of concurrent runs for one node exactly one
 * registers; each other is refused with its code, removes its staged file and never touches the
 * winner's seed. Staging before the commit, rather than writing after it, keeps the common
 * failures (no space, no such directory, a refused path) before anything is stored; the rename
 * after it is the one step left that can fail after the commit, and it is reported as such.
 */
export async function seedNode(options: SeedNodeOptions): Promise<SeedNodeResult> {
  const { definition, clock, rng, pool } = options
  const { caBundle, releaseCa } = options.files
  const retry = `fleetkit seed ${options.nodeId} --kind ${options.kind}`
  if (options.output !== undefined && options.output !== '-') {
    // A seed holds a live secret or a host's private key: never where one `git add` publishes it.
    await assertSecretOutsideGit({
      path: options.output,
      what: `the ${options.kind} seed of ${options.nodeId}`,
      outside: `${retry}   (without --output: written 0600 under <state dir>/seeds/)`,
      retry: `${retry} --output ${options.output}`,
      force: options.force === true,
      ...(options.git ? { git: options.git } : {}),
    })
  }
  // A run killed between its commit and its rename left its staged seed beside the default path: it is
  // finished when it is the seed the state took, and removed otherwise. A re-run for the same kind, with
  // whatever flags, then reports that seed and stores nothing: its secret and key are new and unused, what
  // a --reissue or --rekey asks for, and no other seed holds them.
  const defaultPath = resolve(defaultSeedPath(options.env, options.nodeId))
  if (options.output === undefined || (options.output !== '-' && resolve(options.output) === defaultPath)) {
    const settled = await withNodeSeedLock(pool, options.nodeId, async () =>
      settleStagedSeeds(
        pool,
        options.nodeId,
        defaultPath,
        (await getNode(pool, options.nodeId)) ?? undefined,
        clock.now(),
      ),
    )
    const finished = settled.finished
    if (finished && finished.kind === options.kind) {
      const node = await getNode(pool, options.nodeId)
      return {
        node: options.nodeId,
        kind: finished.kind,
        path: finished.path,
        bytes: finished.bytes,
        plainBytes: finished.plainBytes,
        gzipped: finished.gzipped,
        autoinstall: finished.autoinstall,
        secretExpiresAt: finished.kind === 'agent' ? (node?.enrollmentSecretExpiresAt?.toISOString() ?? null) : null,
        hostKeyPublic: finished.hostKey ? (node?.hostKeyPublic ?? null) : null,
        reissued: false,
        rekeyed: false,
        finishedInterrupted: true,
      }
    }
  }
  const row = await getNode(pool, options.nodeId)
  // A provision run's server boots from its own seed: no seed may replace its secret or host key.
  assertNoProvisionRun(options.nodeId, row?.provisionState, retry)
  const target = nodeTarget(definition, options.nodeId, row)
  const now = clock.now()
  const actor = options.actor
  const confirm = options.confirm
  const yes = `${retry}${options.reissue ? ' --reissue' : ''}${options.rekey ? ' --rekey' : ''} --yes`
  // The pending seed of the other kind this run may replace: asked about once, before anything is written.
  const pending = otherPendingSeed(options.kind, row && { ...row, ...secretTimes(row) }, now)

  let document: string
  let secretExpiresAt: Date | null = null
  let hostKeyPublic: string | null = null
  let reissued = false
  let rekeyed = false
  let register: (client: Queryable) => Promise<void>
  if (options.kind === 'agent') {
    const seen: SecretHolder | undefined = row
      ? { status: row.status, secretExpiresAt: row.enrollmentSecretExpiresAt, secretUsedAt: row.enrollmentSecretUsedAt }
      : undefined
    const pinned = row?.hostKeyPublic ?? target.declaredHostKey
    // The command a refusal names: an agent seed of a node with a pinned host key needs --rekey too (a killed
    // seed whose file never landed pinned one), else the advised --reissue fails HOST_KEY_PINNED.
    const again = target.sshUser !== undefined && pinned && options.rekey !== true ? `${retry} --rekey` : retry
    // Refused before anything is rendered or written; planned again under the lock.
    const plan = planSecret(target.id, seen, options.reissue === true, again, now)
    await confirmReplacing(target.id, options.kind, pending, confirm, yes)
    if (plan.mode === 'reissue-enrolled' && confirm) {
      await confirm({
        what: reissueAtStake(target.id, plan.previousStatus),
        command: yes,
        data: { node: target.id, status: plan.previousStatus },
      })
    }
    const secret = newEnrollmentSecret(rng)
    const expiresAt = new Date(now.getTime() + options.ttlMs)
    secretExpiresAt = expiresAt
    // A node that declares ssh.user gets the worker seed's account and a pinned host key too.
    const hostKey = target.sshUser === undefined ? undefined : generateSshHostKey(target.id, rng)
    if (hostKey) {
      assertRekeyAllowed(
        target.id,
        pinned,
        options.rekey === true,
        'agent',
        `${retry}${options.reissue ? ' --reissue' : ''}`,
        target.declaredHostKey,
      )
      rekeyed = pinned !== undefined && pinned !== null
      hostKeyPublic = hostKey.publicKey
    }
    document = agentSeedDocument(definition, target, caBundle!, secret.secret, releaseCa, hostKey)
    reissued = plan.mode !== 'provision'
    register = async (client) => {
      const locked = await lockNodeSecretState(client, target.id)
      assertNoProvisionRun(target.id, locked?.provisionState, retry)
      assertSamePending(target.id, options.kind, pending, locked, clock.now(), yes)
      // Of reissues at once exactly one wins, however late the others read the node: one that started
      // before the stored secret was issued is refused (NODE_CHANGED_CONCURRENTLY) and writes no seed.
      const startedAt = await onDatabaseClock(
        client,
        options.startedAt ?? new Date(performance.timeOrigin),
        clock.now(),
      )
      const current = replanLocked(target.id, seen, locked, options.reissue === true, again, clock.now(), startedAt)
      reissued = current.mode !== 'provision'
      await applySecretPlan(client, {
        plan: current,
        node: target,
        secretSha256: secret.sha256,
        expiresAt,
        actor,
        via: 'seed',
        now,
      })
      if (hostKey) {
        const lockedKey = locked?.hostKeyPublic ?? target.declaredHostKey
        await pinSeedHostKey(client, {
          nodeId: target.id,
          kind: 'agent',
          planned: pinned,
          locked: lockedKey,
          declared: target.declaredHostKey,
          hostKeyPublic: hostKey.publicKey,
          rekey: options.rekey === true,
          retry,
          actor,
          now,
        })
      }
    }
  } else {
    const pinned = row?.hostKeyPublic ?? target.declaredHostKey
    assertRekeyAllowed(target.id, pinned, options.rekey === true, 'worker', undefined, target.declaredHostKey)
    rekeyed = pinned !== undefined && pinned !== null
    await confirmReplacing(target.id, options.kind, pending, confirm, yes)
    if (rekeyed && confirm) {
      await confirm({
        what: `replace the pinned SSH host key of ${target.id} (${shortKey(pinned!)}...): sync trusts only the new key from now on, so the host cannot be reached until it is reinstalled from this seed`,
        command: yes,
        data: { node: target.id },
      })
    }
    const hostKey = generateSshHostKey(target.id, rng)
    hostKeyPublic = hostKey.publicKey
    document = workerSeedDocument(definition, target, hostKey, options.autoinstall)
    register = async (client) => {
      const locked = await lockNodeSecretState(client, target.id)
      assertNoProvisionRun(target.id, locked?.provisionState, retry)
      const previous = locked?.hostKeyPublic ?? target.declaredHostKey
      assertSamePending(target.id, options.kind, pending, locked, clock.now(), yes)
      // A new row starts as provisioning; an existing node keeps its status.
      await upsertDeclaredNode(client, {
        id: target.id,
        pool: target.pool,
        region: target.region,
        serverType: target.serverType,
        // A failed node (its enrollment expired unused) is provisioning again with a new seed.
        ...(locked && locked.status !== 'failed' ? {} : { status: 'provisioning' }),
      })
      await pinSeedHostKey(client, {
        nodeId: target.id,
        kind: 'worker',
        planned: pinned,
        locked: previous,
        declared: target.declaredHostKey,
        hostKeyPublic: hostKey.publicKey,
        rekey: options.rekey === true,
        retry,
        actor,
        now,
      })
    }
  }
  // Every value is validated and the budget met before anything is written.
  const budgeted = fitSeedBudget(document)
  // With the node, what the sweep needs of the pools (stateful): it has no definition of its own.
  const registerWithPools = async (client: Queryable) => {
    await register(client)
    await recordPoolPolicies(client, definition.pools)
  }
  const what = `the ${options.kind} seed of ${target.id}`
  const next =
    options.kind === 'agent'
      ? [
          `${retry} --reissue${hostKeyPublic ? ' --rekey' : ''}   (replaces the secret${hostKeyPublic ? ' and the host key' : ''} of the seed nobody holds)`,
        ]
      : [`${retry} --rekey   (replaces the host key of the seed nobody holds)`]
  // Seeds of one node commit and write one after another (withNodeSeedLock): two winning at once (two --reissue
  // or --rekey, the second reading the node after the first committed) could otherwise leave on disk the seed
  // whose commit came first, holding a secret or host key the state no longer has.
  const written = await withNodeSeedLock(pool, target.id, async (): Promise<string | null> => {
    if (options.output === '-') {
      if (!options.stdout) throw new Error('seedNode: --output - needs a stdout sink')
      await withTransaction(pool, registerWithPools)
      try {
        await options.stdout(budgeted.bytes)
      } catch (error) {
        throw outputLostAfterCommit('-', error, what, next)
      }
      return null
    }
    const path = resolve(options.output ?? defaultSeedPath(options.env, options.nodeId))
    const staged = await stageSeed(options, path, budgeted.bytes)
    try {
      await withTransaction(pool, registerWithPools)
    } catch (error) {
      // The staged seed holds a secret or key the state never took: it must not be used.
      await rm(staged, { force: true })
      throw error
    }
    try {
      await rename(staged, path)
      await syncDirectory(dirname(path))
    } catch (error) {
      await rm(staged, { force: true })
      throw outputLostAfterCommit(path, error, what, next)
    }
    return path
  })
  return {
    node: target.id,
    kind: options.kind,
    path: written,
    bytes: budgeted.bytes.length,
    plainBytes: budgeted.plainBytes,
    gzipped: budgeted.gzipped,
    autoinstall: options.kind === 'worker' && options.autoinstall,
    secretExpiresAt: secretExpiresAt?.toISOString() ?? null,
    hostKeyPublic,
    reissued,
    rekeyed,
    finishedInterrupted: false,
  }
}

/** Writes the seed 0600 under a hidden random name beside `path`; returns that name. Any failure is OUTPUT_WRITE_FAILED. */
async function stageSeed(options: SeedNodeOptions, path: string, bytes: Buffer): Promise<string> {
  const staged = tempPathFor(path, options.rng)
  try {
    if (options.output === undefined) {
      // The seeds directory holds secrets: only its owner may list or enter it.
      await makeDirectories(dirname(path), 0o700, STATE_PARENT_MODE)
      await chmod(dirname(path), 0o700)
    }
    // The seed is staged beside PATH, which works when PATH is a directory; only the rename after the commit
    // would fail (EISDIR), with the secret stored and never shown. Refused here, before anything is stored.
    if ((await existingEntry(path))?.isDirectory())
      throw Object.assign(new Error(`${path} is a directory`), { code: 'EISDIR' })
    await writePrivateFile(staged, bytes)
  } catch (error) {
    if (isFleetkitError(error)) throw error
    throw outputWriteFailed(path, error)
  }
  return staged
}

/** What is at PATH now (a link itself, not its target: rename replaces a link), or undefined when nothing is. */
async function existingEntry(path: string): Promise<Stats | undefined> {
  try {
    return await lstat(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}
