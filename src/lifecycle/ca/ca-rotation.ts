// `fleetkit ca rotate`: the phases of a CA rotation (begin, complete, abort, status) against the
// PKI directory and the state, each under the exclusive issuance lock so no certificate is issued mid-phase.
import type { StatePool } from '../../store/transaction.js'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { Confirm } from '../node/node-transition.js'
import type { Clock } from '../../config/clock.js'
import { planRotationAbort, planRotationBegin, planRotationCompletion } from '../../pki/ca-rotation.js'
import { certificateFingerprintSha256 } from '../../pki/fingerprint.js'
import { withPkiLock } from '../../pki/pki-lock.js'
import { buildPkiSet } from '../../pki/pki-set.js'
import {
  readArchivedCa,
  readPkiDirectory,
  removeArchivedCa,
  removeStaleTempFiles,
  writePkiFiles,
} from '../../pki/pki-files.js'
import * as store from '../../store/pki/ca-rotations.js'
import { judgeArchive } from './archive-leftover.js'
import { type Queryable, withTransaction } from '../../store/database.js'
import { appendEvent } from '../../store/events.js'
import {
  type CaRotateResult,
  incomplete,
  names,
  notStarted,
  notTheNewCa,
  result,
  type RotatePhase,
} from './ca-rotation-report.js'

export type { CaRotateResult, RotatePhase } from './ca-rotation-report.js'

export interface RotateOptions {
  /** The command's pool: each phase runs its transactions on it; it is never opened or closed here. */
  pool: StatePool
  phase: RotatePhase
  pkiDir: string
  clock: Clock
  dryRun?: boolean
  /**
   * --complete --force: complete although connected nodes have not moved onto the new CA (they are cut off),
   * after `confirm` named them. Without it such a completion is refused (CA_ROTATION_INCOMPLETE).
   */
  force?: boolean
  /** Asked (outside the issuance lock) before a forced completion cuts connected nodes off. */
  confirm?: Confirm
  /** --status --wait: called with each fresh status until --complete is possible or the signal aborts. */
  wait?: {
    intervalMs: number
    signal: AbortSignal
    sleep: (ms: number, signal: AbortSignal) => Promise<void>
    onProgress: (result: CaRotateResult) => void
  }
}

export async function rotateCa(options: RotateOptions): Promise<CaRotateResult> {
  const { pool } = options
  switch (options.phase) {
    // Each phase rewrites the PKI directory: one PKI command at a time on it (src/pki/pki-lock.ts).
    case 'begin':
      return withPkiLock(options.pkiDir, () => begin(pool, options))
    case 'complete':
      return withPkiLock(options.pkiDir, () => complete(pool, options))
    case 'abort':
      return withPkiLock(options.pkiDir, () => abort(pool, options))
    case 'status':
      return statusUntilReady(pool, options)
  }
}

type Pool = StatePool

/** Run a phase in one transaction holding the issuance lock exclusively (waits for issuance in flight). */
async function locked<T>(pool: Pool, work: (client: Queryable) => Promise<T>): Promise<T> {
  return withTransaction(pool, async (client) => {
    await store.takeIssuanceLockExclusive(client)
    return work(client)
  })
}

async function begin(pool: Pool, options: RotateOptions): Promise<CaRotateResult> {
  const { pkiDir, clock } = options
  const removedTempFiles = await removeStaleTempFiles(pkiDir)
  return locked(pool, async (client) => {
    const now = clock.now()
    const files = await readPkiDirectory(pkiDir)
    await buildPkiSet(pkiDir, files, now)
    const currentSha = certificateFingerprintSha256(files.caCertificate)
    const latest = await store.latestRotation(client)
    if (latest?.status === 'begun') {
      throw new FleetkitError(
        'CA_ROTATION_IN_PROGRESS',
        `a CA rotation is already begun (new CA ${latest.newCaSha256.slice(0, 16)}…, since ${latest.begunAt.toISOString()})`,
        {
          actions: ['fleetkit ca rotate --status', 'fleetkit ca rotate --complete', 'fleetkit ca rotate --abort'],
          data: { newCaSha256: latest.newCaSha256 },
        },
      )
    }
    const archive = await judgeArchive(pkiDir, files, latest)
    // Part of an archive a killed begin, abort or completion left, or a whole copy of the current CA
    // (a begin killed before its new CA was renamed in): what that run would have ended with is no archive.
    if (archive.kind === 'leftover' || (archive.kind === 'whole' && archive.copiesOfCurrent))
      await removeArchivedCa(pkiDir)
    const archived = archive.kind === 'whole' && !archive.copiesOfCurrent ? await readArchivedCa(pkiDir) : undefined
    if (archived) {
      const archivedSha = certificateFingerprintSha256(archived.caCertificate)
      if (latest?.status === 'completed' && latest.newCaSha256 === currentSha) {
        throw new FleetkitError(
          'CA_ROTATION_IN_PROGRESS',
          'the last rotation was completed in the state but its files were not finished (the archived CA is still there)',
          {
            actions: ['fleetkit ca rotate --complete'],
            data: { newCaSha256: latest.newCaSha256 },
          },
        )
      }
      if (archivedSha !== currentSha) {
        // A begin killed after its files were renamed but before its transaction committed: record it now.
        const rotation = await store.insertRotation(client, { oldCaSha256: archivedSha, newCaSha256: currentSha, now })
        await appendEvent(client, {
          kind: 'ca_rotation_begun',
          at: now,
          data: { old_ca_sha256: archivedSha, new_ca_sha256: currentSha, resumed: true },
        })
        return result(options, { currentCaSha256: currentSha, rotation, removedTempFiles, resumed: true })
      }
      // An archive of the current CA: a begin killed before its new CA was renamed in, or an abort's leftover.
      await removeArchivedCa(pkiDir)
    }
    const plan = await planRotationBegin(files, now)
    const rotation = await store.insertRotation(client, {
      oldCaSha256: plan.oldCaSha256,
      newCaSha256: plan.newCaSha256,
      now,
    })
    await appendEvent(client, {
      kind: 'ca_rotation_begun',
      at: now,
      data: { old_ca_sha256: plan.oldCaSha256, new_ca_sha256: plan.newCaSha256 },
    })
    // Inside the transaction: a write that fails rolls the row back. The gateway reloads the set within 2 s.
    await writePkiFiles(pkiDir, plan.files)
    return result(options, {
      currentCaSha256: plan.newCaSha256,
      rotation,
      removedTempFiles,
      filesWritten: names(plan.files),
      abortPossible: true,
    })
  })
}

async function complete(pool: Pool, options: RotateOptions): Promise<CaRotateResult> {
  const { pkiDir, clock, dryRun = false } = options
  const removedTempFiles = dryRun ? [] : await removeStaleTempFiles(pkiDir)
  // A forced completion asks first, naming the connected nodes it cuts off; the question is asked before
  // the exclusive issuance lock (no renewal waits on a person), and the locked run below cuts off no node
  // beyond the ones confirmed.
  const confirmedCutOff = dryRun || !options.force ? new Set<string>() : await confirmForcedCutOff(pool, options)
  const outcome = await locked(pool, async (client) => {
    const now = clock.now()
    const latest = await store.latestRotation(client)
    if (!latest || latest.status === 'aborted') throw notStarted('complete')
    const files = await readPkiDirectory(pkiDir)
    const currentSha = certificateFingerprintSha256(files.caCertificate)
    if (currentSha !== latest.newCaSha256) throw notTheNewCa(pkiDir, latest, currentSha)
    // Computed before any state changes: the re-signed server certificate and the new-CA-only bundle.
    const plan = await planRotationCompletion(files, now)
    if (latest.status === 'completed') {
      // What is left of the archive (whole, or part of it when a run was killed between its unlinks) is
      // removed after this transaction, as by the run that was killed; anything else is PKI_INVALID.
      const archive = await judgeArchive(pkiDir, files, latest)
      if (plan.length === 0 && archive.kind === 'none') throw notStarted('complete')
      return { latest, plan, revoked: 0, progress: null, resumed: true, currentSha }
    }
    const progress = await store.rotationProgress(client, latest.newCaSha256, now)
    const moved = await store.nodesUsingCertificatesFrom(client, latest.newCaSha256, now)
    const abortPossible = moved.length === 0
    if (dryRun) return { latest, plan: [], revoked: 0, progress, resumed: false, currentSha, abortPossible }
    if (progress.blocking.some((n) => !confirmedCutOff.has(n.nodeId))) throw incomplete(progress, abortPossible)
    const revoked = await store.revokeCertificatesNotFrom(client, latest.newCaSha256, now)
    await store.finishRotation(client, latest.id, 'completed', now)
    await appendEvent(client, {
      kind: 'ca_rotation_completed',
      at: now,
      data: {
        old_ca_sha256: latest.oldCaSha256,
        new_ca_sha256: latest.newCaSha256,
        revoked,
        cut_off: progress.cutOff.map((n) => n.nodeId).slice(0, 100),
        ...(progress.blocking.length > 0
          ? { forced: true, forced_cut_off: progress.blocking.map((n) => n.nodeId).slice(0, 100) }
          : {}),
      },
    })
    return {
      latest: { ...latest, status: 'completed' as const, finishedAt: now },
      plan,
      revoked,
      progress,
      resumed: false,
      currentSha,
    }
  })
  if (dryRun) {
    const p = outcome.progress!
    return result(options, {
      currentCaSha256: outcome.currentSha,
      rotation: outcome.latest,
      removedTempFiles,
      progress: p,
      abortPossible: outcome.abortPossible ?? false,
      completePossible: p.blocking.length === 0,
    })
  }
  // The state is committed: the files follow. A run killed here is finished by running --complete again.
  if (outcome.plan.length > 0) await writePkiFiles(pkiDir, outcome.plan)
  await removeArchivedCa(pkiDir)
  return result(options, {
    currentCaSha256: outcome.currentSha,
    rotation: outcome.latest,
    removedTempFiles,
    progress: outcome.progress,
    revoked: outcome.revoked,
    filesWritten: [...names(outcome.plan), 'ca.key.previous (deleted)'],
    resumed: outcome.resumed,
  })
}

/** The connected nodes a forced completion would cut off, confirmed by the operator (none: nothing asked). */
async function confirmForcedCutOff(pool: Pool, options: RotateOptions): Promise<Set<string>> {
  const latest = await store.latestRotation(pool)
  if (latest?.status !== 'begun') return new Set()
  const progress = await store.rotationProgress(pool, latest.newCaSha256, options.clock.now())
  if (progress.blocking.length === 0) return new Set()
  const shown = progress.blocking.slice(0, 20).map((n) => `${n.nodeId} (${n.status})`)
  const more = progress.blocking.length > shown.length ? ` and ${progress.blocking.length - shown.length} more` : ''
  if (options.confirm)
    await options.confirm({
      what: `complete the CA rotation although ${progress.blocking.length} connected node(s) still use the old CA: ${shown.join(', ')}${more}; their agents are refused from then on and each needs a new secret (fleetkit node token NODE --reissue), the new ca-bundle.pem on its host and fleetkit-agent enroll`,
      command: 'fleetkit ca rotate --complete --force --yes',
      data: { nodes: progress.blocking.map((n) => n.nodeId) },
    })
  return new Set(progress.blocking.map((n) => n.nodeId))
}

async function abort(pool: Pool, options: RotateOptions): Promise<CaRotateResult> {
  const { pkiDir, clock } = options
  const removedTempFiles = await removeStaleTempFiles(pkiDir)
  const outcome = await locked(pool, async (client) => {
    const now = clock.now()
    const latest = await store.latestRotation(client)
    if (latest?.status === 'aborted') {
      // An abort killed after its commit, between its unlinks: the old CA is back, what remains of the
      // archive is copies of it. Removing them below finishes that abort.
      const files = await readPkiDirectory(pkiDir)
      const archive = await judgeArchive(pkiDir, files, latest)
      if (
        certificateFingerprintSha256(files.caCertificate) === latest.oldCaSha256 &&
        (archive.kind === 'leftover' || (archive.kind === 'whole' && archive.copiesOfCurrent))
      )
        return { latest, files: [], resumed: true, revoked: 0 }
    }
    if (!latest || latest.status !== 'begun') throw notStarted('abort')
    // Only nodes seen authenticating with a new-CA certificate depend on it: their old ones were revoked
    // at that first use. A certificate issued but never used (a lost renewal answer) holds no abort back.
    const moved = await store.nodesUsingCertificatesFrom(client, latest.newCaSha256, now)
    if (moved.length > 0) {
      const shown = moved.slice(0, 20).join(', ') + (moved.length > 20 ? ` and ${moved.length - 20} more` : '')
      throw new FleetkitError(
        'CA_ROTATION_ABORT_REFUSED',
        `${moved.length} node(s) already moved onto the new CA (${shown}): their old-CA certificates are revoked, so aborting would cut them off; the rotation can only be completed`,
        {
          actions: ['fleetkit ca rotate --status', 'fleetkit ca rotate --complete'],
          data: { moved, newCaSha256: latest.newCaSha256 },
        },
      )
    }
    const archived = await readArchivedCa(pkiDir)
    if (!archived || certificateFingerprintSha256(archived.caCertificate) !== latest.oldCaSha256) {
      throw new FleetkitError(
        'PKI_INVALID',
        `${pkiDir} does not hold the archived CA ${latest.oldCaSha256.slice(0, 16)}… of the rotation (ca.pem.previous, ca.key.previous, ca-bundle.pem.previous)`,
        {
          actions: ['restore the PKI directory from backup', 'fleetkit ca rotate --complete once every node renewed'],
          data: { dir: pkiDir, problem: 'archive missing' },
        },
      )
    }
    const files = planRotationAbort(archived)
    // Revoked before a gateway that still trusts the new CA could see one presented: its first use would
    // revoke the node's old-CA certificate, the one that keeps working after the abort.
    const revoked = await store.revokeUnusedCertificatesFrom(client, latest.newCaSha256, now)
    await store.finishRotation(client, latest.id, 'aborted', now)
    await appendEvent(client, {
      kind: 'ca_rotation_aborted',
      at: now,
      data: { old_ca_sha256: latest.oldCaSha256, new_ca_sha256: latest.newCaSha256, revoked_unused: revoked },
    })
    // Inside the transaction: until the old CA is back in place, the abort is not recorded.
    await writePkiFiles(pkiDir, files)
    return { latest: { ...latest, status: 'aborted' as const, finishedAt: now }, files, resumed: false, revoked }
  })
  await removeArchivedCa(pkiDir)
  return result(options, {
    currentCaSha256: outcome.latest.oldCaSha256,
    rotation: outcome.latest,
    removedTempFiles,
    filesWritten: names(outcome.files),
    revoked: outcome.revoked,
    resumed: outcome.resumed,
  })
}

async function status(pool: Pool, options: RotateOptions): Promise<CaRotateResult> {
  const now = options.clock.now()
  const files = await readPkiDirectory(options.pkiDir)
  const currentSha = certificateFingerprintSha256(files.caCertificate)
  const latest = await store.latestRotation(pool)
  if (latest?.status !== 'begun') return result(options, { currentCaSha256: currentSha, rotation: latest })
  const progress = await store.rotationProgress(pool, latest.newCaSha256, now)
  const abortPossible = (await store.nodesUsingCertificatesFrom(pool, latest.newCaSha256, now)).length === 0
  return result(options, {
    currentCaSha256: currentSha,
    rotation: latest,
    progress,
    abortPossible,
    completePossible: progress.blocking.length === 0,
  })
}

async function statusUntilReady(pool: Pool, options: RotateOptions): Promise<CaRotateResult> {
  let current = await status(pool, options)
  const wait = options.wait
  while (wait && current.rotation.state === 'begun' && !current.completePossible && !wait.signal.aborted) {
    wait.onProgress(current)
    await wait.sleep(wait.intervalMs, wait.signal)
    current = await status(pool, options)
  }
  return current
}
