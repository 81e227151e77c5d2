// A node's server and its volume must exist once: the one flow that finds what is already the node's
// (by its labels), creates otherwise, and after a lost answer or a name conflict adopts only what is ours.
import { FleetkitError, isFleetkitError } from '../checks/fleetkit-error.js'
import type { Labels } from './hetzner-types.js'

/** The label every fleetkit server and volume carries: how a create whose answer was lost is found again. */
export const NODE_ID_LABEL = 'fleetkit.node_id'

/** The labels of everything provisioned for a node (its server, its volume): whose it is, in which fleet and pool. */
export function nodeLabels(fleet: string, nodeId: string, pool: string): Labels {
  return { [NODE_ID_LABEL]: nodeId, 'fleetkit.fleet': fleet, 'fleetkit.pool': pool }
}

interface Labelled {
  id: number
  name: string
  labels: Labels
}

/** How one kind of resource is listed; `kind` names it in messages. */
export interface AdoptableKind<T extends Labelled> {
  kind: 'server' | 'volume'
  list(filter: { labelSelector?: string; name?: string }): Promise<T[]>
}

/** What a create sends that decides ownership: the resource's name and the node's labels. */
interface Wanted {
  name: string
  labels: Labels
}

/**
 * Ours when it carries every label we would have given it, with the same value: the node id alone
 * would adopt a namesake of another fleet in the same project.
 */
function carriesLabels(resource: Labelled, labels: Labels): boolean {
  return Object.entries(labels).every(([key, value]) => resource.labels[key] === value)
}

function nodeIdOf<T extends Labelled>(kind: AdoptableKind<T>, wanted: Wanted): string {
  const nodeId = wanted.labels[NODE_ID_LABEL]
  if (!nodeId) {
    throw new FleetkitError(
      'INTERNAL_ERROR',
      `creating a ${kind.kind} needs the ${NODE_ID_LABEL} label to recover a lost answer`,
    )
  }
  return nodeId
}

/** The resource with our name and all our labels, looked up by the node's label. */
async function ownByLabel<T extends Labelled>(kind: AdoptableKind<T>, wanted: Wanted): Promise<T | undefined> {
  const found = await kind.list({ labelSelector: `${NODE_ID_LABEL}=${nodeIdOf(kind, wanted)}` })
  return found.find((resource) => resource.name === wanted.name && carriesLabels(resource, wanted.labels))
}

/**
 * The resource holding our name, when it is ours: one a concurrent run created between our lookup
 * and our create carries our labels and is adopted. One without them is someone else's, never adopted.
 */
async function holderOfName<T extends Labelled>(
  kind: AdoptableKind<T>,
  wanted: Wanted,
  cause?: FleetkitError,
): Promise<T | undefined> {
  const [holder] = await kind.list({ name: wanted.name })
  if (!holder || carriesLabels(holder, wanted.labels)) return holder
  const shown = Object.entries(wanted.labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(', ')
  throw new FleetkitError(
    'PROVIDER_NAME_CONFLICT',
    `a ${kind.kind} named ${wanted.name} (id ${holder.id}) exists without this node's labels (${shown}): it is not this node's and is never adopted; nothing was created`,
    {
      actions: [
        `rename or delete ${kind.kind} ${holder.id} in the Hetzner Cloud console if it is unused`,
        'or provision under another node id',
      ],
      data: { ...cause?.data, name: wanted.name, [`${kind.kind}Id`]: holder.id },
      ...(cause ? { cause } : {}),
    },
  )
}

/**
 * What is already the node's before anything is created: found by its label, or holding its name
 * with its labels. Undefined when nothing holds the name; PROVIDER_NAME_CONFLICT when a stranger does.
 */
export async function findOwn<T extends Labelled>(kind: AdoptableKind<T>, wanted: Wanted): Promise<T | undefined> {
  return (await ownByLabel(kind, wanted)) ?? (await holderOfName(kind, wanted))
}

/**
 * The failures after which a create may have taken effect: no usable answer (5xx, timeout, broken
 * connection), or an answer without a usable resource (no id, too large to read).
 */
const AMBIGUOUS_CODES: readonly string[] = [
  'PROVIDER_UNAVAILABLE',
  'PROVIDER_RESPONSE_INVALID',
  'PROVIDER_RESPONSE_TOO_LARGE',
]

/**
 * Sends `create` once, never again. After an ambiguous failure it may have taken effect: looked up
 * by its label and adopted if found, so a create is never recorded without a usable id. After a
 * uniqueness_error the holder of the name is adopted when it carries our labels. Anything else is thrown.
 */
export async function createOrAdopt<T extends Labelled, R>(
  kind: AdoptableKind<T>,
  wanted: Wanted,
  create: () => Promise<R>,
  adopted: (found: T) => R,
): Promise<R> {
  nodeIdOf(kind, wanted)
  try {
    return await create()
  } catch (error) {
    if (!isFleetkitError(error)) throw error
    const ambiguous = AMBIGUOUS_CODES.includes(error.code) && error.data?.ambiguous === true
    const found = ambiguous
      ? await ownByLabel(kind, wanted)
      : error.code === 'PROVIDER_NAME_CONFLICT'
        ? await holderOfName(kind, wanted, error)
        : undefined
    if (found) return adopted(found)
    throw error
  }
}
