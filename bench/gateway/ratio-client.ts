// One client process of the ratio bench: for BENCH_SECONDS it runs BENCH_CONCURRENCY loops of
// mTLS requests in one mode (full: a new handshake each, no session; resumed: a new connection
// resuming the last session; keepalive: requests on kept connections), then prints its counts
// and its own CPU time. It warms up, prints {ready}, and starts when a line arrives on stdin.
import { Agent, request } from 'node:https'
import { performance } from 'node:perf_hooks'

interface Job { url: string; path: string; body: string; keyPem: string; certPem: string; caPem: string; mode: 'full' | 'resumed' | 'keepalive'; seconds: number; concurrency: number }
const job = JSON.parse(process.env.BENCH_JOB!) as Job
const tls = { key: job.keyPem, cert: job.certPem, ca: job.caPem }
const keepAlive = job.mode === 'keepalive' ? new Agent({ ...tls, keepAlive: true, maxSockets: job.concurrency }) : undefined
const resuming = job.mode === 'resumed' ? new Agent({ ...tls, keepAlive: false, maxCachedSessions: 100 }) : undefined

function once(): Promise<boolean> {
  return new Promise((resolve) => {
    const options = job.mode === 'full' ? { ...tls, agent: false as const } : { agent: (keepAlive ?? resuming)! }
    const req = request(new URL(job.path, job.url), { method: 'POST', ...options, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(job.body) } }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode === 200))
    })
    req.on('error', () => resolve(false))
    req.end(job.body)
  })
}

const latencies: number[] = []
let ok = 0
let errors = 0
// Warm up before the clock starts: a session to resume, or every keep-alive connection open.
await once()
if (job.mode === 'keepalive') await Promise.all(Array.from({ length: job.concurrency }, () => once()))
// Ready; the bench starts every client at once (a line on stdin), so it can read the servers' CPU around the window.
process.stdout.write(`${JSON.stringify({ ready: true })}\n`)
await new Promise((resolve) => process.stdin.once('data', resolve))
const cpuBefore = process.cpuUsage()
const until = performance.now() + job.seconds * 1000
await Promise.all(Array.from({ length: job.concurrency }, async () => {
  while (performance.now() < until) {
    const start = performance.now()
    if (await once()) {
      ok++
      latencies.push(performance.now() - start)
    } else errors++
  }
}))
latencies.sort((a, b) => a - b)
const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0
const cpu = process.cpuUsage(cpuBefore)
process.stdout.write(`${JSON.stringify({ ok, errors, p50: at(50), p99: at(99), cpuMicros: cpu.user + cpu.system })}\n`)
keepAlive?.destroy()
resuming?.destroy()
