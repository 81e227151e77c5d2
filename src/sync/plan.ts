// A sync plan: which nodes a sync touches (and which it skips, and why), which goes first as the
// canary, and a hash over everything that decides what it does, so a reviewed plan can be pinned.
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'

import { parse as parseYaml } from 'yaml'

import { FleetkitError } from '../checks/fleetkit-error.js'
import type { Definition } from '../definition/types.js'
import { packagePath } from '../package-root.js'
import type { InventoryStateNode } from '../render/inventory.js'
import { nodeAddress, unprovisionedStep } from '../render/node-address.js'

/** A node of the state as the plan reads it; lastSeenAt and lostAt tell a lost node that heartbeats again. */
interface PlanStateNode extends InventoryStateNode {
  lastSeenAt?: Date | null
  lostAt?: Date | null
}

/**
 * Why a node's state status keeps it out of a sync (parked and retired are also out of the
 * inventory), and the command that brings it back: none for a retired node. A lost node that has
 * heartbeated since it was lost comes back with `node admit` (the same test as node-admit.ts); one
 * still silent is looked at before anyone replaces it.
 */
function statusSkip(row: PlanStateNode): { reason: string; action?: string } | undefined {
  switch (row.status) {
    case 'parked':
      return { reason: 'parked', action: `fleetkit node unpark ${row.id}` }
    case 'retired':
      return { reason: 'retired' }
    case 'lost':
      return row.lastSeenAt && row.lostAt && row.lastSeenAt > row.lostAt
        ? { reason: 'lost, heartbeating again: admit it back first', action: `fleetkit node admit ${row.id}` }
        : { reason: 'lost, silent since: bring it back, or replace it', action: `fleetkit node show ${row.id}` }
    default:
      return undefined
  }
}

/** The statuses the inventory leaves out (src/render/inventory.ts): their address is never read. */
const OUT_OF_INVENTORY: ReadonlySet<string> = new Set(['parked', 'retired'])

export interface PlanTarget {
  id: string
  pool: string
  /** The agent version this node gets: its own pin, else the fleet's release.version. */
  agentVersion: string
}

export interface SyncPlan {
  /** The fleet repository's commit the definition was read at; null for an uncommitted file. */
  revision: string | null
  definitionSha256: string
  /** sha256 over every file under ansible/ (roles, playbooks, callback plugin, ansible.cfg). */
  rolesSha256: string
  playbook: string
  tags: string[]
  /** Targets in the order they run: the canary first. */
  targets: PlanTarget[]
  /** `action`: the command that makes a skipped node a target again (node provision, unpark, admit). */
  skipped: { id: string; reason: string; action?: string }[]
  /** --limit was given: a converged run of this plan does not say the whole fleet converged. */
  limited: boolean
  canary: string | null
  /** Definition, roles, playbook and tags: equal content already converged everywhere needs no canary. */
  contentHash: string
  /** The content plus the revision, the targets and the canary: what `--plan-hash` pins. */
  hash: string
  release: { version: string }
  images: Record<string, string>
}

export interface PlanInput {
  definition: Definition
  definitionText: string
  revision: string | null
  stateNodes: readonly PlanStateNode[]
  /** --limit: only these nodes (ids); each must be a node of the fleet. */
  limit?: readonly string[]
  tags?: readonly string[]
  /** A name under ansible/playbooks/ (default site.yml). */
  playbook?: string
  /** Defaults to fleetkit's own ansible/ folder. */
  ansibleDir?: string
  /** sha256 of the extra-vars file a harness passes (runSync's extraVarsFile): it changes what runs. */
  extraVarsSha256?: string
  /** sha256 of release.caFile's content (a private mirror's CA), which the inventory carries. */
  releaseCaSha256?: string
}

function sha256(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex')
}

function filesUnder(dir: string): string[] {
  const out: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === '__pycache__' || entry.name.endsWith('.pyc')) continue
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...filesUnder(path))
    else if (entry.isFile()) out.push(path)
  }
  return out
}

/** One hash over the roles' content: a path and its bytes, in path order. */
function hashAnsibleTree(dir: string): string {
  const hash = createHash('sha256')
  for (const file of filesUnder(dir)
    .map((f) => relative(dir, f))
    .sort()) {
    hash
      .update(`${file}\0`)
      .update(sha256(readFileSync(join(dir, file))))
      .update('\n')
  }
  return hash.digest('hex')
}

export function buildSyncPlan(input: PlanInput): SyncPlan {
  const { definition } = input
  const ansibleDir = input.ansibleDir ?? packagePath('ansible')
  const playbook = input.playbook ?? 'site.yml'
  const state = new Map(input.stateNodes.map((n) => [n.id, n]))
  const declared = new Map(definition.nodes.map((n) => [n.id, n]))
  const ids = [...new Set([...declared.keys(), ...state.keys()])].sort()
  const limit = input.limit === undefined ? undefined : new Set(input.limit)
  assertKnownTags(input.tags ?? [], join(ansibleDir, 'playbooks', playbook), playbook)
  for (const id of limit ?? []) {
    if (!ids.includes(id)) {
      throw new FleetkitError(
        'SYNC_TARGET_UNKNOWN',
        `--limit names ${id}, which is neither declared in the definition nor in the state`,
        {
          actions: ['fleetkit node list', 'fleetkit sync --dry-run (every node)'],
          data: { node: id },
        },
      )
    }
  }

  // Every node the run's inventory holds, within --limit or not, has one address (node-address.ts):
  // an ssh.host that disagrees with a provisioned server refuses the run here, before its ledger row.
  const unprovisioned = new Set<string>()
  for (const id of ids) {
    const row = state.get(id)
    if (row && OUT_OF_INVENTORY.has(row.status)) continue
    if (nodeAddress(definition, id, declared.get(id), row).source === 'unprovisioned') unprovisioned.add(id)
  }

  const targets: PlanTarget[] = []
  const skipped: SyncPlan['skipped'] = []
  for (const id of ids) {
    if (limit && !limit.has(id)) continue
    const node = declared.get(id)
    const row = state.get(id)
    const statusSkipped = row ? statusSkip(row) : undefined
    if (statusSkipped) skipped.push({ id, ...statusSkipped })
    else if (node?.state === 'disabled') skipped.push({ id, reason: 'disabled in the definition' })
    // No server address and no ssh.host: nothing to dial, like a parked node, until it is provisioned.
    else if (unprovisioned.has(id)) {
      const step = unprovisionedStep(id, row)
      skipped.push({ id, reason: `${step.reason}: ${step.action}`, action: step.action })
    } else
      targets.push({
        id,
        pool: node?.pool ?? row!.pool,
        agentVersion: node?.agentVersion ?? definition.release.version,
      })
  }

  // The declared canary when it is a target; else the first target in id order, so the choice is stable.
  const canary = targets.find((t) => t.id === definition.canary) ?? targets[0]
  const ordered = canary ? [canary, ...targets.filter((t) => t !== canary)] : []
  const definitionSha256 = sha256(input.definitionText)
  const rolesSha256 = hashAnsibleTree(ansibleDir)
  const tags = [...new Set(input.tags ?? [])].sort()
  const contentHash = sha256(
    JSON.stringify({
      definitionSha256,
      rolesSha256,
      playbook,
      tags,
      extraVars: input.extraVarsSha256 ?? null,
      releaseCa: input.releaseCaSha256 ?? null,
    }),
  )
  const hash = sha256(
    JSON.stringify({ contentHash, revision: input.revision, targets: ordered, canary: canary?.id ?? null, skipped }),
  )
  const images = Object.fromEntries(
    Object.entries(definition.pools)
      .filter(([, p]) => p.image !== undefined)
      .map(([name, p]) => [name, p.image!]),
  )
  return {
    revision: input.revision,
    definitionSha256,
    rolesSha256,
    playbook,
    tags,
    targets: ordered,
    skipped,
    limited: limit !== undefined,
    canary: canary?.id ?? null,
    contentHash,
    hash,
    release: { version: definition.release.version },
    images,
  }
}

/**
 * The next canary when the chosen one is unreachable: the next node of the same pool (in id order)
 * not yet tried; null when the pool has no other.
 */
/**
 * Every --tags must name a role of the playbook (site.yml tags each role with its name): ansible runs no task
 * for a tag nothing carries, and the run would report every node converged having changed nothing.
 */
function assertKnownTags(tags: readonly string[], playbookPath: string, playbook: string): void {
  if (tags.length === 0) return
  const roles = playbookRoles(playbookPath)
  // A playbook without roles (tasks only) tags its own tasks: nothing here to check them against.
  if (roles.length === 0) return
  const unknown = tags.filter((tag) => !roles.includes(tag))
  if (unknown.length === 0) return
  throw new FleetkitError(
    'USAGE_INVALID',
    `--tags names ${unknown.map((t) => JSON.stringify(t)).join(', ')}, which ${unknown.length === 1 ? 'is' : 'are'} no role of ${playbook}: nothing would run, and every node would be reported converged. Its roles: ${roles.join(', ')}`,
    {
      actions: [
        `fleetkit sync --tags ${roles.filter((r) => r !== 'preflight')[0] ?? roles[0]} (one role, or several comma-separated)`,
      ],
      data: { unknown, roles },
    },
  )
}

/** The roles a playbook's plays name, in order (`- role: NAME` or `- NAME`). */
function playbookRoles(path: string): string[] {
  let plays: unknown
  try {
    plays = parseYaml(readFileSync(path, 'utf8'))
  } catch {
    return []
  }
  const roles: string[] = []
  for (const play of Array.isArray(plays) ? plays : []) {
    for (const entry of (play as { roles?: unknown }).roles instanceof Array
      ? (play as { roles: unknown[] }).roles
      : []) {
      const name = typeof entry === 'string' ? entry : (entry as { role?: unknown } | null)?.role
      if (typeof name === 'string' && !roles.includes(name)) roles.push(name)
    }
  }
  return roles
}

export function nextCanary(
  plan: Pick<SyncPlan, 'targets'>,
  pool: string,
  tried: ReadonlySet<string>,
): PlanTarget | null {
  return (
    plan.targets.filter((t) => t.pool === pool && !tried.has(t.id)).sort((a, b) => (a.id < b.id ? -1 : 1))[0] ?? null
  )
}
