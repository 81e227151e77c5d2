// `fleetkit-agent run`: heartbeat with host facts, lease and run jobs, renew on the
// jittered schedule and swap the client in place; returns on abort, throws what systemd must restart on.
import { type FleetkitError, toFleetkitError } from '../checks/fleetkit-error.js'
import {
  AGENT_PATHS,
  type HeartbeatRequest,
  type LeaseRequest,
  errorCodeOf,
  readHeartbeatResponse,
  readLeaseResponse,
  readNodeLostBody,
} from '../protocol/agent-routes.js'
import { readResponse } from '../protocol/read.js'
import type { Clock } from '../config/clock.js'
import type { Rng } from '../config/rng.js'
import type { Logger } from '../log/logger.js'
import { Backoff, isRetryLaterStatus, jitteredRetryMs, retryLaterWaitMs } from './backoff.js'
import { SKEW_FAIL_MS } from './clock-skew.js'
import { namingMissedRotation } from './ca-rotation-diagnosis.js'
import { type AgentConfig, requireSettings } from './config.js'
import type { Host } from './host.js'
import { type CheckContext } from './host-checks.js'
import { type HostFacts, gatherHostFacts, readDockerVersion } from './host-facts.js'
import { readDriftState } from './drift-state.js'
import { assertPkiDirectoryPrivate, loadIdentity } from './identity.js'
import { trustBundleDigest } from '../pki/trust-bundle-digest.js'
import { type JobRunDeps, runJob } from './jobs.js'
import { recoverIdentity } from './recover.js'
import { FATAL, RenewalPlanner } from './renewal-planner.js'
import { failoverDelayMs } from './gateway-choice.js'
import { AgentSession } from './session.js'
import { adoptGatewayBundle } from './trust-refresh.js'
import { AGENT_VERSION } from './version.js'
import { sleepUnlessAborted } from '../config/abortable-sleep.js'

export interface RunDeps {
  log: Logger
  clock: Clock
  rng: Rng
  host: Host
  signal: AbortSignal
  /** Waits `ms` on `clock` or until aborted; tests pass one that advances a fake clock. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>
  /** The host checks a `checks` job runs (tests pass their own). */
  runChecks?: JobRunDeps['runChecks']
}

/** Transport failures: the next call waits on the backoff instead of the heartbeat interval. */
const UNREACHABLE = new Set(['GATEWAY_UNREACHABLE', 'GATEWAY_CA_ROTATED', 'CLOCK_SKEW'])
/** Failures that retrying cannot end (the clock, trust): logged at error, not warn. */
const LOGGED_AT_ERROR = new Set(['CLOCK_SKEW', 'GATEWAY_CA_ROTATED'])
const DOCKER_PROBE_INTERVAL_MS = 600_000

export async function runAgent(config: AgentConfig, deps: RunDeps): Promise<void> {
  requireSettings(config, ['nodeId', 'gatewayUrl'])
  const { log, clock, signal } = deps
  const sleep = deps.sleep ?? sleepUnlessAborted
  const backoff = new Backoff(
    {
      baseMs: config.heartbeatSeconds * 1000,
      capMs: Math.max(config.backoffMaxSeconds, config.heartbeatSeconds) * 1000,
    },
    deps.rng,
  )
  // Checked at start, not only when a key is staged: a key in a directory others can write may
  // already be swapped, and the agent would act on it for days before its next renewal.
  await assertPkiDirectoryPrivate(config.pkiDir)
  const session = new AgentSession(
    config,
    await loadIdentity(config.pkiDir, config.caFile),
    () => clock.now().getTime(),
    (failover, reason) =>
      log('warn', 'gateway_failover', { from: failover.from, to: failover.to, reason, untried: failover.untried }),
  )
  /** After a failure that moved to a gateway not tried in this streak: a short jittered wait, not the backoff. */
  const quickFailoverMs = () =>
    session.lastFailover?.untried === true ? failoverDelayMs(deps.rng, config.heartbeatSeconds * 1000) : undefined
  const renewal = new RenewalPlanner(session, config, log, clock, deps.rng)
  /** The gateway bundle digest last fetched, so a bundle that cannot be used is not fetched every beat. */
  let bundleTried: string | undefined
  let nextBeat = clock.now().getTime()
  let dockerVersion: string | null = null
  let dockerProbedAt = -Infinity
  let running: { id: string; promise: Promise<unknown>; abandoned: boolean } | undefined
  /** The missed CA rotation the last failed call was diagnosed as, kept between diagnoses. */
  let missedRotation: FleetkitError | undefined
  /** Whether the last heartbeat said the node is parked (logged when it changes). */
  let parked = false
  log('info', 'agent_started', {
    node_id: config.nodeId,
    version: AGENT_VERSION,
    pid: process.pid,
    serial: session.identity.serial,
    renew_at: renewal.planned.toISOString(),
  })

  const checkContext = (): CheckContext => ({
    host: deps.host,
    dataMount: config.dataMount,
    minFreeGb: config.minFreeGb,
    unitName: config.unitName,
    firewallUnit: config.firewallUnit,
    now: clock.now(),
    certificate: session.identity.window,
    clockSkewMs: session.skewMs,
    container: config.container,
  })

  try {
    while (!signal.aborted) {
      const now = clock.now()
      // Judged on the gateway's clock where a skew was measured: a host clock that runs ahead must not
      // call a valid certificate expired (at start, before any answer, the recovery's challenge tells).
      if (now.getTime() + (session.skewMs ?? 0) >= session.identity.window.notAfter.getTime()) {
        // Away longer than the certificate lived (or the gateway was): recover with the key, within the window.
        await recoverExpired()
        continue
      }

      if (now.getTime() >= renewal.nextCheck) await renewal.step(now)

      if (clock.now().getTime() >= nextBeat) {
        if (clock.now().getTime() - dockerProbedAt >= DOCKER_PROBE_INTERVAL_MS) {
          dockerVersion = await readDockerVersion(deps.host)
          dockerProbedAt = clock.now().getTime()
        }
        try {
          const facts = await gatherHostFacts(deps.host, {
            dataMount: config.dataMount,
            agentVersion: AGENT_VERSION,
            clockSkewMs: session.skewMs,
            dockerVersion,
          })
          const request: HeartbeatRequest = { facts, drift: await readDriftState(deps.host, clock.now()) }
          const heartbeat = await session.call('POST', AGENT_PATHS.heartbeat, request)
          reportSkew(log, heartbeat.skewMs)
          if (isRetryLaterStatus(heartbeat.status)) {
            // Shed or the gateway's database is down: wait what it asks, plus our own jitter (another gateway: a moment).
            const waitMs =
              quickFailoverMs() ??
              retryLaterWaitMs(
                heartbeat.headers['retry-after'],
                backoff,
                config.heartbeatSeconds * 1000,
                clock.now().getTime(),
                deps.rng,
              )
            log('warn', 'gateway_unavailable', {
              status: heartbeat.status,
              code: errorCodeOf(heartbeat.body) ?? null,
              retry_in_ms: waitMs,
              failures: backoff.consecutiveFailures,
            })
            nextBeat = clock.now().getTime() + waitMs
          } else {
            const answer =
              heartbeat.status === 200
                ? readResponse(readHeartbeatResponse, heartbeat.body, AGENT_PATHS.heartbeat)
                : undefined
            log('debug', 'heartbeat', {
              status: heartbeat.status,
              node_status: answer?.node_status ?? null,
              skew_ms: heartbeat.skewMs ?? null,
            })
            if (answer !== undefined && (answer.node_status === 'parked') !== parked) {
              parked = !parked
              log('info', parked ? 'node_parked' : 'node_unparked', { node_status: answer.node_status })
            }
            if (answer?.renewal_due === true) renewal.planRotationRenewal()
            if (
              answer?.trust_bundle_sha256 !== undefined &&
              answer.trust_bundle_sha256 !== bundleTried &&
              answer.trust_bundle_sha256 !== trustBundleDigest(session.identity.caPem)
            ) {
              bundleTried = answer.trust_bundle_sha256
              await adoptGatewayBundle(session, config, log, answer.trust_bundle_sha256)
            }
            backoff.succeeded()
            missedRotation = undefined
            // Parked: heartbeats and renewals go on, no work is asked for until `fleetkit node unpark`.
            if (running === undefined && heartbeat.status === 200 && !parked) await lease(facts)
            nextBeat = clock.now().getTime() + config.heartbeatSeconds * 1000
          }
        } catch (error) {
          const e = await namedFailure(toFleetkitError(error))
          if (FATAL.has(e.code)) throw e
          const waitMs = UNREACHABLE.has(e.code)
            ? (quickFailoverMs() ?? backoff.failed())
            : config.heartbeatSeconds * 1000
          log(LOGGED_AT_ERROR.has(e.code) ? 'error' : 'warn', 'gateway_call_failed', {
            code: e.code,
            message: e.message,
            retry_in_ms: waitMs,
            failures: backoff.consecutiveFailures,
          })
          nextBeat = clock.now().getTime() + waitMs
        }
      }

      await sleep(Math.min(nextBeat, renewal.nextCheck) - clock.now().getTime(), signal)
    }
  } finally {
    if (running) await running.promise.catch(() => {})
    session.close()
    log('info', 'agent_stopped', { node_id: config.nodeId })
  }

  /**
   * A failed call's error, with a CA rotation this agent missed named as GATEWAY_CA_ROTATED rather
   * than an unreachable gateway. The diagnosis takes an unverified handshake: it runs on the first
   * failure of a streak and at each doubling, and its answer stands in between.
   */
  async function namedFailure(e: FleetkitError): Promise<FleetkitError> {
    if (e.code !== 'GATEWAY_UNREACHABLE') return e
    const streak = backoff.consecutiveFailures + 1
    if ((streak & (streak - 1)) === 0) missedRotation = await namingMissedRotation(e, config, session.identity)
    const same = missedRotation?.data?.transport_code === e.data?.transport_code
    return missedRotation?.code === 'GATEWAY_CA_ROTATED' && same ? missedRotation : e
  }

  /**
   * The certificate expired: recover by a signed challenge. Refusals (past the window, retired or
   * lost) are fatal: only a new secret helps. An unreachable gateway is retried on the backoff. A
   * certificate the gateway's clock says is still valid is kept: CLOCK_SKEW, and the loop carries on
   * with the measured skew (the heartbeats then report it each beat).
   */
  async function recoverExpired(): Promise<void> {
    const expired = session.identity
    try {
      const identity = await recoverIdentity(config, expired, log, () => clock.now().getTime())
      session.swap(identity, session.clientFor(identity))
      renewal.replan()
      nextBeat = clock.now().getTime()
    } catch (error) {
      const e = toFleetkitError(error)
      if (e.code === 'CLOCK_SKEW' && typeof e.data?.skew_ms === 'number') {
        session.noteSkew(e.data.skew_ms)
        log('error', 'clock_skew', { code: e.code, skew_ms: e.data.skew_ms, message: e.message })
        nextBeat = clock.now().getTime()
        return
      }
      if (!UNREACHABLE.has(e.code) && e.code !== 'AGENT_RENEWAL_FAILED') throw e
      // Shed: at least the Retry-After plus jitter; otherwise (and never less than) the backoff.
      const retryAfter = e.data?.retry_after as string | string[] | undefined
      const askedMs = retryAfter === undefined ? 0 : jitteredRetryMs(retryAfter, 1, clock.now().getTime(), deps.rng)
      const waitMs = Math.max(backoff.failed(), askedMs)
      log('warn', 'recovery_failed', { code: e.code, message: e.message, serial: expired.serial, retry_in_ms: waitMs })
      await sleep(waitMs, signal)
    }
  }

  async function lease(facts: HostFacts): Promise<void> {
    const request: LeaseRequest = { facts }
    const response = await session.call('POST', AGENT_PATHS.lease, request)
    if (response.status === 403) {
      const reason = errorCodeOf(response.body) ?? 'forbidden'
      // A lost node's refusal names the jobs fenced away from it: one still running here is abandoned.
      const fenced =
        reason === 'node_lost'
          ? readResponse(readNodeLostBody, response.body, AGENT_PATHS.lease).cleanup.map((c) => c.job_id)
          : []
      if (running && fenced.includes(running.id)) running.abandoned = true
      log('info', 'lease_refused', { reason, fenced_jobs: fenced })
      return
    }
    if (response.status !== 200) return
    const { job } = readResponse(readLeaseResponse, response.body, AGENT_PATHS.lease)
    if (!job) return
    const entry = { id: job.id, abandoned: false, promise: Promise.resolve() as Promise<unknown> }
    entry.promise = runJob(session, job, {
      log,
      now: () => clock.now(),
      checkContext,
      abandoned: () => entry.abandoned,
      signal,
      sleep: (ms) => sleep(ms, signal),
      rng: deps.rng,
      ...(deps.runChecks ? { runChecks: deps.runChecks } : {}),
    })
      .catch((error: unknown) => {
        const e = toFleetkitError(error)
        log('warn', 'job_failed', { job_id: job.id, code: e.code, message: e.message })
      })
      .finally(() => {
        if (running === entry) running = undefined
      })
    running = entry
  }
}

function reportSkew(log: Logger, skewMs: number | undefined): void {
  if (skewMs !== undefined && Math.abs(skewMs) >= SKEW_FAIL_MS) {
    log('error', 'clock_skew', {
      code: 'CLOCK_SKEW',
      skew_ms: skewMs,
      message: `the host clock differs from the gateway's by ${Math.round(skewMs / 1000)} s`,
    })
  }
}
