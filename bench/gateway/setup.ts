// What every gateway bench starts from: a PKI directory for 127.0.0.1 (CA, server certificate,
// bundle; the gateway keeps its TLS ticket keys there) and the context its simulated agents use
// (one key pair for all of them, certificates issued by the bench's CA).
import type { ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import pg from 'pg'

import type { PkiSet } from '../../src/pki/pki-set.js'
import type { BenchContext } from './agents.js'
import { stopChild } from './child.js'
import { type BenchPostgres, startBenchPostgres } from './postgres.js'

export async function createBenchPki(dir: string): Promise<{ pkiDir: string; pki: PkiSet }> {
  const { initPki } = await import('../../src/pki/init-pki.js')
  const { loadPkiSet } = await import('../../src/pki/pki-set.js')
  const pkiDir = join(dir, 'pki')
  await initPki({ pkiDir, serverNames: ['127.0.0.1'], now: new Date() })
  return { pkiDir, pki: await loadPkiSet(pkiDir, new Date()) }
}

export async function createBenchContext(
  db: BenchPostgres,
  admin: pg.Client,
  pki: PkiSet,
  urls: { enrollUrl: string; agentUrl: string },
): Promise<BenchContext> {
  const { generateP256KeyPair, privateKeyToPem } = await import('../../src/pki/keys.js')
  const { x509 } = await import('../../src/pki/x509-provider.js')
  const keys = await generateP256KeyPair()
  return {
    pool: db.pool,
    admin,
    database: db.database,
    ...urls,
    caPem: pki.bundlePem,
    keyPem: await privateKeyToPem(keys.privateKey),
    keys,
    publicKey: await x509.PublicKey.create(keys.publicKey),
    ca: pki.ca,
  }
}

export interface BenchRun {
  dir: string
  db: BenchPostgres
  admin: pg.Client
  children: Set<ChildProcess>
}

/**
 * A bench run's scratch directory, disposable PostgreSQL (and a superuser client for its statistics),
 * and its child processes, all stopped and removed when `body` ends, however it ends.
 */
export async function withBenchRun(prefix: string, body: (run: BenchRun) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  const db = await startBenchPostgres()
  const admin = new pg.Client({ connectionString: db.adminUrl })
  const children = new Set<ChildProcess>()
  try {
    await admin.connect()
    await body({ dir, db, admin, children })
  } finally {
    for (const child of children) await stopChild(child)
    await admin.end().catch(() => undefined)
    await db.stop()
    await rm(dir, { recursive: true, force: true })
  }
}
