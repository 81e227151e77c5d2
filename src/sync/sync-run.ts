// `fleetkit sync`, `--dry-run` and `fleetkit drift`: plan, lock, ledger, the canary phase (handed to
// the next reachable node of its pool when the canary is unreachable), the fleet phase (run-hosts.ts), canary proofs.
import { readFileSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { systemClock } from '../config/clock.js'
import { resolveStateDir } from '../config/state-dir.js'
import { sha256Hex } from '../pki/fingerprint.js'
import { loadHostPolicy } from '../definition/host-policy.js'
import { readReleaseCa } from '../render/release-ca.js'
import { renderInventory } from '../render/inventory.js'
import { appendEvent } from '../store/events.js'
import { listNodes, type NodeRow } from '../store/nodes/nodes.js'
import { recordPoolPolicies } from '../store/nodes/pool-policies.js'
import {
  contentConvergedBefore,
  finishSyncRun,
  listSyncNodes,
  setSyncNode,
  SYNC_LOCK_KEY,
} from '../store/sync/sync-ledger.js'
import { withSessionLock } from '../store/advisory-lock.js'
import { describeSpeed, speedSettings } from './ansible-phase.js'
import { openRun, readSource, resumableOnInterrupt } from './run-open.js'
import { type FingerprintContext, fingerprintInputHash, recordFingerprints } from './fingerprint.js'
import type { RunContext, SyncOptions } from './run-context.js'
import { checkHostKeys, guarded, recordProofs, skipUnchanged } from './run-steps.js'
import { runHosts } from './run-hosts.js'
import { sshTargets } from './ssh-targets.js'
import { buildSyncPlan, nextCanary } from './plan.js'
import { withResumeScope } from './resume-scope.js'
import { inProgressError, staleError } from './run-ownership.js'
import { FINAL_OK, type SyncReport, nodeReport, outcomeOf } from './sync-report.js'
import { makeDirectories, STATE_PARENT_MODE } from '../fs/make-directories.js'

export type { SyncOptions } from './run-context.js'

export async function runSync(given: SyncOptions): Promise<SyncReport> {
  const { pool, env, mode } = given
  const report = given.report ?? (() => {})
  const check = mode !== 'apply'
  if (given.resume !== undefined && mode !== 'apply')
    throw new FleetkitError('USAGE_INVALID', '--resume finishes an applying sync; it cannot be combined with --dry-run')
  // A resume runs the run's own --limit and --tags, whether or not the operator repeats them.
  const options = await withResumeScope(given)
  const source = await readSource(options)
  const stateRows = await listNodes(pool)
  const { extraVarsFile } = options
  // release.caFile is read from the operator's disk, as `fleetkit inventory` does (or the gateway CA bundle
  // when release.url is the gateway's enrollment listener); its content is part of the plan.
  const releaseCaPem = await readReleaseCa(source.definition, dirname(options.definitionPath), () => {
    const gatewayCa = options.gatewayCa ?? options.enrollment?.gatewayCa
    if (!gatewayCa) throw new Error('runSync: release.url is on the gateway, and no gatewayCa reader was given')
    return gatewayCa()
  })
  const plan = buildSyncPlan({
    definition: source.definition,
    definitionText: source.text,
    revision: source.revision,
    stateNodes: stateRows,
    limit: options.limit,
    tags: options.tags,
    extraVarsSha256: extraVarsFile ? sha256Hex(readFileSync(extraVarsFile)) : undefined,
    releaseCaSha256: releaseCaPem === undefined ? undefined : sha256Hex(releaseCaPem),
  })
  if (plan.targets.length === 0) {
    throw new FleetkitError(
      'SYNC_NO_TARGETS',
      `nothing to ${mode === 'drift' ? 'check' : 'sync'}: ${plan.skipped.length === 0 ? 'the fleet has no nodes' : plan.skipped.map((s) => `${s.id} (${s.reason})`).join(', ')}`,
      {
        // Each skipped node's own way back (unpark, admit, provision): none is right for every node.
        actions: [
          'fleetkit node list',
          ...new Set(plan.skipped.flatMap((s) => (s.action === undefined ? [] : [s.action]))),
        ],
        data: { skipped: plan.skipped },
      },
    )
  }
  if (options.planHash !== undefined && options.planHash !== plan.hash)
    throw staleError(options.planHash, plan.hash, 'the plan changed since it was reviewed')

  const stateDir = resolveStateDir(env)
  const speed = speedSettings({
    targets: plan.targets.length,
    noMitogen: options.noMitogen ?? false,
    strategy: options.strategy,
    stateDir,
  })
  report(`Ansible: ${describeSpeed(speed)}.`)

  const start = async (): Promise<SyncReport> => {
    const run = await openRun(options, plan)
    // The sweep has no definition: what it needs of the pools (stateful) is recorded by what applies one.
    if (run.kind === 'sync') await recordPoolPolicies(pool, source.definition.pools)
    const workDir = join(stateDir, 'sync', `run-${run.id}`)
    await makeDirectories(workDir, 0o700, STATE_PARENT_MODE)
    const inventoryPath = join(workDir, 'inventory.yml')
    const rendered = renderInventory({
      definition: source.definition,
      stateNodes: stateRows,
      hostPolicy: loadHostPolicy(),
      knownHostsPath: join(workDir, 'known_hosts'),
      releaseCaPem,
    })
    await writeFile(join(workDir, 'known_hosts'), rendered.knownHosts, { mode: 0o600 })
    await writeFile(inventoryPath, rendered.yaml, { mode: 0o600 })
    await appendEvent(pool, {
      kind: 'sync_run_started',
      data: {
        run_id: run.id,
        kind: run.kind,
        revision: plan.revision,
        plan_hash: plan.hash,
        started_by: run.startedBy,
        resumed: options.resume !== undefined,
      },
    })
    const targets = sshTargets(
      source.definition,
      stateRows,
      plan.targets.map((t) => t.id),
    )
    const fingerprint: FingerprintContext = {
      targets,
      // The probe before node-ssh (one ansible-playbook over fingerprint.yml): bench/sync.ts measures both.
      via: options.fingerprintVia ?? 'ssh',
      pool,
      runId: run.id,
      attempt: run.attempts,
      workDir,
      inventoryPath,
      speed,
      env,
      signal: options.signal,
      inputHash: fingerprintInputHash(plan.contentHash, rendered.convergeInputs, rendered.knownHosts, workDir),
    }
    const context: RunContext = {
      options,
      plan,
      run,
      workDir,
      inventoryPath,
      extraVarsFile,
      speed,
      check,
      clock: options.clock ?? systemClock,
      fingerprint,
      definition: source.definition,
      sshTargets: targets,
      refused: new Map(),
      enrolled: [],
      converged: new Map(),
      notConverged: [],
      differences: new Map(),
    }
    return await resumableOnInterrupt(run, () => execute(context, stateRows))
  }
  // Only an applying sync takes the lock: check mode changes nothing that another sync could race.
  if (mode !== 'apply') return start()
  const locked = await withSessionLock(pool, SYNC_LOCK_KEY, start)
  if (!locked.locked) throw await inProgressError(pool)
  return locked.value
}

async function execute(ctx: RunContext, stateRows: readonly NodeRow[]): Promise<SyncReport> {
  const { options, plan, run } = ctx
  const { pool } = options
  const report = options.report ?? (() => {})
  const notes: string[] = []
  const note = (line: string) => {
    notes.push(line)
    report(line)
  }
  const done = new Set(
    (await listSyncNodes(pool, run.id))
      .filter((n) => FINAL_OK.has(n.state) || n.state === 'skipped')
      .map((n) => n.nodeId),
  )
  const byId = new Map(plan.targets.map((t) => [t.id, t]))
  let canaryRan: string | null = null
  let canaryFailed = false
  let skippedBecause: string | null = null
  const proofs: SyncReport['proofs'] = []
  await checkHostKeys(ctx, done)
  const fingerprint = await skipUnchanged(ctx, done, note)

  // The canary proves the revision alone first, unless nothing new is being proven.
  if (ctx.check) skippedBecause = 'check mode changes nothing: every node is checked at once'
  else if (plan.canary && fingerprint.unchanged.includes(plan.canary))
    skippedBecause = `the canary ${plan.canary} is unchanged since it converged these inputs`
  else if (plan.canary && done.has(plan.canary))
    skippedBecause = `the canary ${plan.canary} already converged in this run`
  else if (await contentConvergedBefore(pool, plan.contentHash))
    skippedBecause = 'this definition and these roles already converged everywhere: every node runs at once'
  if (skippedBecause) note(`Canary: ${skippedBecause}.`)

  // Nodes that had the canary role in this attempt: each ended (converged, failed or unreachable).
  const tried = new Set<string>()
  if (!skippedBecause && plan.canary) {
    let candidate: string | null = plan.canary
    const pool0 = byId.get(plan.canary)!.pool
    while (candidate) {
      tried.add(candidate)
      if (candidate !== plan.canary) await setSyncNode(pool, run.id, candidate, { state: 'pending', phase: 'canary' })
      report(`Canary ${candidate} goes first.`)
      const judged = (await runHosts(ctx, [candidate], 'canary')).get(candidate)!
      // Only a canary that was offline before the run hands its role on; one lost after tasks ran on it may
      // have been cut off by this very change, which the next node would then get too.
      if (judged.state !== 'unreachable' || judged.lostMidRun) {
        canaryRan = candidate
        canaryFailed = !FINAL_OK.has(judged.state)
        break
      }
      const next = nextCanary(plan, pool0, new Set([...tried, ...done]))
      note(
        next
          ? `Canary ${candidate} is unreachable (offline): ${next.id}, the next reachable node of pool ${pool0}, takes the canary role.`
          : `Canary ${candidate} is unreachable and pool ${pool0} has no other node to take the canary role.`,
      )
      candidate = next?.id ?? null
      if (!candidate) canaryFailed = true
    }
    if (canaryRan && !canaryFailed) proofs.push(...(await recordProofs(ctx, canaryRan, stateRows)))
  }

  const remaining = plan.targets.map((t) => t.id).filter((id) => !done.has(id) && !tried.has(id))
  if (canaryFailed) {
    for (const id of remaining)
      await setSyncNode(pool, run.id, id, {
        state: 'not_attempted',
        message: `the canary ${canaryRan ?? plan.canary} did not converge`,
      })
  } else if (remaining.length > 0) {
    await runHosts(ctx, remaining, ctx.check ? 'check' : 'fleet')
  }

  if (fingerprint.off === null)
    fingerprint.recorded = await guarded(
      ctx,
      note,
      'recorded',
      () => recordFingerprints(ctx.fingerprint, ctx.converged, ctx.notConverged, ctx.clock.now()),
      [],
    )
  const nodes = await listSyncNodes(pool, run.id)
  const outcome = outcomeOf(options.mode, nodes, canaryFailed)
  await finishSyncRun(pool, run.id, outcome)
  const counts: Record<string, number> = {}
  for (const n of nodes) counts[n.state] = (counts[n.state] ?? 0) + 1
  await appendEvent(pool, {
    kind: 'sync_run_finished',
    data: { run_id: run.id, kind: run.kind, outcome, revision: plan.revision, counts },
  })
  return {
    runId: run.id,
    kind: run.kind,
    outcome,
    revision: plan.revision,
    planHash: plan.hash,
    plan: {
      playbook: plan.playbook,
      tags: plan.tags,
      definitionSha256: plan.definitionSha256,
      rolesSha256: plan.rolesSha256,
      targets: plan.targets.map((t) => t.id),
      canary: plan.canary,
    },
    canary: { declared: plan.canary, ran: canaryRan, skippedBecause, notes },
    speed: { mitogen: ctx.speed.mitogen, forks: ctx.speed.forks, description: describeSpeed(ctx.speed) },
    nodes: nodes.map((n) => nodeReport(n, ctx.differences.get(n.nodeId))),
    counts,
    proofs,
    fingerprint,
    enrolled: [...ctx.enrolled].sort(),
    resumed: options.resume !== undefined,
  }
}
