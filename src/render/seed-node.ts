// `fleetkit seed`: registers the node in the state (a fresh single-use secret for an agent,
// the pinned host key for a worker), renders its seed within the size budget and writes it 0600.
import { readFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'

import { FleetkitError } from '../checks/fleetkit-error.js'
import type { Clock } from '../config/clock.js'
import type { Env } from '../config/state-dir.js'
import type { Definition } from '../definition/types.js'
import { resolvePkiDir } from '../pki/pki-dir.js'
import { assertPkiDirectoryPrivate } from '../pki/pki-files.js'
import { DEFAULT_DATA_MOUNT, renderAgentSeed } from './agent-seed.js'
import { type Rng } from '../config/rng.js'
import { newEnrollmentSecret } from './enrollment-secret.js'
import { fitSeedBudget } from './seed-budget.js'
import { writePrivateFile } from './private-file.js'
import { generateSshHostKey, type SshHostKey } from './ssh-host-key.js'
import { invalidValue } from './values.js'
import { renderWorkerSeed } from './worker-seed.js'

export type SeedKind = 'agent' | 'worker'

export interface SeedNodeOptions {
  nodeId: string
  kind: SeedKind
  definition: Definition
  ttlMs: number
  autoinstall: boolean
  /** File to write (0600); undefined: the caller prints the bytes. */
  outputPath?: string
  env: Env
  clock: Clock
  rng: Rng
  /** Where a relative release.caFile is resolved from (the definition's directory). */
  definitionDir?: string
}

export interface SeedNodeResult {
  node: string
  kind: SeedKind
  /** The file written, or null when the seed went to stdout. */
  path: string | null
  bytes: number
  plainBytes: number
  gzipped: boolean
  autoinstall: boolean
  /** When the embedded enrollment secret expires (agent seeds). The secret itself is never reported. */
  secretExpiresAt: string | null
  /** The pinned host key's public half (worker seeds), as stored in the state. */
  hostKeyPublic: string | null
}

export interface SeedOutput {
  result: SeedNodeResult
  seed: Buffer
}

export interface NodeTarget {
  id: string
  pool: string
  region?: string
  serverType?: string
  dataMount: string
  sshUser?: string
  declared: boolean
}

/** The CA bundle the agent pins until its first renewal; `fleetkit ca init` creates it. */
export async function readGatewayCaBundle(env: Env): Promise<string> {
  const path = join(resolvePkiDir(env), 'ca-bundle.pem')
  // A bundle others could have edited would pin their CA on the new host.
  await assertPkiDirectoryPrivate(resolvePkiDir(env))
  try {
    return await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    throw new FleetkitError('CA_MISSING', `the gateway CA bundle ${path} does not exist, so an agent seed cannot pin it`, {
      actions: ['fleetkit ca init', 'or set FLEETKIT_PKI_DIR to the gateway\'s PKI directory'],
      data: { path },
    })
  }
}

/** The private mirror's CA bundle named by release.caFile, relative to the definition's directory. */
export async function readReleaseCa(definition: Definition, definitionDir: string): Promise<string | undefined> {
  const file = definition.release.caFile
  if (file === undefined) return undefined
  try {
    return await readFile(resolve(definitionDir, file), 'utf8')
  } catch {
    throw invalidValue('release.caFile', 'a readable PEM file (relative paths start at the definition\'s directory)')
  }
}

export async function seedNode(options: SeedNodeOptions): Promise<SeedOutput> {
  const { definition, clock, rng } = options
  const caBundle = options.kind === 'agent' ? await readGatewayCaBundle(options.env) : undefined
  const releaseCa = options.kind === 'agent' ? await readReleaseCa(definition, options.definitionDir ?? '.') : undefined
  const { openDatabase, withTransaction } = await import('../store/database.js')
  const nodes = await import('../store/nodes.js')
  const database = await openDatabase({ env: options.env })
  try {
    const row = await nodes.getNode(database.pool, options.nodeId)
    const target = nodeTarget(definition, options.nodeId, row)

    let document: string
    let secretExpiresAt: Date | null = null
    let hostKeyPublic: string | null = null
    let register: (client: Parameters<typeof nodes.getNode>[0]) => Promise<void>
    if (options.kind === 'agent') {
      const secret = newEnrollmentSecret(rng)
      secretExpiresAt = new Date(clock.now().getTime() + options.ttlMs)
      document = agentSeedDocument(definition, target, caBundle!, secret.secret, releaseCa)
      const expiresAt = secretExpiresAt
      register = async (client) => {
        await nodes.upsertDeclaredNode(client, { id: target.id, pool: target.pool, region: target.region, serverType: target.serverType, status: 'provisioning' })
        await nodes.issueEnrollmentSecret(client, target.id, secret.sha256, expiresAt)
      }
    } else {
      const hostKey = generateSshHostKey(target.id, rng)
      hostKeyPublic = hostKey.publicKey
      document = workerSeedDocument(definition, target, hostKey, options.autoinstall)
      register = async (client) => {
        // A new row starts as provisioning; an existing node keeps its status.
        await nodes.upsertDeclaredNode(client, { id: target.id, pool: target.pool, region: target.region, serverType: target.serverType, ...(row ? {} : { status: 'provisioning' }) })
        await nodes.setNodeHostKey(client, target.id, hostKey.publicKey)
      }
    }
    // Every value is validated and the budget met before the state changes.
    const budgeted = fitSeedBudget(document)
    await withTransaction(database.pool, register)
    if (options.outputPath !== undefined) await writePrivateFile(options.outputPath, budgeted.bytes)
    return {
      seed: budgeted.bytes,
      result: {
        node: target.id,
        kind: options.kind,
        path: options.outputPath ?? null,
        bytes: budgeted.bytes.length,
        plainBytes: budgeted.plainBytes,
        gzipped: budgeted.gzipped,
        autoinstall: options.kind === 'worker' && options.autoinstall,
        secretExpiresAt: secretExpiresAt?.toISOString() ?? null,
        hostKeyPublic,
      },
    }
  } finally {
    await database.close()
  }
}

/** The agent seed of a node: the definition's gateway and release, the pinned CA bundle, the secret. */
export function agentSeedDocument(definition: Definition, target: NodeTarget, caBundlePem: string, secret: string, releaseCaPem?: string): string {
  return renderAgentSeed({
    releaseCaPem,
    nodeId: target.id,
    gatewayUrl: definition.gateway.url,
    enrollUrl: definition.gateway.enrollUrl,
    caBundlePem,
    releaseUrl: definition.release.url,
    releasePublicKey: definition.release.publicKey,
    releaseVersion: definition.release.version,
    enrollmentSecret: secret,
    dataMount: target.dataMount,
  })
}

/** The worker seed of a node: its declared account (ssh.user), the operators' keys, its host key. */
export function workerSeedDocument(definition: Definition, target: NodeTarget, hostKey: SshHostKey, autoinstall: boolean): string {
  return renderWorkerSeed({ nodeId: target.id, user: target.sshUser ?? '', operatorKeys: definition.operators.sshKeys, hostKey, autoinstall })
}

/** A node is declared in the definition, or known to the state (provisioned by fleetkit). */
export function nodeTarget(definition: Definition, nodeId: string, row: { id: string; pool: string; region?: string | null; serverType?: string | null } | null | undefined): NodeTarget {
  const declared = definition.nodes.find((n) => n.id === nodeId)
  if (declared) {
    const pool = definition.pools[declared.pool]
    return {
      id: declared.id,
      pool: declared.pool,
      region: declared.region ?? row?.region ?? pool?.regions?.[0],
      serverType: declared.serverType ?? row?.serverType ?? pool?.serverType,
      dataMount: declared.dataVolume?.mountPoint ?? DEFAULT_DATA_MOUNT,
      sshUser: declared.ssh?.user,
      declared: true,
    }
  }
  if (row) {
    return { id: row.id, pool: row.pool, region: row.region ?? undefined, serverType: row.serverType ?? undefined, dataMount: DEFAULT_DATA_MOUNT, declared: false }
  }
  throw new FleetkitError('NODE_UNKNOWN', `node ${JSON.stringify(nodeId.slice(0, 64))} is neither declared in the fleet definition nor in the state`, {
    actions: ['declare the node under nodes: in fleet.yaml', 'fleetkit validate'],
    data: { node: nodeId.slice(0, 64) },
  })
}
