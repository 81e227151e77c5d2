// Parses definition text (YAML, or JSON) into plain data: block-yaml.ts's fast path, else js-yaml.
// A failure gives a reason and a 1-based line and column, never a snippet of the source.
import { COMPLEXITY_LIMITS } from './complexity.js'
import { firstDuplicateKey } from './json-duplicate-keys.js'
import { loadYaml } from './load-yaml.js'

interface ParseFailure {
  reason: string
  /** Nesting or aliases past the limits (complexity.ts): the file is hostile, not mistyped. */
  tooComplex?: boolean
  line?: number
  column?: number
}

/** A fleet definition needs no anchors at all; a few for shared defaults are fine. */
const MAX_ALIASES = 1000

export type ParsedText = { ok: true; data: unknown } | { ok: false; failure: ParseFailure }

export function parseDefinitionText(text: string, sourceName: string): ParsedText {
  if (text.trim() === '') return { ok: false, failure: { reason: 'the file is empty', line: 1, column: 1 } }
  if (sourceName.endsWith('.json') || text.trimStart().startsWith('{')) {
    let data: unknown
    let parsed = false
    try {
      data = JSON.parse(text) as unknown
      parsed = true
    } catch (error) {
      if (error instanceof RangeError)
        return { ok: false, failure: { reason: 'it nests too deep to parse', tooComplex: true } }
      // Fall through: js-yaml reads JSON too and says where it breaks.
    }
    if (parsed) {
      // JSON.parse keeps the last of two equal keys; YAML refuses them, and so does a definition in JSON.
      const duplicate = firstDuplicateKey(text)
      if (duplicate === undefined) return { ok: true, data }
      return {
        ok: false,
        failure: { reason: 'duplicated mapping key', line: duplicate.line, column: duplicate.column },
      }
    }
  }
  // Block-style YAML, as definitions are written, is read without js-yaml (load-yaml.ts); anything else,
  // and every malformed text, by js-yaml, which also says where it breaks.
  try {
    // js-yaml shares an aliased node rather than copying it, so a few aliases can stand for a huge
    // tree: their count is bounded here, and complexity.ts bounds what later passes walk.
    return {
      ok: true,
      data: loadYaml(text, { filename: sourceName, maxAliases: MAX_ALIASES, maxDepth: COMPLEXITY_LIMITS.maxDepth }),
    }
  } catch (error) {
    if (error instanceof RangeError)
      return { ok: false, failure: { reason: 'it nests too deep to parse', tooComplex: true } }
    const e = error as { reason?: string; mark?: { line: number; column: number }; message?: string }
    if (e.reason !== undefined && /exceeded max(Depth|Aliases)/.test(e.reason)) {
      return {
        ok: false,
        failure: {
          reason: e.reason.startsWith('nesting')
            ? `it nests deeper than ${COMPLEXITY_LIMITS.maxDepth} levels`
            : `it uses more than ${MAX_ALIASES} aliases`,
          tooComplex: true,
        },
      }
    }
    // The reason only: js-yaml's message embeds a source snippet, which may hold a secret.
    return {
      ok: false,
      failure: {
        reason: e.reason ?? 'the file is not well-formed YAML',
        ...(e.mark ? { line: e.mark.line + 1, column: e.mark.column + 1 } : {}),
      },
    }
  }
}
