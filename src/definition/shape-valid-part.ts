// The parts of a definition whose shape is valid, so the semantic rules can run beside schema
// errors: a misspelt field and a wrong pool reference are reported in the same run.
import { parsePointer } from './json-pointer.js'
import type { Definition, DefinitionError } from './types.js'

/** Names the file declares in entries the schema refused: a reference to one is not "unknown". */
export interface ShapeInvalidNames {
  pools: ReadonlySet<string>
  nodeIds: ReadonlySet<string>
  /** `pools` or `nodes` as a whole has the wrong shape: no reference to them can be judged. */
  allPools: boolean
  allNodes: boolean
}

export interface ShapeValidPart {
  definition: Definition
  invalid: ShapeInvalidNames
  /** Original index of each node kept, so rule errors point into the file as written. */
  nodeIndex: number[]
}

type Mapping = Record<string, unknown>

const isMapping = (value: unknown): value is Mapping =>
  value !== null && typeof value === 'object' && !Array.isArray(value)

/**
 * The definition without what the schema refused. An unknown field is simply left out (the rest of
 * its object is fine); any other error drops the node or pool it is in, or the top-level section.
 * Undefined when the file is not a mapping at all.
 */
export function shapeValidPart(data: unknown, shapeErrors: readonly DefinitionError[]): ShapeValidPart | undefined {
  if (!isMapping(data)) return undefined
  const root: Mapping = structuredClone(data)
  const badNodes = new Set<number>()
  const badPools = new Set<string>()
  const badSections = new Set<string>()
  for (const error of shapeErrors) {
    const segments = parsePointer(error.path)
    if (error.code === 'DEFINITION_FIELD_UNKNOWN') {
      removeAt(root, segments)
      continue
    }
    const [section, entry] = segments
    if (section === undefined) return undefined
    if (section === 'nodes' && entry !== undefined && /^\d+$/.test(entry)) badNodes.add(Number(entry))
    else if (section === 'pools' && entry !== undefined) badPools.add(entry)
    else badSections.add(section)
  }
  for (const section of badSections) delete root[section]

  const pools: Mapping = isMapping(root.pools) ? { ...root.pools } : {}
  for (const name of badPools) delete pools[name]
  const rawNodes: unknown[] = Array.isArray(root.nodes) ? root.nodes : []
  const nodes: unknown[] = []
  const nodeIndex: number[] = []
  const badNodeIds = new Set<string>()
  rawNodes.forEach((node, index) => {
    if (!badNodes.has(index) && isMapping(node)) {
      nodes.push(node)
      nodeIndex.push(index)
    } else if (isMapping(node) && typeof node.id === 'string') {
      badNodeIds.add(node.id)
    }
  })
  const operators = isMapping(root.operators) ? root.operators : { cidrs: [], sshKeys: [] }
  return {
    definition: { ...root, operators, pools, nodes } as unknown as Definition,
    invalid: {
      pools: badPools,
      nodeIds: badNodeIds,
      allPools: !isMapping(root.pools),
      allNodes: root.nodes !== undefined && !Array.isArray(root.nodes),
    },
    nodeIndex,
  }
}

function removeAt(root: Mapping, segments: string[]): void {
  let parent: unknown = root
  for (const segment of segments.slice(0, -1)) {
    if (parent === null || typeof parent !== 'object') return
    parent = (parent as Mapping)[segment]
  }
  const last = segments.at(-1)
  if (last !== undefined && isMapping(parent)) delete parent[last]
}

/** Rule errors point at the kept nodes' indexes: map them back to the file's. */
export function restoreNodeIndexes(errors: DefinitionError[], nodeIndex: readonly number[]): DefinitionError[] {
  const restore = (text: string, pattern: RegExp) =>
    text.replace(pattern, (whole, lead: string, index: string) => {
      const original = nodeIndex[Number(index)]
      return original === undefined ? whole : `${lead}/nodes/${original}`
    })
  // A message names another node as "at /nodes/N"; other text (a value) is left alone.
  return errors.map((e) => ({
    ...e,
    path: restore(e.path, /^()\/nodes\/(\d+)/),
    message: restore(e.message, /( at )\/nodes\/(\d+)/g),
  }))
}
