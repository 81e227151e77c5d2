// After the roles installed the agent: a node whose agent holds no live certificate gets a single-use
// secret (issued as `fleetkit node token` issues it: options.enrollment) and the gateway CA over the pinned SSH session,
// its agent is restarted, and sync waits for its heartbeat. A node is converged only when it heartbeats.
import { readAgentLiveness, type AgentLiveness } from '../store/nodes/agent-liveness.js'
import { appendEvent } from '../store/events.js'
import type { NodeJudgement } from './host-results.js'
import type { RunContext } from './run-context.js'
import { openPinned, SshUnreachable } from './ssh-client.js'

/** Where the agent reads them (cloud-init/agent.env.tmpl, which the agent role writes as /etc/fleetkit/agent.env). */
const AGENT_SECRET_PATH = '/var/lib/fleetkit/enrollment-secret'
const AGENT_CA_PATH = '/etc/fleetkit/gateway-ca.pem'
const AGENT_ACCOUNT = 'fleetkit-agent'
const AGENT_UNIT = 'fleetkit-agent.service'
const AGENT_BINARY = '/usr/local/bin/fleetkit-agent'

/** The secret sync hands over lives this long: the agent uses it within seconds of its restart. */
export const SYNC_SECRET_TTL_MS = 10 * 60_000
/** A heartbeat this recent means an enrolled agent is running (it beats every 15 s by default). */
const FRESH_HEARTBEAT_SECONDS = 60
const DEFAULT_WAIT_SECONDS = 120
// A first heartbeat comes within a second or two of the restart: a short poll keeps the wait, which the canary makes everyone pay, short.
const POLL_MS = 250

/** Statuses whose agent enrolled (lifecycle/node/secret-reissue.ts): sync never gives them a new secret. */
const ENROLLED: ReadonlySet<string> = new Set(['active', 'unhealthy', 'draining', 'lost'])

/** Whether the run installs the agent on the node: a full run, or --tags naming the agent role. */
export function agentRoleRuns(ctx: RunContext): boolean {
  return !ctx.check && (ctx.plan.tags.length === 0 || ctx.plan.tags.includes('agent'))
}

function heartbeatWaitMs(options: RunContext['options']): number {
  const seconds = options.heartbeatTimeoutSeconds
  return (seconds !== undefined && Number.isFinite(seconds) && seconds > 0 ? seconds : DEFAULT_WAIT_SECONDS) * 1000
}

/** The fast path's check: an unchanged node counts as converged only while its agent heartbeats. */
export async function agentHeartbeating(ctx: RunContext, node: string): Promise<boolean> {
  return isHeartbeating(await readAgentLiveness(ctx.options.pool, node))
}

function isHeartbeating(live: AgentLiveness | undefined): boolean {
  return (
    live !== undefined &&
    ENROLLED.has(live.status) &&
    live.liveCertificate &&
    live.heartbeatAgeSeconds !== null &&
    live.heartbeatAgeSeconds <= FRESH_HEARTBEAT_SECONDS
  )
}

/**
 * Makes sure `node`'s agent is enrolled and heartbeating. Returns null when it is (`enrolled`: sync
 * handed it a secret this time), or the judgement that replaces the roles' `converged`.
 */
export async function ensureAgentHeartbeating(
  ctx: RunContext,
  node: string,
): Promise<{ judgement: NodeJudgement | null; enrolled: boolean }> {
  const { pool } = ctx.options
  const before = await readAgentLiveness(pool, node)
  if (isHeartbeating(before)) return { judgement: null, enrolled: false }
  const enrolledBefore = before !== undefined && ENROLLED.has(before.status) && before.liveCertificate
  if (!enrolledBefore) {
    const failure = await handOver(ctx, node, before)
    if (failure) return { judgement: failure, enrolled: false }
  }
  const beat = await waitForHeartbeat(ctx, node, before?.hostFactsAt ?? null)
  if (beat) return { judgement: null, enrolled: !enrolledBefore }
  const waited = Math.round(heartbeatWaitMs(ctx.options) / 1000)
  return {
    enrolled: false,
    judgement: {
      state: 'failed',
      code: 'AGENT_NOT_HEARTBEATING',
      message: enrolledBefore
        ? `the agent is enrolled but sent no heartbeat within ${waited} s: see journalctl -u ${AGENT_UNIT} on the host, or give a rebuilt host a new identity with fleetkit node token ${node} --reissue`
        : `sync handed the agent an enrollment secret but it sent no heartbeat within ${waited} s: see journalctl -u ${AGENT_UNIT} on the host, then fleetkit sync --limit ${node}`,
    },
  }
}

/** Issues the secret and hands it, with the gateway CA, to the host; restarts its agent. */
async function handOver(
  ctx: RunContext,
  node: string,
  before: AgentLiveness | undefined,
): Promise<NodeJudgement | null> {
  const { pool, env } = ctx.options
  const target = ctx.sshTargets.get(node)
  const issuer = ctx.options.enrollment
  if (!target || !issuer) return handOffFailed(node, 'this sync cannot issue enrollment secrets')
  const caPem = await issuer.gatewayCa()
  let session
  try {
    session = await openPinned(target, env)
  } catch (error) {
    if (error instanceof SshUnreachable) return { state: 'unreachable', code: null, message: error.message }
    throw error
  }
  try {
    // A node the state holds in any other status (provisioning with a stale secret, failed) gets a new one on purpose.
    const token = await issuer.issueSecret(node, before !== undefined, ctx.definition)
    const sudo = session.asRoot
    const made = await session.exec('mktemp -d')
    const dir = made.stdout.trim()
    // The folder's name goes into the commands below: only a plain absolute path is used.
    if (made.code !== 0 || !/^\/[A-Za-z0-9._/-]+$/.test(dir))
      return handOffFailed(node, `mktemp -d: ${made.stderr.trim()}`)
    try {
      // Over SFTP, created 0600 in a directory only the SSH user can enter: the secret is on no command line.
      await session.writeFile(`${dir}/enrollment-secret`, `${token.secret}\n`, 0o600)
      await session.writeFile(`${dir}/gateway-ca.pem`, caPem, 0o644)
      const placed = await session.exec(
        `${sudo}install -m 0600 -o ${AGENT_ACCOUNT} -g ${AGENT_ACCOUNT} ${dir}/enrollment-secret ${AGENT_SECRET_PATH}` +
          ` && ${sudo}install -m 0644 -o root -g root ${dir}/gateway-ca.pem ${AGENT_CA_PATH}`,
      )
      if (placed.code !== 0) return handOffFailed(node, lastLine(placed.stderr))
      await appendEvent(pool, {
        kind: 'sync_enrollment_handed_over',
        nodeId: node,
        data: { run_id: ctx.run.id, node, expires_at: token.expiresAt, reissued: token.reissued },
      })
    } finally {
      await session.exec(`rm -rf ${dir}`).catch(() => undefined)
    }
    // As the seed does: `enroll` as the agent's account (it reads agent.env, uses the secret up and deletes it),
    // then the unit, whose `run` needs the identity enroll staged.
    const enrolled = await session.exec(`${sudo}runuser -u ${AGENT_ACCOUNT} -- ${AGENT_BINARY} enroll`)
    if (enrolled.code !== 0)
      return handOffFailed(node, `fleetkit-agent enroll: ${lastLine(enrolled.stderr || enrolled.stdout)}`)
    const started = await session.exec(
      `{ ${sudo}systemctl reset-failed ${AGENT_UNIT} || true; } && ${sudo}systemctl restart ${AGENT_UNIT}`,
    )
    if (started.code !== 0) return handOffFailed(node, lastLine(started.stderr))
    ctx.options.report?.(
      `${node}: enrollment secret and gateway CA handed over, agent enrolled; waiting for its heartbeat.`,
    )
    return null
  } finally {
    session.close()
  }
}

function lastLine(text: string): string {
  return text.trim().split('\n').pop() ?? ''
}

function handOffFailed(node: string, why: string): NodeJudgement {
  return {
    state: 'failed',
    code: 'AGENT_NOT_HEARTBEATING',
    message: `the enrollment secret could not be handed to the agent (${why.slice(0, 200)}); fleetkit sync --limit ${node} tries again`,
  }
}

/** Polls until the node heartbeats with facts newer than `factsBefore`; false when the wait ends first. */
async function waitForHeartbeat(ctx: RunContext, node: string, factsBefore: Date | null): Promise<boolean> {
  const { pool } = ctx.options
  const sleep = ctx.options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)))
  const start = ctx.clock.now().getTime()
  const limitMs = heartbeatWaitMs(ctx.options)
  for (;;) {
    const live = await readAgentLiveness(pool, node)
    const fresh =
      live?.hostFactsAt != null && (factsBefore === null || live.hostFactsAt.getTime() > factsBefore.getTime())
    if (live && ENROLLED.has(live.status) && live.liveCertificate && fresh) return true
    const elapsed = ctx.clock.now().getTime() - start
    if (elapsed >= limitMs) return false
    ctx.options.progress?.(
      `${node}: waiting for the agent's heartbeat (${Math.round(elapsed / 1000)} s of ${Math.round(limitMs / 1000)} s)`,
    )
    ctx.options.signal?.throwIfAborted()
    await sleep(POLL_MS)
  }
}
