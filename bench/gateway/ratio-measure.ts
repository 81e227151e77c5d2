// One measurement of the ratio bench: the client processes of each server (ratio-client.ts) run the
// same mode in alternating windows, and the totals, percentiles and CPU per request come back per server.
import { type Child, startChild } from './child.js'
import { processCpuMicros } from './process-cpu.js'

export const MODES = ['full', 'resumed', 'keepalive'] as const
export type Mode = (typeof MODES)[number]
export const FACTS = {
  cpu_count: 8,
  memory_mb: 32000,
  data_disk_free_gb: 400,
  kernel: '6.8.0-45-generic',
  docker_version: '27.3.1',
  agent_version: '0.1.0',
  bridge_netfilter: true,
  clock_skew_ms: 3,
}

export interface Server {
  url: string
  pid: number | undefined
}
export interface Clients {
  certificates: string[]
  keyPem: string
  caPem: string
  concurrency: number
  /** Extra heartbeat fields (--drift: a drift digest); the bare server reads the same body. */
  extra?: Record<string, unknown>
  /** Requests a second each client process offers (paced); unset: as fast as the server answers. */
  ratePerSecond?: number
}
export interface Timing {
  seconds: number
  rounds: number
  warmupSeconds: number
}
interface Window {
  ok: number
  errors: number
  p50: number
  p99: number
  cpuMicros: number
}
export interface Measured {
  rate: number
  errors: number
  p50: number
  p99: number
  serverCpuPerRequest: number | undefined
  clientCpuPerRequest: number
}

/** The client processes of one server (one per certificate), warmed up (connections open, a session to resume) and waiting for windows. */
function startClients(url: string, mode: Mode, c: Clients): Promise<Child[]> {
  return Promise.all(
    c.certificates.map((certPem) => {
      const job = {
        url,
        path: '/v1/agent/heartbeat',
        body: JSON.stringify({ facts: FACTS, ...c.extra }),
        keyPem: c.keyPem,
        certPem,
        caPem: c.caPem,
        mode,
        concurrency: c.concurrency,
        ...(c.ratePerSecond === undefined ? {} : { ratePerSecond: c.ratePerSecond }),
      }
      return startChild('ratio-client.ts', { BENCH_JOB: JSON.stringify(job) })
    }),
  )
}

/** One window: every client of a server starts at once; the server's CPU time is read around it. */
async function runWindow(
  clients: Child[],
  serverPid: number | undefined,
  ms: number,
  warmup = false,
): Promise<{ windows: Window[]; serverCpuMicros: number | undefined }> {
  const before = processCpuMicros(serverPid)
  const windows = await Promise.all(
    clients.map(({ child, nextLine }) => {
      child.stdin!.write(`${ms}${warmup ? ' warmup' : ''}\n`)
      return nextLine().then((text) => JSON.parse(text) as Window)
    }),
  )
  const after = processCpuMicros(serverPid)
  return { windows, serverCpuMicros: before === undefined || after === undefined ? undefined : after - before }
}

/**
 * Both servers in one mode: `rounds` windows each, alternating (bare, gateway, gateway, bare, ...), so a
 * change of the machine's load during the run weighs on both alike; the rates are totals over the windows.
 */
export async function measure(servers: Server[], mode: Mode, c: Clients, t: Timing): Promise<Measured[]> {
  const clients = [] as Child[][]
  for (const s of servers) clients.push(await startClients(s.url, mode, c))
  // Not counted: each server first answers a window of the same load, so code the JIT is still
  // compiling after start-up (more of it in the gateway) does not weigh on the figures; servers run for days.
  for (let i = 0; i < servers.length; i++) await runWindow(clients[i]!, servers[i]!.pid, t.warmupSeconds * 1000, true)
  const windows: Window[][] = servers.map(() => [])
  const serverCpu: (number | undefined)[] = servers.map(() => 0)
  const windowMs = (t.seconds * 1000) / t.rounds
  for (let r = 0; r < t.rounds; r++) {
    const order = r % 2 === 0 ? [0, 1] : [1, 0]
    for (const i of order) {
      const w = await runWindow(clients[i]!, servers[i]!.pid, windowMs)
      windows[i]!.push(...w.windows)
      serverCpu[i] =
        serverCpu[i] === undefined || w.serverCpuMicros === undefined ? undefined : serverCpu[i]! + w.serverCpuMicros
    }
  }
  for (const set of clients) for (const { child } of set) child.stdin!.end()
  return windows.map((ws, i) => {
    const answered = ws.reduce((n, w) => n + w.ok + w.errors, 0)
    // Percentiles are per client over all its windows: the worst client's.
    const last = ws.slice(-c.certificates.length)
    return {
      rate: ws.reduce((n, w) => n + w.ok, 0) / t.seconds,
      errors: ws.reduce((n, w) => n + w.errors, 0),
      p50: Math.max(...last.map((w) => w.p50)),
      p99: Math.max(...last.map((w) => w.p99)),
      serverCpuPerRequest: serverCpu[i] === undefined ? undefined : serverCpu[i]! / answered,
      clientCpuPerRequest: ws.reduce((n, w) => n + w.cpuMicros, 0) / answered,
    }
  })
}
