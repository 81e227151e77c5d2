// One process of the storm bench's agents: a slice of the fleet, each agent with the agent's own
// mTLS client (src/agent/gateway-client.ts: keep-alive, its own TLS session cache) and the agent's
// reaction to a failed heartbeat (src/agent/backoff.ts: Retry-After plus jitter after a 429/5xx, the
// jittered backoff after a transport error, nothing more after a 401 or another 4xx).
//
// BENCH_STORM_FILE names a JSON file { url, caPem, keyPem, certificates, heartbeatMs, deadlineMs }.
// It prints {ready}, then answers one JSON line per command on stdin:
//   prime   every agent heartbeats once, 64 at a time (a connection kept open and a session to resume)
//   storm   every agent heartbeats at the same moment and retries as the agent does until it gets a 200
//           or the deadline passes; the answer says when each came back and what failed on the way
import { readFileSync } from 'node:fs'
import type { Agent } from 'node:https'
import { performance } from 'node:perf_hooks'
import { createInterface } from 'node:readline'
import type { TLSSocket } from 'node:tls'

import { Backoff, isRetryLaterStatus, retryLaterWaitMs } from '../../src/agent/backoff.js'
import { GatewayClient, GatewayTransportError } from '../../src/agent/gateway-client.js'
import { systemRng } from '../../src/config/rng.js'
import { forEachLimit } from './agents.js'
import { FACTS } from './ratio-measure.js'
import type { StormResult } from './storm-result.js'

interface Job {
  url: string
  caPem: string
  keyPem: string
  certificates: string[]
  heartbeatMs: number
  deadlineMs: number
}
const job = JSON.parse(readFileSync(process.env.BENCH_STORM_FILE!, 'utf8')) as Job
const body = { facts: FACTS }
const clients = job.certificates.map(
  (cert) => new GatewayClient(job.url, { ca: job.caPem, cert, key: job.keyPem }, { timeoutMs: 20_000, maxSockets: 4 }),
)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** What went wrong on one attempt: Node's transport code, or the HTTP status. */
type Failure = string

async function attempt(
  client: GatewayClient,
): Promise<{ status: number; retryAfter: string | string[] | undefined } | Failure> {
  try {
    const reply = await client.request('POST', '/v1/agent/heartbeat', body)
    return { status: reply.status, retryAfter: reply.headers['retry-after'] }
  } catch (error) {
    return error instanceof GatewayTransportError ? error.code : (error as Error).message.slice(0, 40)
  }
}

/** Whether the kept-alive connection the client just used resumed a TLS session (the storm's point). */
function resumed(client: GatewayClient): boolean {
  const agent = (client as unknown as { agent: Agent }).agent
  const sockets = Object.values(agent.freeSockets).flat() as TLSSocket[]
  return sockets.some((s) => s.isSessionReused())
}

async function storm(): Promise<StormResult> {
  const cpuBefore = process.cpuUsage()
  const started = performance.now()
  const backAt: number[] = []
  const failures: Record<Failure, number> = {}
  let attempts = 0
  let resumedCount = 0
  let unrecoverable = 0
  await Promise.all(
    clients.map(async (client) => {
      const backoff = new Backoff({ baseMs: job.heartbeatMs, capMs: 300_000 }, systemRng)
      while (performance.now() - started < job.deadlineMs) {
        attempts++
        const outcome = await attempt(client)
        if (typeof outcome !== 'string' && outcome.status === 200) {
          backAt.push(performance.now() - started)
          if (resumed(client)) resumedCount++
          return
        }
        const reason = typeof outcome === 'string' ? outcome : `HTTP ${outcome.status}`
        failures[reason] = (failures[reason] ?? 0) + 1
        // As the agent's run loop: a shed or unavailable answer waits what it asks (plus jitter), a transport
        // failure the backoff; any other answer (401, 4xx) is one the agent cannot retry its way out of.
        if (typeof outcome !== 'string' && !isRetryLaterStatus(outcome.status)) {
          unrecoverable++
          return
        }
        await sleep(
          typeof outcome === 'string'
            ? backoff.failed()
            : retryLaterWaitMs(outcome.retryAfter, backoff, job.heartbeatMs, Date.now(), systemRng),
        )
      }
    }),
  )
  const cpu = process.cpuUsage(cpuBefore)
  backAt.sort((a, b) => a - b)
  const at = (p: number) => backAt[Math.min(backAt.length - 1, Math.floor((p / 100) * backAt.length))] ?? Number.NaN
  return {
    agents: clients.length,
    back: backAt.length,
    lastBackMs: backAt.at(-1) ?? Number.NaN,
    p50Ms: at(50),
    p99Ms: at(99),
    resumed: resumedCount,
    attempts,
    failures,
    unrecoverable,
    cpuMicros: cpu.user + cpu.system,
  }
}

async function prime(): Promise<{ ok: number; failed: number }> {
  let ok = 0
  await forEachLimit(clients, 64, async (client) => {
    const outcome = await attempt(client)
    if (typeof outcome !== 'string' && outcome.status === 200) ok++
  })
  return { ok, failed: clients.length - ok }
}

process.stdout.write(`${JSON.stringify({ ready: true })}\n`)
for await (const line of createInterface({ input: process.stdin })) {
  const answer =
    line === 'prime' ? await prime() : line === 'storm' ? await storm() : { error: `unknown command ${line}` }
  process.stdout.write(`${JSON.stringify(answer)}\n`)
}
for (const client of clients) client.close()
