// One phase of a sync run (the canary, the fleet, or check mode's every node): the ledger's `running`,
// Ansible over the phase's hosts, each host's judgement, its agent's enrollment hand-off and first
// heartbeat, and the ledger's final row per host with its report line.
import { setSyncAnsiblePid, setSyncNode } from '../store/sync/sync-ledger.js'
import { type PhaseResult, runPhase } from './ansible-phase.js'
import { agentRoleRuns, ensureAgentHeartbeating } from './enrollment.js'
import { type AnsibleEvent, type HostResult, judgeHost, type NodeJudgement, playEndedOn } from './host-results.js'
import type { RunContext } from './run-context.js'
import { FINAL_OK, formatDifferences, formatNodeLine, type SyncNodeReport } from './sync-report.js'

type HandOff = Awaited<ReturnType<typeof ensureAgentHeartbeating>>
type Settled = { value: HandOff } | { error: unknown }

/**
 * Each host's enrollment hand-off, started as soon as the host ended its play (site.yml's post task)
 * rather than after the slowest host of the phase: under the free strategy the first hosts end long
 * before the last, and a hand-off is SSH, an enrollment and a heartbeat wait of seconds each.
 */
class HandOffs {
  private readonly started = new Map<string, Promise<Settled>>()

  constructor(private readonly ctx: RunContext) {}

  start(host: string): void {
    if (this.started.has(host)) return
    this.started.set(
      host,
      ensureAgentHeartbeating(this.ctx, host).then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      ),
    )
  }

  /** The host's hand-off: the one its play's end started, or one started now. */
  async of(host: string): Promise<HandOff> {
    this.start(host)
    const settled = await this.started.get(host)!
    if ('error' in settled) throw settled.error
    return settled.value
  }

  /** Waits for every hand-off started, so none runs on after the phase returns or throws. */
  async settle(): Promise<void> {
    await Promise.all(this.started.values())
  }
}

export async function runHosts(ctx: RunContext, hosts: string[], label: string): Promise<Map<string, NodeJudgement>> {
  const { options, run } = ctx
  const { pool } = options
  for (const h of hosts) await setSyncNode(pool, run.id, h, { state: 'running' })
  // Nodes the pinned host-key check refused run no task: their judgement is already made.
  const reached = hosts.filter((h) => !ctx.refused.has(h))
  // Converged only with its agent heartbeating: the roles installed it, the hand-off enrolls it.
  const handOffs = agentRoleRuns(ctx) ? new HandOffs(ctx) : undefined
  let tasks = 0
  const onEvent = (e: AnsibleEvent) => {
    if (e.event === 'task_start') {
      tasks += 1
      options.progress?.(`${label}: task ${tasks}, ${e.role ? `${e.role}: ` : ''}${e.task ?? ''}`)
    } else if ((e.event === 'failed' && !e.ignored) || e.event === 'unreachable') {
      options.report?.(`${e.host}: ${e.event} at ${e.role ? `${e.role}: ` : ''}${e.task ?? ''}`)
    }
    // A host that reached the post task failed nothing on the way (a failure ends its play).
    const ended = playEndedOn(e)
    if (ended !== null && reached.includes(ended)) handOffs?.start(ended)
  }
  let phase: PhaseResult = { exitCode: null, hosts: new Map(), outputTail: '' }
  try {
    if (reached.length > 0)
      phase = await runPhase({
        workDir: ctx.workDir,
        inventoryPath: ctx.inventoryPath,
        playbook: ctx.plan.playbook,
        hosts: reached,
        label: `${label}-${run.attempts}`,
        check: ctx.check,
        tags: ctx.plan.tags,
        extraVarsFile: ctx.extraVarsFile,
        speed: ctx.speed,
        env: options.env,
        signal: options.signal,
        onSpawn: (pid) => void setSyncAnsiblePid(pool, run.id, pid).catch(() => undefined),
        onEvent,
      })
  } catch (error) {
    await handOffs?.settle()
    throw error
  }
  if (reached.length > 0) await setSyncAnsiblePid(pool, run.id, null)
  const judged = new Map<string, NodeJudgement>()
  for (const h of hosts) {
    const result = phase.hosts.get(h)
    const judgement = ctx.refused.get(h) ?? judgeHost(result)
    if (!result && !ctx.refused.has(h) && phase.outputTail)
      judgement.message = `${judgement.message}: ${phase.outputTail
        .split('\n')
        .filter((l) => l.trim() !== '')
        .slice(-2)
        .join(' ')
        .slice(0, 400)}`
    judged.set(h, judgement)
  }
  if (handOffs) {
    try {
      await Promise.all(
        hosts
          .filter((h) => FINAL_OK.has(judged.get(h)!.state))
          .map(async (h) => {
            const agent = await handOffs.of(h)
            if (agent.judgement) judged.set(h, agent.judgement)
            else if (agent.enrolled) ctx.enrolled.push(h)
          }),
      )
    } finally {
      await handOffs.settle()
    }
  }
  for (const h of hosts) await recordHost(ctx, h, judged.get(h)!, phase.hosts.get(h), label)
  return judged
}

/** The ledger's final row for one host of the phase, and its report line. */
async function recordHost(
  ctx: RunContext,
  h: string,
  judgement: NodeJudgement,
  result: HostResult | undefined,
  label: string,
): Promise<void> {
  const { options, run } = ctx
  if (!ctx.check && FINAL_OK.has(judgement.state)) ctx.converged.set(h, result?.resources ?? [])
  else if (!ctx.check) ctx.notConverged.push(h)
  // Diffs stay in this run's memory: a file's content is not for the ledger.
  const differences = result?.differences ?? []
  if (differences.length > 0) ctx.differences.set(h, differences)
  const target = ctx.plan.targets.find((t) => t.id === h)
  await setSyncNode(options.pool, run.id, h, {
    state: judgement.state,
    code: judgement.code,
    message: judgement.message,
    tasksOk: result?.tasksOk ?? 0,
    tasksChanged: result?.tasksChanged ?? 0,
    tasksFailed: result?.tasksFailed ?? 0,
    changes: result?.changes ?? {},
    ...(FINAL_OK.has(judgement.state) && !ctx.check
      ? { appliedRevision: ctx.plan.revision, agentVersion: target?.agentVersion ?? null }
      : {}),
  })
  const line: SyncNodeReport = {
    node: h,
    phase: label === 'canary' ? 'canary' : 'fleet',
    state: judgement.state,
    code: judgement.code,
    runbook: null,
    message: judgement.message,
    tasks: { ok: result?.tasksOk ?? 0, changed: result?.tasksChanged ?? 0, failed: result?.tasksFailed ?? 0 },
    changes: result?.changes ?? {},
    differences,
  }
  options.report?.(formatNodeLine(line, ctx.check))
  for (const l of formatDifferences(line)) options.report?.(l)
}
