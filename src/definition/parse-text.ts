// Parses definition text (YAML, or JSON) into plain data with js-yaml, the fast parser.
// A failure gives a reason and a 1-based line and column, never a snippet of the source.
import { load } from 'js-yaml'

export interface ParseFailure {
  reason: string
  line?: number
  column?: number
}

export type ParsedText = { ok: true; data: unknown } | { ok: false; failure: ParseFailure }

export function parseDefinitionText(text: string, sourceName: string): ParsedText {
  if (text.trim() === '') return { ok: false, failure: { reason: 'the file is empty', line: 1, column: 1 } }
  if (sourceName.endsWith('.json') || text.trimStart().startsWith('{')) {
    try {
      return { ok: true, data: JSON.parse(text) as unknown }
    } catch {
      // Fall through: js-yaml reads JSON too and says where it breaks.
    }
  }
  try {
    // Aliases are bounded so a hostile file cannot make later passes walk an exponential tree.
    return { ok: true, data: load(text, { filename: sourceName, maxAliases: 1000 }) }
  } catch (error) {
    const e = error as { reason?: string; mark?: { line: number; column: number }; message?: string }
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
