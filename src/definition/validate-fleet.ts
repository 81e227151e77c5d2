// validateFleet: what `fleetkit validate` does, as a library call: read and validate the file,
// check the change since a Git revision when asked, and summarise the fleet. Throws on any error.
import { FleetkitError } from '../checks/fleetkit-error.js'
import { poolReservations, ZERO_CAPACITY, addCapacity } from './capacity.js'
import { loadHostPolicy, type HostPolicy } from './host-policy.js'
import { definitionErrorsToFleetkitError, readDefinitionFile } from './load.js'
import type { TransitionFacts, TransitionFactsSource } from './transitions/facts.js'
import { type ValidateFinding, unreachableBySync } from './sync-reachability.js'
import type { Capacity, Definition, DefinitionError } from './types.js'
import { validateDefinitionText } from './validate-text.js'

export interface ValidateFleetOptions {
  path: string
  /** A Git revision of the same file: also check the change since then. */
  since?: string
  /** State facts for the transition rules; "no state recorded" when absent. */
  facts?: TransitionFacts
  factsSource?: TransitionFactsSource
  policy?: HostPolicy
}

export interface FleetSummary {
  /** @minLength 1 */
  file: string
  /** @pattern ^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$ */
  fleet: string
  /**
   * @minimum 1
   * @asType integer
   */
  pools: number
  nodes: {
    /**
     * @minimum 0
     * @asType integer
     */
    total: number
    /**
     * @minimum 0
     * @asType integer
     */
    active: number
    /**
     * @minimum 0
     * @asType integer
     */
    drained: number
    /**
     * @minimum 0
     * @asType integer
     */
    disabled: number
  }
  /** Summed over pools: the budgets, and what active and drained nodes reserve of them. */
  capacity: { budget: Capacity; reserved: Capacity }
  /** The explanation: per pool, its role, its nodes and what they reserve of its budget. */
  byPool: PoolSummary[]
  canary: string | null
  /** The file says `example: true`: documentation ranges accepted, real hosts and providers refused. */
  example: boolean
  since: {
    /** @minLength 1 */
    ref: string
    factsSource: TransitionFactsSource
  } | null
  /** What validate flags without refusing the file: nodes `fleetkit sync` could never reach. */
  findings: ValidateFinding[]
}

interface PoolSummary {
  /** @minLength 1 */
  pool: string
  /** @minLength 1 */
  role: string
  ingress: boolean
  /** Its lost nodes' allocations are stranded for a person to decide, not released. */
  stateful: boolean
  serverType: string | null
  regions: string[]
  nodes: {
    /**
     * @minimum 0
     * @asType integer
     */
    active: number
    /**
     * @minimum 0
     * @asType integer
     */
    drained: number
    /**
     * @minimum 0
     * @asType integer
     */
    disabled: number
  }
  budget: Capacity
  reserved: Capacity
  /** The pool's container networks (dockerNetworkPolicy base/prefix), when it has a policy. */
  containerNetworks: string | null
}

export interface ValidatedFleet {
  definition: Definition
  summary: FleetSummary
}

export async function validateFleet(options: ValidateFleetOptions): Promise<ValidatedFleet> {
  const policy = options.policy ?? loadHostPolicy()
  const text = await readDefinitionFile(options.path)
  const { definition, errors } = validateDefinitionText(text, options.path, { policy })
  if (errors.some((e) => e.code === 'DEFINITION_UNREADABLE'))
    throw definitionErrorsToFleetkitError(options.path, errors)
  if (options.since !== undefined && definition) {
    // Loaded only with --since: the transition rules and Git are no part of checking a file alone.
    const [{ checkTransitions }, { NO_STATE_FACTS }] = await Promise.all([
      import('./transitions/check-transitions.js'),
      import('./transitions/facts.js'),
    ])
    const previous = await readPreviousRevision(options.path, options.since)
    errors.push(...(await checkTransitions(previous, definition, options.facts ?? NO_STATE_FACTS, policy)))
  }
  if (errors.length > 0 || !definition) throw definitionErrorsToFleetkitError(options.path, errors)
  return {
    definition,
    summary: summarize(definition, policy, {
      file: options.path,
      since: options.since === undefined ? null : { ref: options.since, factsSource: options.factsSource ?? 'none' },
    }),
  }
}

async function readPreviousRevision(path: string, ref: string): Promise<Definition> {
  const { readDefinitionAtRevision } = await import('./transitions/read-revision.js')
  const text = await readDefinitionAtRevision(path, ref)
  // Only the schema: the older file may break rules that changed since, but its shape must be known.
  const { definition, errors } = validateDefinitionText(text, `${path}@${ref}`, { schemaOnly: true })
  const blocking = errors.filter((e: DefinitionError) => e.check === 'definition:schema')
  if (!definition || blocking.length > 0) {
    throw new FleetkitError(
      'DEFINITION_REVISION_INVALID',
      `${path} at revision ${ref} does not match the schema (${blocking.length} error(s)); the change cannot be judged`,
      {
        actions: [`fleetkit validate --definition ${path} (without --since) to check the file alone`],
        data: { path, ref, errors: blocking },
      },
    )
  }
  return definition
}

export function summarize(
  definition: Definition,
  policy: HostPolicy,
  extra: Pick<FleetSummary, 'file' | 'since'>,
): FleetSummary {
  const count = (state: string) => definition.nodes.filter((node) => node.state === state).length
  // Each pool's nodes by state, in one pass over the nodes (not one per pool).
  const inPools = new Map(Object.keys(definition.pools).map((name) => [name, { active: 0, drained: 0, disabled: 0 }]))
  for (const node of definition.nodes) {
    const states = inPools.get(node.pool)
    if (states) states[node.state]++
  }
  let budget = ZERO_CAPACITY
  let reserved = ZERO_CAPACITY
  for (const pool of Object.values(definition.pools)) budget = addCapacity(budget, pool.capacityBudget)
  const reservations = poolReservations(definition, policy)
  for (const entry of reservations.values()) reserved = addCapacity(reserved, entry.reserved)
  const byPool = Object.entries(definition.pools).map(([name, pool]): PoolSummary => {
    const network = pool.dockerNetworkPolicy
    return {
      pool: name,
      role: pool.role,
      ingress: pool.ingress ?? false,
      stateful: pool.stateful ?? false,
      serverType: pool.serverType ?? null,
      regions: pool.regions ?? [],
      nodes: inPools.get(name)!,
      budget: pool.capacityBudget,
      reserved: reservations.get(name)?.reserved ?? ZERO_CAPACITY,
      containerNetworks: network ? `/${network.prefix} networks from ${network.base}` : null,
    }
  })
  return {
    file: extra.file,
    fleet: definition.fleet,
    pools: Object.keys(definition.pools).length,
    nodes: {
      total: definition.nodes.length,
      active: count('active'),
      drained: count('drained'),
      disabled: count('disabled'),
    },
    capacity: { budget, reserved },
    byPool,
    canary: definition.canary ?? null,
    example: definition.example === true,
    since: extra.since,
    findings: unreachableBySync(definition),
  }
}

/** The explanation printed under the summary: a line per pool, then the canary. */
export function formatPoolLines(s: FleetSummary): string[] {
  const lines = s.byPool.map((p) => {
    const where = [p.serverType, p.regions.join('/')].filter(Boolean).join(' in ')
    return (
      `  pool ${p.pool} (role ${p.role}${p.ingress ? ', ingress 80/443' : ''}${p.stateful ? ', stateful' : ''}${where ? `, ${where}` : ''}): ` +
      `${p.nodes.active} active, ${p.nodes.drained} drained, ${p.nodes.disabled} disabled; reserves cpu ${p.reserved.cpu}/${p.budget.cpu}, ` +
      `memory ${p.reserved.memoryMiB}/${p.budget.memoryMiB} MiB, disk ${p.reserved.diskGiB}/${p.budget.diskGiB} GiB` +
      (p.containerNetworks ? `; containers on ${p.containerNetworks}` : '')
    )
  })
  lines.push(
    s.canary
      ? `  canary: ${s.canary} proves a new revision before the rest`
      : '  canary: none declared (sync picks the first reachable node)',
  )
  return lines
}

/** The one-line summary printed when the definition is valid. */
export function formatFleetSummary(s: FleetSummary): string {
  const { budget, reserved } = s.capacity
  return (
    `${s.file}: fleet "${s.fleet}" is valid: ${s.pools} pools, ${s.nodes.total} nodes (${s.nodes.active} active, ${s.nodes.drained} drained, ${s.nodes.disabled} disabled), ` +
    `capacity reserved cpu ${reserved.cpu}/${budget.cpu}, memory ${reserved.memoryMiB}/${budget.memoryMiB} MiB, disk ${reserved.diskGiB}/${budget.diskGiB} GiB` +
    (s.since
      ? `; change since ${s.since.ref} is safe (state: ${s.since.factsSource === 'none' ? 'not consulted' : 'from the store'})`
      : '') +
    (s.example ? '; an example fleet (example: true): commands that reach real hosts or a provider refuse it' : '')
  )
}
