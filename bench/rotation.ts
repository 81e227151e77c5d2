// CA rotation benchmark: N simulated agents heartbeating over keep-alive mTLS against a real gateway
// (its own process, reloading its PKI) and a real PostgreSQL, through `ca rotate --begin` to `--complete`.
//
//   npx tsx bench/rotation.ts [--agents 1000,10000] [--heartbeat-seconds 15] [--renewals-per-second 50]
//
// Each agent behaves as fleetkit-agent does: told `renewal_due` by a heartbeat, it renews at a random
// point of its (compressed) renewal check interval, then uses the new certificate. The interval is
// N / --renewals-per-second seconds, so the mean renewal rate is about that figure; the gateway keeps its
// default global renewal limit (per-source lifted: every simulated agent shares 127.0.0.1). Printed:
// time until --complete is allowed, peak renewals per second against the mean, failed requests.
import 'reflect-metadata'

import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { Agent } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { performance } from 'node:perf_hooks'

import pg from 'pg'

import { packagePath } from '../src/package-root.js'
import { type BenchContext, buildFleet, forEachLimit, post } from './gateway/agents.js'
import { startBenchPostgres } from './gateway/postgres.js'

interface Options {
  agents: number[]
  heartbeatSeconds: number
  renewalsPerSecond: number
}

function parseOptions(argv: string[]): Options {
  const value = (name: string) => {
    const i = argv.indexOf(name)
    return i >= 0 ? argv[i + 1] : undefined
  }
  return {
    agents: (value('--agents') ?? '1000,10000')
      .split(',')
      .map(Number)
      .filter((n) => Number.isInteger(n) && n > 0 && n <= 20_000),
    heartbeatSeconds: Number(value('--heartbeat-seconds') ?? 15),
    renewalsPerSecond: Number(value('--renewals-per-second') ?? 50),
  }
}

async function serve(): Promise<void> {
  const { openDatabase } = await import('../src/store/database.js')
  const { startGateway, DEFAULT_TUNING } = await import('../src/gateway/gateway.js')
  const { loadPkiSet } = await import('../src/pki/pki-set.js')
  const { createLogger } = await import('../src/log/logger.js')
  const db = await openDatabase({ databaseUrl: process.env.BENCH_DATABASE_URL, max: 20 })
  const any = { host: '127.0.0.1', port: 0 }
  const pkiDir = process.env.BENCH_PKI_DIR!
  const gateway = await startGateway({
    pool: db.pool,
    pki: await loadPkiSet(pkiDir, new Date()),
    pkiDir,
    enrollBind: any,
    agentBind: any,
    agentCertLifetimeSeconds: 86400,
    // Errors only (a failed request is what the bench counts), on stderr beside the bench's own lines.
    logger: createLogger({ component: 'gateway', level: 'warn', destination: 2 }),
    tuning: {
      renewRate: { perSource: { burst: 100_000, perSecond: 100_000 }, global: DEFAULT_TUNING.renewRate.global },
    },
  })
  process.stdout.write(`${JSON.stringify({ ready: true, agent: gateway.agentAddress.port })}\n`)
  const stop = async () => {
    await gateway.close()
    await db.close()
    process.exit(0)
  }
  process.once('SIGTERM', () => void stop())
  process.stdin.on('end', () => void stop())
  process.stdin.resume()
}

function startGatewayProcess(databaseUrl: string, pkiDir: string): Promise<{ child: ChildProcess; agentUrl: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', packagePath('bench', 'rotation.ts'), '--serve'], {
    env: { ...process.env, BENCH_DATABASE_URL: databaseUrl, BENCH_PKI_DIR: pkiDir },
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the gateway did not start within 60 s')), 60_000)
    child.once('exit', (code) => reject(new Error(`the gateway exited with ${code}`)))
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const ready = JSON.parse(line) as { ready?: boolean; agent: number }
      if (!ready.ready) return
      clearTimeout(timer)
      child.removeAllListeners('exit')
      resolve({ child, agentUrl: `https://127.0.0.1:${ready.agent}` })
    })
  })
}

interface RunResult {
  agents: number
  checkSeconds: number
  untilCompleteS: number
  completeS: number
  renewals: number
  meanPerS: number
  peakPerS: number
  failed: number
  rateLimited: number
  failures: Map<string, number>
}

/** rotateCa, retried while PostgreSQL is too busy to accept a connection (a shared machine under load). */
async function withRetry<T>(what: string, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn()
    } catch (error) {
      if ((error as { code?: string }).code !== 'STATE_UNREACHABLE' || attempt >= 10) throw error
      process.stderr.write(`bench: ${what}: PostgreSQL busy, retrying (${attempt})\n`)
    }
  }
}

async function rotateOnce(
  count: number,
  options: Options,
  ctx: BenchContext & { pkiDir: string; env: Record<string, string> },
): Promise<RunResult> {
  const { generateKeyAndCsr } = await import('../src/agent/key-and-csr.js')
  const { rotateCa } = await import('../src/lifecycle/ca/ca-rotation.js')
  const { systemClock } = await import('../src/config/clock.js')
  const fleet = await buildFleet(count, `rot-${count}`, ctx)
  const checkSeconds = Math.max(5, Math.ceil(count / options.renewalsPerSecond))
  // Failures while the fleet connects (before --begin) are the gateway bench's subject, not rotation's: counted apart.
  let phase: 'warm-up' | 'rotation' = 'warm-up'
  const failures = new Map<string, number>()
  const fail = (reason: string) => {
    const key = `${phase}: ${reason}`
    failures.set(key, (failures.get(key) ?? 0) + 1)
  }
  let rateLimited = 0
  const renewedAt: number[] = []
  let stopped = false
  let bundle = ctx.caPem

  // One loop per agent: heartbeat every H s (random phase); on renewal_due, renew at a random point of the check interval.
  const loops = fleet.agents.map(async (a) => {
    let client = a.agent
    let renewAt: number | undefined
    let next = performance.now() + Math.random() * options.heartbeatSeconds * 1000
    while (!stopped) {
      const wait = Math.min(next, renewAt ?? Infinity) - performance.now()
      if (wait > 0) await new Promise((r) => setTimeout(r, Math.min(wait, 500)))
      if (stopped) break
      const now = performance.now()
      try {
        if (renewAt !== undefined && now >= renewAt) {
          const { keyPem, csrPem } = await generateKeyAndCsr(a.nodeId)
          const reply = await post(
            client,
            ctx.agentUrl,
            '/v1/agent/certificate/renew',
            { csr_pem: csrPem },
            { ca: bundle },
          )
          if (reply.status === 200) {
            const body = JSON.parse(reply.body) as { certificate_pem: string; ca_bundle_pem: string }
            renewedAt.push(performance.now())
            bundle = body.ca_bundle_pem
            client.destroy()
            client = new Agent({ keepAlive: true, maxSockets: 1, key: keyPem, cert: body.certificate_pem, ca: bundle })
            renewAt = undefined
            next = performance.now()
          } else if (reply.status === 429) {
            rateLimited++
            renewAt = performance.now() + 1000 * Number(JSON.parse(reply.body).retry_after ?? 1)
          } else {
            fail(`renew ${reply.status}`)
            renewAt = performance.now() + checkSeconds * 1000
          }
          continue
        }
        if (now >= next) {
          next = now + options.heartbeatSeconds * 1000
          const reply = await post(client, ctx.agentUrl, '/v1/agent/heartbeat', { facts: null }, { ca: bundle })
          if (reply.status !== 200) {
            fail(`heartbeat ${reply.status}`)
            continue
          }
          if (renewAt === undefined && (JSON.parse(reply.body) as { renewal_due?: boolean }).renewal_due === true) {
            renewAt = performance.now() + Math.random() * checkSeconds * 1000
          }
        }
      } catch (error) {
        fail((error as NodeJS.ErrnoException).code ?? (error as Error).message.slice(0, 40))
      }
    }
    client.destroy()
  })

  // Let every agent connect and heartbeat once before the rotation.
  await new Promise((r) => setTimeout(r, (options.heartbeatSeconds + 5) * 1000))
  phase = 'rotation'
  const begunAt = performance.now()
  const phaseRun = (p: 'begin' | 'status' | 'complete') =>
    withRetry(p, () => rotateCa({ pool: ctx.pool, phase: p, pkiDir: ctx.pkiDir, clock: systemClock }))
  await phaseRun('begin')
  let status = await phaseRun('status')
  let lastPrint = 0
  while (!status.completePossible) {
    await new Promise((r) => setTimeout(r, 1000))
    status = await phaseRun('status')
    if (performance.now() - lastPrint > 10_000) {
      lastPrint = performance.now()
      process.stderr.write(
        `bench: ${count} agents: ${status.progress?.renewed}/${status.progress?.connected} renewed\n`,
      )
    }
  }
  const allowedAt = performance.now()
  await phaseRun('complete')
  const completedAt = performance.now()
  // A few more heartbeats on the new CA only (the gateway reloads within 2 s) before stopping.
  await new Promise((r) => setTimeout(r, Math.min(options.heartbeatSeconds, 10) * 1000 + 3000))
  stopped = true
  await Promise.all(loops)
  await forEachLimit(fleet.agents, 64, async (a) => {
    await ctx.pool.query(`UPDATE nodes SET status = 'retired' WHERE id = $1`, [a.nodeId])
  })

  const buckets = new Map<number, number>()
  for (const t of renewedAt)
    buckets.set(Math.floor((t - begunAt) / 1000), (buckets.get(Math.floor((t - begunAt) / 1000)) ?? 0) + 1)
  const first = Math.min(...buckets.keys())
  const last = Math.max(...buckets.keys())
  return {
    agents: count,
    checkSeconds,
    untilCompleteS: (allowedAt - begunAt) / 1000,
    completeS: (completedAt - allowedAt) / 1000,
    renewals: renewedAt.length,
    meanPerS: renewedAt.length / (last - first + 1),
    peakPerS: Math.max(...buckets.values()),
    failed: [...failures].filter(([k]) => k.startsWith('rotation')).reduce((a, [, b]) => a + b, 0),
    rateLimited,
    failures,
  }
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2))
  const { initPki } = await import('../src/pki/init-pki.js')
  const { loadPkiSet } = await import('../src/pki/pki-set.js')
  const { generateP256KeyPair, privateKeyToPem } = await import('../src/pki/keys.js')
  const { x509 } = await import('../src/pki/x509-provider.js')
  const dir = await mkdtemp(join(tmpdir(), 'fleetkit-bench-rot-'))
  const db = await startBenchPostgres()
  const admin = new pg.Client({ connectionString: db.adminUrl })
  let gateway: ChildProcess | undefined
  try {
    await admin.connect()
    const pkiDir = join(dir, 'pki')
    await initPki({ pkiDir, serverNames: ['127.0.0.1'], now: new Date() })
    const started = await startGatewayProcess(db.url, pkiDir)
    gateway = started.child
    const keys = await generateP256KeyPair()
    console.log(
      `| agents | check interval | until --complete allowed | --complete | renewals | mean/s | peak/s | peak/mean | failed requests during the rotation (and while connecting) | 429 |`,
    )
    console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
    for (const count of options.agents) {
      // The CA of this round: the previous round's rotation made a new one.
      const pki = await loadPkiSet(pkiDir, new Date())
      const ctx = {
        pool: db.pool,
        admin,
        database: db.database,
        enrollUrl: '',
        agentUrl: started.agentUrl,
        caPem: pki.bundlePem,
        keyPem: await privateKeyToPem(keys.privateKey),
        keys,
        publicKey: await x509.PublicKey.create(keys.publicKey),
        ca: pki.ca,
        pkiDir,
        env: { DATABASE_URL: db.url, FLEETKIT_PKI_DIR: pkiDir, PATH: process.env.PATH ?? '' },
      }
      process.stderr.write(`bench: ${count} agents: building the fleet\n`)
      const r = await rotateOnce(count, options, ctx)
      const reasons = [...r.failures].map(([k, v]) => `${v} ${k}`).join(', ')
      console.log(
        `| ${r.agents} | ${r.checkSeconds} s | ${r.untilCompleteS.toFixed(1)} s | ${r.completeS.toFixed(1)} s | ${r.renewals} | ${r.meanPerS.toFixed(1)} | ${r.peakPerS} | ${(r.peakPerS / r.meanPerS).toFixed(2)} | ${r.failed}${reasons ? ` (${reasons})` : ''} | ${r.rateLimited} |`,
      )
    }
  } finally {
    if (gateway && gateway.exitCode === null) {
      const exited = new Promise((resolve) => gateway!.once('exit', resolve))
      gateway.kill('SIGTERM')
      await exited
    }
    await admin.end().catch(() => {})
    await db.stop()
    await rm(dir, { recursive: true, force: true })
  }
}

if (process.argv.includes('--serve')) await serve()
else await main()
