// One client process of the ratio bench: it runs BENCH_JOB's `concurrency` loops of
// mTLS requests in one mode (full: a new handshake each, no session; resumed: a new connection
// resuming the last session; keepalive: requests on kept connections), and prints its counts and
// its own CPU time. It warms up, prints {ready}, then runs one window per line on stdin. With
// `ratePerSecond` its loops are paced to that many requests a second in all (never faster; a server
// slower than the pace gets no burst to catch up), so two servers can be measured at one offered rate.
import { Agent, request } from 'node:https'
import { performance } from 'node:perf_hooks'
import { createInterface } from 'node:readline'

interface Job {
  url: string
  path: string
  body: string
  keyPem: string
  certPem: string
  caPem: string
  mode: 'full' | 'resumed' | 'keepalive'
  concurrency: number
  ratePerSecond?: number
}
const job = JSON.parse(process.env.BENCH_JOB!) as Job
const tls = { key: job.keyPem, cert: job.certPem, ca: job.caPem }
const keepAlive =
  job.mode === 'keepalive' ? new Agent({ ...tls, keepAlive: true, maxSockets: job.concurrency }) : undefined
const resuming = job.mode === 'resumed' ? new Agent({ ...tls, keepAlive: false, maxCachedSessions: 100 }) : undefined

function once(): Promise<boolean> {
  return new Promise((resolve) => {
    const options = job.mode === 'full' ? { ...tls, agent: false as const } : { agent: (keepAlive ?? resuming)! }
    const req = request(
      new URL(job.path, job.url),
      {
        method: 'POST',
        ...options,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(job.body) },
      },
      (res) => {
        res.resume()
        res.on('end', () => resolve(res.statusCode === 200))
      },
    )
    req.on('error', () => resolve(false))
    req.end(job.body)
  })
}

const latencies: number[] = []
// Warm up before the clock starts: a session to resume, or every keep-alive connection open.
await once()
if (job.mode === 'keepalive') await Promise.all(Array.from({ length: job.concurrency }, () => once()))
// Ready. Each line on stdin is one measured window (its length in ms): the bench starts every client at
// once and alternates windows on the two servers, reading each server's CPU around its windows.
process.stdout.write(`${JSON.stringify({ ready: true })}\n`)
const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0
for await (const line of createInterface({ input: process.stdin })) {
  let ok = 0
  let errors = 0
  // `MS warmup`: a window whose latencies are not kept.
  const [ms, kind] = line.split(' ')
  const record = kind !== 'warmup'
  const cpuBefore = process.cpuUsage()
  const until = performance.now() + Number(ms)
  // Paced: each loop sends every `interval` ms, the loops' starts spread over one interval.
  const interval = job.ratePerSecond ? (1000 * job.concurrency) / job.ratePerSecond : 0
  await Promise.all(
    Array.from({ length: job.concurrency }, async (_, loop) => {
      let next = performance.now() + (interval * loop) / job.concurrency
      while (performance.now() < until) {
        if (interval > 0) {
          const wait = next - performance.now()
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
          if (performance.now() >= until) break
          next = Math.max(next + interval, performance.now())
        }
        const start = performance.now()
        if (await once()) {
          ok++
          if (record) latencies.push(performance.now() - start)
        } else errors++
      }
    }),
  )
  latencies.sort((a, b) => a - b)
  const cpu = process.cpuUsage(cpuBefore)
  // Percentiles over every window so far; counts and CPU of this window.
  process.stdout.write(
    `${JSON.stringify({ ok, errors, p50: at(50), p99: at(99), cpuMicros: cpu.user + cpu.system })}\n`,
  )
}
keepAlive?.destroy()
resuming?.destroy()
