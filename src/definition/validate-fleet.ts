// validateFleet: what `fleetkit validate` does, as a library call: read and validate the file,
// check the change since a Git revision when asked, and summarise the fleet. Throws on any error.
import { FleetkitError } from '../checks/fleetkit-error.js'
import { poolReservations, ZERO_CAPACITY, addCapacity } from './capacity.js'
import { loadHostPolicy, type HostPolicy } from './host-policy.js'
import { definitionErrorsToFleetkitError, readDefinitionFile } from './load.js'
import { checkTransitions } from './transitions/check-transitions.js'
import { NO_STATE_FACTS, type TransitionFacts, type TransitionFactsSource } from './transitions/facts.js'
import { readDefinitionAtRevision } from './transitions/read-revision.js'
import type { Capacity, Definition, DefinitionError } from './types.js'
import { validateDefinitionText } from './validate-text.js'

export interface ValidateFleetOptions {
  path: string
  /** A Git revision of the same file: also check the change since then. */
  since?: string
  allowDocumentationRanges?: boolean
  /** State facts for the transition rules; "no state recorded" when absent. */
  facts?: TransitionFacts
  factsSource?: TransitionFactsSource
  policy?: HostPolicy
}

export interface FleetSummary {
  file: string
  fleet: string
  pools: number
  nodes: { total: number; active: number; drained: number; disabled: number }
  /** Summed over pools: the budgets, and what active and drained nodes reserve of them. */
  capacity: { budget: Capacity; reserved: Capacity }
  canary: string | null
  allowDocumentationRanges: boolean
  since: { ref: string; factsSource: TransitionFactsSource } | null
}

export interface ValidatedFleet {
  definition: Definition
  summary: FleetSummary
}

export async function validateFleet(options: ValidateFleetOptions): Promise<ValidatedFleet> {
  const policy = options.policy ?? loadHostPolicy()
  const allowDocumentationRanges = options.allowDocumentationRanges ?? false
  const text = await readDefinitionFile(options.path)
  const { definition, errors } = validateDefinitionText(text, options.path, { allowDocumentationRanges, policy })
  if (errors.some((e) => e.code === 'DEFINITION_UNREADABLE')) throw definitionErrorsToFleetkitError(options.path, errors)
  if (options.since !== undefined && definition) {
    const previous = await readPreviousRevision(options.path, options.since)
    errors.push(...(await checkTransitions(previous, definition, options.facts ?? NO_STATE_FACTS, policy)))
  }
  if (errors.length > 0 || !definition) throw definitionErrorsToFleetkitError(options.path, errors)
  return {
    definition,
    summary: summarize(definition, policy, {
      file: options.path,
      allowDocumentationRanges,
      since: options.since === undefined ? null : { ref: options.since, factsSource: options.factsSource ?? 'none' },
    }),
  }
}

async function readPreviousRevision(path: string, ref: string): Promise<Definition> {
  const text = await readDefinitionAtRevision(path, ref)
  // Only the schema: the older file may break rules that changed since, but its shape must be known.
  const { definition, errors } = validateDefinitionText(text, `${path}@${ref}`, { schemaOnly: true })
  const blocking = errors.filter((e: DefinitionError) => e.check === 'definition:schema')
  if (!definition || blocking.length > 0) {
    throw new FleetkitError('DEFINITION_REVISION_INVALID', `${path} at revision ${ref} does not match the schema (${blocking.length} error(s)); the change cannot be judged`, {
      actions: [`fleetkit validate --definition ${path} (without --since) to check the file alone`],
      data: { path, ref, errors: blocking },
    })
  }
  return definition
}

export function summarize(definition: Definition, policy: HostPolicy, extra: Pick<FleetSummary, 'file' | 'allowDocumentationRanges' | 'since'>): FleetSummary {
  const count = (state: string) => definition.nodes.filter((node) => node.state === state).length
  let budget = ZERO_CAPACITY
  let reserved = ZERO_CAPACITY
  for (const pool of Object.values(definition.pools)) budget = addCapacity(budget, pool.capacityBudget)
  for (const entry of poolReservations(definition, policy).values()) reserved = addCapacity(reserved, entry.reserved)
  return {
    file: extra.file,
    fleet: definition.fleet,
    pools: Object.keys(definition.pools).length,
    nodes: { total: definition.nodes.length, active: count('active'), drained: count('drained'), disabled: count('disabled') },
    capacity: { budget, reserved },
    canary: definition.canary ?? null,
    allowDocumentationRanges: extra.allowDocumentationRanges,
    since: extra.since,
  }
}

/** The one-line summary printed when the definition is valid. */
export function formatFleetSummary(s: FleetSummary): string {
  const { budget, reserved } = s.capacity
  return `${s.file}: fleet "${s.fleet}" is valid: ${s.pools} pools, ${s.nodes.total} nodes (${s.nodes.active} active, ${s.nodes.drained} drained, ${s.nodes.disabled} disabled), ` +
    `capacity reserved cpu ${reserved.cpu}/${budget.cpu}, memory ${reserved.memoryMiB}/${budget.memoryMiB} MiB, disk ${reserved.diskGiB}/${budget.diskGiB} GiB` +
    (s.since ? `; change since ${s.since.ref} is safe (state: ${s.since.factsSource === 'none' ? 'not consulted' : 'from the store'})` : '')
}
