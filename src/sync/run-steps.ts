// Steps of a sync run beside its phases: the pinned host-key check and the fingerprint fast path before
// them (src/sync/fingerprint.ts) and the canary's proofs after it (agent version, image) that `validate --since applied` reads.
import type { NodeRow } from '../store/nodes/nodes.js'
import { setSyncNode } from '../store/sync/sync-ledger.js'
import { recordCanaryProof } from '../store/scheduling/transition-facts.js'
import { agentHeartbeating, agentRoleRuns } from './enrollment.js'
import { findUnchanged, type FingerprintSummary, NOT_READ } from './fingerprint.js'
import { checkPinnedHostKey } from './ssh-client.js'
import type { RunContext } from './run-context.js'
import type { SyncReport } from './sync-report.js'

/**
 * Before any role: each node must present its pinned host key to node-ssh. A node with none pinned
 * (SSH_HOST_KEY_NOT_PINNED) or another key (SSH_HOST_KEY_MISMATCH) is failed now and runs nothing;
 * a node that does not answer is left to the phases, which report it unreachable.
 */
export async function checkHostKeys(ctx: RunContext, done: ReadonlySet<string>): Promise<void> {
  const { options, run } = ctx
  const ids = ctx.plan.targets.map((t) => t.id).filter((id) => !done.has(id))
  const refusals = await Promise.all(
    ids.map(async (id) => [id, await checkPinnedHostKey(ctx.sshTargets.get(id)!, options.env)] as const),
  )
  for (const [id, error] of refusals) {
    if (!error) continue
    ctx.refused.set(id, { state: 'failed', code: error.code, message: error.message })
    await setSyncNode(options.pool, run.id, id, { state: 'failed', code: error.code, message: error.message })
  }
}

/** The fast path: nodes whose inputs and managed state are as their last converge left them are converged now. */
export async function skipUnchanged(
  ctx: RunContext,
  done: Set<string>,
  note: (line: string) => void,
): Promise<FingerprintSummary> {
  const { options, plan, run } = ctx
  const off = ctx.check
    ? 'check mode runs every node'
    : plan.tags.length > 0
      ? '--tags runs part of the roles'
      : options.full
        ? '--full'
        : null
  const summary: FingerprintSummary = { off, unchanged: [], drifted: [], recorded: [] }
  if (off !== null) return summary
  const candidates = plan.targets.map((t) => t.id).filter((id) => !done.has(id) && !ctx.refused.has(id))
  const found = await guarded(
    ctx,
    note,
    'compared',
    () => findUnchanged(ctx.fingerprint, candidates, ctx.clock.now()),
    { unchanged: new Map(), drifted: [] },
  )
  for (const [id, row] of found.unchanged) {
    // Unchanged but its agent is silent: the full run installs it again and enrolls it.
    if (agentRoleRuns(ctx) && !(await agentHeartbeating(ctx, id))) {
      note(`${id} is unchanged but its agent does not heartbeat: it runs in full.`)
      found.unchanged.delete(id)
      continue
    }
    const message = `unchanged since run ${row.runId}: ${Object.keys(row.items).length} managed resources as recorded`
    await setSyncNode(options.pool, run.id, id, {
      state: 'converged',
      message,
      appliedRevision: plan.revision,
      agentVersion: plan.targets.find((t) => t.id === id)!.agentVersion,
    })
    options.report?.(`${id}: converged (${message})`)
    done.add(id)
  }
  for (const d of found.drifted)
    note(
      d.differs[0] === NOT_READ
        ? `${d.node} could not be read before the run (no answer to the probe): it runs in full.`
        : `${d.node} changed since its last converge (${d.differs.slice(0, 4).join(', ')}${d.differs.length > 4 ? `, ${d.differs.length - 4} more` : ''}): it runs in full.`,
    )
  return { ...summary, unchanged: [...found.unchanged.keys()], drifted: found.drifted }
}

/** A fingerprint that cannot be read or recorded costs speed, never the sync: the node runs in full next time. */
export async function guarded<T>(
  ctx: RunContext,
  note: (line: string) => void,
  what: string,
  work: () => Promise<T>,
  fallback: T,
): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (ctx.options.signal?.aborted) throw error
    note(
      `Fingerprints not ${what} (${(error as Error).message.split('\n')[0]}): ${what === 'recorded' ? 'the next sync runs these nodes in full' : 'every node runs in full'}.`,
    )
    return fallback
  }
}

/** A canary run that applied the roles proves its agent version and, when its host runs it, its pool's image. */
export async function recordProofs(
  ctx: RunContext,
  canary: string,
  stateRows: readonly NodeRow[],
): Promise<SyncReport['proofs']> {
  const { plan } = ctx
  const target = plan.targets.find((t) => t.id === canary)!
  const proofs: SyncReport['proofs'] = []
  const now = ctx.clock.now()
  const agentRan = plan.tags.length === 0 || plan.tags.includes('agent_update')
  if (agentRan) {
    const recorded = await recordCanaryProof(ctx.options.pool, {
      kind: 'agentVersion',
      value: target.agentVersion,
      nodeId: canary,
      provenAt: now,
    })
    proofs.push({ kind: 'agentVersion', value: target.agentVersion, node: canary, recorded })
  }
  const image = plan.images[target.pool]
  const row = stateRows.find((r) => r.id === canary)
  if (image && row?.image === image) {
    const recorded = await recordCanaryProof(ctx.options.pool, {
      kind: 'image',
      value: image,
      nodeId: canary,
      provenAt: now,
    })
    proofs.push({ kind: 'image', value: image, node: canary, recorded })
  }
  for (const p of proofs)
    ctx.options.report?.(
      `Canary proof: ${p.kind} ${p.value} on ${p.node}${p.recorded ? ' recorded' : ' (already proven)'}.`,
    )
  return proofs
}
