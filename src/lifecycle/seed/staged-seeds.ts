// What a `fleetkit seed` killed between its commit and its rename leaves beside the node's seed: the
// staged `.NODE.user-data.<12 hex>.tmp` (0600) holding the seed the state took (a live enrollment
// secret, a host's private key), while the final path holds the previous seed or nothing. The next
// seed of that node, holding the node's seed-write lock (every writer of that file stages and renames
// under it, so none is running), finishes that rename when the staged seed is the one the state
// expects, and removes every other staged seed of the node.
import { createHash } from 'node:crypto'
import { readdir, readFile, rename, unlink } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { gunzipSync } from 'node:zlib'

import { parse } from 'yaml'

import { syncDirectory } from '../../fs/atomic-file.js'
import { AGENT_SEED_SCRIPT_PATH } from '../../render/agent-seed.js'
import type { SeedKind } from '../../render/seed-documents.js'
import type { Queryable } from '../../store/database.js'
import { isPendingSecret } from '../../store/nodes/enrollment-secrets.js'

/** `.<seed file name>.<12 hex>.tmp`: the name tempPathFor (src/fs/atomic-file.ts) gives a staged seed. */
function stagedSeedPattern(seedPath: string): RegExp {
  const name = basename(seedPath).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return new RegExp(`^\\.${name}\\.[0-9a-f]{12}\\.tmp$`)
}

/** What the state says of the node's pending seed (its row as getNode reads it). */
export interface SeedState {
  status: string
  hostKeyPublic: string | null
}

interface FinishedSeed {
  /** The seed's place, which now holds the staged seed of the killed run. */
  path: string
  kind: SeedKind
  bytes: number
  plainBytes: number
  gzipped: boolean
  autoinstall: boolean
  /** It carries a host key (a worker seed, an agent seed of a node that declares ssh.user): the one pinned. */
  hostKey: boolean
}

export interface StagedSeedsOutcome {
  /** The staged seed renamed into place, when one was the seed the state expects. */
  finished?: FinishedSeed
  /** The names of the staged seeds removed (none of them is what the state holds). */
  removed: string[]
}

/**
 * Finish or remove the seeds staged beside `seedPath` by killed runs of node `nodeId`. Call it holding
 * the node's seed-write lock, and only for the node's own default path (<state dir>/seeds/NODE.user-data),
 * whose staged names are this node's alone. A staged seed is the state's seed when the node is
 * provisioning or enrolled (not retired) and: an agent seed, one of whose 64-hex values is the node's
 * pending secret (its SHA-256 is the one stored, unused and unexpired); a worker seed, whose host key
 * is the one pinned. Then it is renamed into place, as the killed run would have done; every other
 * staged seed holds a secret or key the state no longer has and is removed.
 */
export async function settleStagedSeeds(
  q: Queryable,
  nodeId: string,
  seedPath: string,
  state: SeedState | undefined,
  now: Date,
): Promise<StagedSeedsOutcome> {
  const dir = dirname(seedPath)
  let names: string[]
  try {
    names = await readdir(dir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { removed: [] }
    throw error
  }
  const pattern = stagedSeedPattern(seedPath)
  const outcome: StagedSeedsOutcome = { removed: [] }
  for (const name of names.filter((n) => pattern.test(n)).sort()) {
    const staged = join(dir, name)
    const seed = outcome.finished ? undefined : await stateSeed(q, nodeId, staged, state, now)
    if (seed) {
      await rename(staged, seedPath)
      outcome.finished = { path: seedPath, ...seed }
      continue
    }
    await unlink(staged).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error
    })
    outcome.removed.push(name)
  }
  if (outcome.finished || outcome.removed.length > 0) await syncDirectory(dir)
  return outcome
}

/** The staged seed's kind and sizes when it is the seed the state expects; undefined otherwise. */
async function stateSeed(
  q: Queryable,
  nodeId: string,
  staged: string,
  state: SeedState | undefined,
  now: Date,
): Promise<Omit<FinishedSeed, 'path'> | undefined> {
  if (state === undefined || state.status === 'retired') return undefined
  let bytes: Buffer
  let gzipped: boolean
  let plain: string
  let document: unknown
  try {
    bytes = await readFile(staged)
    gzipped = bytes[0] === 0x1f && bytes[1] === 0x8b
    plain = (gzipped ? gunzipSync(bytes) : bytes).toString('utf8')
    document = parse(plain)
  } catch {
    // Cut short or not a seed at all: not one the state can expect.
    return undefined
  }
  type CloudConfig = { write_files?: { path?: unknown }[]; ssh_keys?: { ed25519_public?: unknown } }
  const wrapper = (document ?? {}) as CloudConfig & { autoinstall?: { 'user-data'?: CloudConfig } }
  // A worker seed for an ISO install nests its cloud-config under autoinstall (render/worker-seed.ts).
  const autoinstall = wrapper.autoinstall !== undefined
  const config = wrapper.autoinstall?.['user-data'] ?? wrapper
  const hostKey = typeof config.ssh_keys?.ed25519_public === 'string' ? config.ssh_keys.ed25519_public : undefined
  // A seed with a host key is the state's only while that key is the one pinned.
  if (hostKey !== undefined && hostKey !== state.hostKeyPublic) return undefined
  const agent = Array.isArray(config.write_files) && config.write_files.some((f) => f?.path === AGENT_SEED_SCRIPT_PATH)
  const sizes = {
    bytes: bytes.length,
    plainBytes: Buffer.byteLength(plain),
    gzipped,
    autoinstall,
    hostKey: hostKey !== undefined,
  }
  if (!agent) return hostKey === undefined ? undefined : { kind: 'worker', ...sizes }
  const hashes = [...new Set(plain.match(/\b[0-9a-f]{64}\b/g) ?? [])].map((value) =>
    createHash('sha256').update(value, 'utf8').digest(),
  )
  return (await isPendingSecret(q, nodeId, hashes, now)) ? { kind: 'agent', ...sizes } : undefined
}
