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
  const doc = parseDocument(text, { lineCounter, keepSourceTokens: false })
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
        const pair = node.items.find((item) => isPair(item) && isScalar(item.key) && String(item.key.value) === segment)
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
