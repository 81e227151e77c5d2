// Maps a JSON pointer to a line and column of the source text, through the `yaml`
// package's document nodes. Built only when there are errors to place (it is the slow parse).
import { createRequire } from 'node:module'

import type * as Yaml from 'yaml'

import { parsePointer } from './json-pointer.js'

// Loaded on first use, synchronously: a valid definition never pays for this parser.
const require = createRequire(import.meta.url)

interface SourcePosition {
  line: number
  column: number
}

export type PositionOf = (path: string, options?: { key?: boolean }) => SourcePosition | undefined

export function sourcePositions(text: string): PositionOf {
  const { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument } = require('yaml') as typeof Yaml
  const lineCounter = new LineCounter()
  // uniqueKeys off: the first parse already refused duplicate keys, and the yaml package's own check
  // compares each key with every earlier one, quadratic in a mapping of many keys (a hostile file
  // with 20,000 unknown keys took 17 s).
  const doc = parseDocument(text, { lineCounter, keepSourceTokens: false, uniqueKeys: false })
  // Each mapping's keys, indexed the first time a pointer passes through it: one error per key of
  // a large mapping must not search the mapping once per error.
  const indexes = new Map<Yaml.YAMLMap, Map<string, Yaml.Pair>>()
  const pairOf = (map: Yaml.YAMLMap, segment: string): Yaml.Pair | undefined => {
    let index = indexes.get(map)
    if (index === undefined) {
      index = new Map()
      for (const item of map.items) {
        // The first of equal keys, as a linear search would find it.
        if (isPair(item) && isScalar(item.key) && !index.has(String(item.key.value)))
          index.set(String(item.key.value), item)
      }
      indexes.set(map, index)
    }
    return index.get(segment)
  }
  const at = (offset: number | undefined): SourcePosition | undefined => {
    if (offset === undefined) return undefined
    const { line, col } = lineCounter.linePos(offset)
    return { line, column: col }
  }
  return (path, options = {}) => {
    let node: unknown = doc.contents
    let keyNode: unknown
    for (const segment of parsePointer(path)) {
      if (isMap(node)) {
        const pair = pairOf(node as Yaml.YAMLMap, segment)
        if (!pair) break
        keyNode = pair.key
        node = pair.value
      } else if (isSeq(node)) {
        const index = Number(segment)
        if (!Number.isInteger(index) || index < 0 || index >= node.items.length) break
        keyNode = undefined
        node = node.items[index]
      } else break
    }
    const target = (options.key && keyNode ? keyNode : node) as Yaml.Node | null | undefined
    return at(target?.range?.[0])
  }
}
