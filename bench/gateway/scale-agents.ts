// One process of the scale-out bench's agents: a slice of the fleet, each agent with the agent's own
// gateway choice (src/agent/gateway-choice.ts: the start gateway its node ID picks, a move to the next on
// a transport failure or a 502-504 after the jittered failover wait, the backoff once every gateway failed
// in a row) and the agent's own mTLS client (src/agent/gateway-client.ts) per gateway it talks to.
//
// BENCH_SCALE_FILE names a JSON file { urls, caPem, keyPem, agents: [{nodeId, certificatePem}], heartbeatMs, rampMs }.
// It prints {ready}, then answers one JSON line per command on stdin:
//   run SECONDS   every agent heartbeats every heartbeatMs (first at a random point of the ramp: full
//                 mTLS handshakes are what this machine runs out of) for SECONDS; the answer has every
//                 attempt's outcome and each agent's moves
import { readFileSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { createInterface } from 'node:readline'

import { Backoff, isRetryLaterStatus, retryLaterWaitMs } from '../../src/agent/backoff.js'
import { failoverDelayMs, failoverReason, GatewayChoice } from '../../src/agent/gateway-choice.js'
import { GatewayClient } from '../../src/agent/gateway-client.js'
import { systemRng, unitInterval } from '../../src/config/rng.js'
import { FACTS } from './ratio-measure.js'
import type { ScaleAgentsResult } from './scale-result.js'

interface Job {
  urls: string[]
  caPem: string
  keyPem: string
  agents: { nodeId: string; certificatePem: string }[]
  heartbeatMs: number
  rampMs: number
}
const job = JSON.parse(readFileSync(process.env.BENCH_SCALE_FILE!, 'utf8')) as Job
const body = { facts: FACTS }
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
/** Latencies are kept in 1 ms buckets up to 60 s: 50,000 agents' heartbeats fit in a few KiB. */
const BUCKETS = 60_000

async function run(seconds: number, epoch: number): Promise<ScaleAgentsResult> {
  const started = performance.now()
  const endAt = started + seconds * 1000
  const latency = new Uint32Array(BUCKETS + 1)
  const result: ScaleAgentsResult = {
    attempts: 0,
    ok: 0,
    failures: {},
    latencyBuckets: [],
    moves: [],
    firstOkAfterMove: [],
    okByGateway: job.urls.map(() => 0),
  }
  await Promise.all(
    job.agents.map(async (agent) => {
      const choice = new GatewayChoice(job.urls, agent.nodeId)
      const backoff = new Backoff({ baseMs: job.heartbeatMs, capMs: 300_000 }, systemRng)
      let client = new GatewayClient(
        choice.current,
        { ca: job.caPem, cert: agent.certificatePem, key: job.keyPem },
        { timeoutMs: 20_000, maxSockets: 1 },
      )
      /** When (ms since the epoch all workers share) this agent last moved, until its next 200. */
      let movedAt: number | undefined
      let wait = unitInterval(systemRng) * job.rampMs
      while (performance.now() + wait < endAt) {
        await sleep(wait)
        result.attempts++
        const sent = performance.now()
        let status: number | string
        let retryAfter: string | string[] | undefined
        try {
          const reply = await client.request('POST', '/v1/agent/heartbeat', body)
          status = reply.status
          retryAfter = reply.headers['retry-after']
        } catch (error) {
          status = (error as { code?: string }).code ?? 'error'
        }
        if (status === 200) {
          result.ok++
          result.okByGateway[job.urls.indexOf(choice.current)]!++
          latency[Math.min(BUCKETS, Math.round(performance.now() - sent))]!++
          choice.succeeded()
          backoff.succeeded()
          if (movedAt !== undefined) result.firstOkAfterMove.push({ nodeId: agent.nodeId, at: Date.now() - epoch })
          movedAt = undefined
          wait = job.heartbeatMs
          continue
        }
        const reason = typeof status === 'number' ? `HTTP ${status}` : status
        result.failures[reason] = (result.failures[reason] ?? 0) + 1
        // The agent's own decision; a transport failure is what the agent names GATEWAY_UNREACHABLE (no clock skew here).
        const moves = failoverReason(typeof status === 'number' ? { status } : { failure: 'GATEWAY_UNREACHABLE' })
        const moved = moves ? choice.failed() : undefined
        if (moved) {
          client.close()
          client = new GatewayClient(
            moved.to,
            { ca: job.caPem, cert: agent.certificatePem, key: job.keyPem },
            { timeoutMs: 20_000, maxSockets: 1 },
          )
          movedAt ??= Date.now() - epoch
          result.moves.push({ nodeId: agent.nodeId, from: moved.from, to: moved.to, at: Date.now() - epoch })
        }
        wait = moved?.untried
          ? failoverDelayMs(systemRng, job.heartbeatMs)
          : typeof status === 'number' && isRetryLaterStatus(status)
            ? retryLaterWaitMs(retryAfter, backoff, job.heartbeatMs, Date.now(), systemRng)
            : backoff.failed()
      }
      client.close()
    }),
  )
  for (let ms = 0; ms <= BUCKETS; ms++) if (latency[ms]! > 0) result.latencyBuckets.push([ms, latency[ms]!])
  return result
}

process.stdout.write(`${JSON.stringify({ ready: true })}\n`)
for await (const line of createInterface({ input: process.stdin })) {
  const [command, seconds, epoch] = line.split(' ')
  const answer = command === 'run' ? await run(Number(seconds), Number(epoch)) : { error: `unknown command ${line}` }
  process.stdout.write(`${JSON.stringify(answer)}\n`)
}
