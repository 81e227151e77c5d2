// A fast reader for the block-style YAML that fleet definitions are written in: nested block mappings
// and sequences, plain scalars on one line, quoted scalars without escapes, one-line flow collections
// of such scalars, comments. It builds the objects directly, about three times faster than js-yaml in a
// fresh process (js-yaml 5 builds an event stream first; on a 5,000-node definition its parse was the
// largest part of a cold `fleetkit validate`).
//
// It is a fast path, not a second YAML parser: anything outside that subset, and anything that might
// mean something else (an anchor, a tag, a nested or multi-line flow collection, a block scalar, a
// number that is not a plain decimal, a key that is not a plain word, a duplicate key, an odd
// indentation, a tab, a control character) makes it give up, and js-yaml reads the text as before: its result and its
// errors are the ones an operator sees. What it does accept, it must read exactly as js-yaml does
// (YAML 1.2's core schema); test/unit/definition/block-yaml.test.ts holds it to that against js-yaml
// on the shipped examples and on generated and mutated documents.

/** Thrown inside the reader to give up; caught at the top. One instance: giving up costs no stack. */
const OUTSIDE_SUBSET = new Error('outside the block YAML subset')

/**
 * Deeper than any definition nests: the reader gives up past it (js-yaml then applies its own limit,
 * complexity.ts its own), so its recursion is bounded whatever the input.
 */
const MAX_FAST_DEPTH = 32

/**
 * Printable characters that need no escaping in YAML and no normalising: no tab, no carriage return, no C0
 * or C1 control, no lone surrogate, no byte order mark. A text with any other character is left to js-yaml.
 */
const PLAIN_TEXT = /^[\n\x20-\x7e\u00a0-\ud7ff\ue000-\ufefe\uff00-\ufffd]*$/

const DECIMAL_INT = /^[-+]?[0-9]+$/
const DECIMAL_FRACTION = /^[-+]?[0-9]+\.[0-9]+$/
/** Every other number the core schema knows (exponents, octal, hex, infinities, NaN): given up on. */
const OTHER_NUMBER =
  /^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|0o[0-7]+|0x[0-9a-fA-F]+|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/
/** Up to 15 characters a decimal is exact in a double, as js-yaml's own conversion gives it. */
const MAX_DECIMAL_LENGTH = 15

/** The characters that start something other than a plain scalar in block context. */
const INDICATOR = new Set(['[', ']', '{', '}', ',', '#', '&', '*', '!', '|', '>', '%', '@', '`'])

/**
 * The lines that hold something, as offsets into the text (no string per line: a 5,000-node definition
 * has about 60,000): where each line's content starts and ends (trailing spaces dropped), and its
 * indentation. Comment lines and blank lines are left out.
 */
interface Lines {
  text: string
  indents: number[]
  starts: number[]
  ends: number[]
  /** The next line to read. */
  at: number
}

/**
 * The value of a fleet definition written in block-style YAML, read without js-yaml; undefined when the
 * text is outside the subset this reader takes (then js-yaml must read it).
 */
export function readBlockYaml(text: string): { value: unknown } | undefined {
  if (!PLAIN_TEXT.test(text)) return undefined
  const lines = significantLines(text)
  if (lines === undefined || lines.starts.length === 0 || lines.indents[0] !== 0) return undefined
  try {
    const value = readNode(lines, 0, 1)
    return lines.at === lines.starts.length ? { value } : undefined
  } catch (error) {
    if (error === OUTSIDE_SUBSET) return undefined
    throw error
  }
}

function significantLines(text: string): Lines | undefined {
  const indents: number[] = []
  const starts: number[] = []
  const ends: number[] = []
  for (let lineStart = 0; lineStart <= text.length;) {
    let lineEnd = text.indexOf('\n', lineStart)
    if (lineEnd < 0) lineEnd = text.length
    let start = lineStart
    while (start < lineEnd && text.charCodeAt(start) === 32) start++
    if (start < lineEnd && text.charCodeAt(start) !== 35) {
      let end = lineEnd
      while (text.charCodeAt(end - 1) === 32) end--
      if (start === lineStart && (text.startsWith('---', start) || text.startsWith('...', start))) {
        // One document, optionally opened by a bare marker; anything else is js-yaml's to read.
        if (end - start !== 3 || text[start] !== '-' || starts.length > 0) return undefined
      } else {
        indents.push(start - lineStart)
        starts.push(start)
        ends.push(end)
      }
    }
    lineStart = lineEnd + 1
  }
  return { text, indents, starts, ends, at: 0 }
}

/** `-` alone or `- ...` at OFFSET (before END). */
function isSequenceEntry(text: string, offset: number, end: number): boolean {
  return text.charCodeAt(offset) === 45 && (offset + 1 === end || text.charCodeAt(offset + 1) === 32)
}

function entryAt(lines: Lines): boolean {
  return isSequenceEntry(lines.text, lines.starts[lines.at]!, lines.ends[lines.at]!)
}

function readNode(lines: Lines, indent: number, depth: number): unknown {
  if (depth > MAX_FAST_DEPTH) throw OUTSIDE_SUBSET
  return entryAt(lines) ? readSequence(lines, indent, depth) : readMapping(lines, indent, depth)
}

/** The value of a key or entry with nothing after it on its line: a nested block, or null. */
function readNested(lines: Lines, indent: number, depth: number, sequenceAtSameIndent: boolean): unknown {
  if (lines.at >= lines.starts.length) return null
  const next = lines.indents[lines.at]!
  if (next > indent) return readNode(lines, next, depth + 1)
  // A mapping's key may have its sequence at its own indentation (`key:` then `- item`).
  if (sequenceAtSameIndent && next === indent && entryAt(lines)) return readSequence(lines, indent, depth + 1)
  return null
}

/** A key character after the first: A-Z a-z 0-9 _ . / - */
function isKeyChar(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90) || (code >= 45 && code <= 57) || code === 95
}

/**
 * Where the key at OFFSET ends (its colon), when the line holds a plain-word key followed by `:` and a
 * space or the line's end; -1 otherwise. The first character is a letter, a digit or `_`.
 */
function keyEnd(text: string, offset: number, end: number): number {
  const first = text.charCodeAt(offset)
  if (first === 45 || first === 46 || first === 47 || !isKeyChar(first)) return -1
  let at = offset + 1
  while (at < end && isKeyChar(text.charCodeAt(at))) at++
  if (at === end || text.charCodeAt(at) !== 58) return -1
  return at + 1 === end || text.charCodeAt(at + 1) === 32 ? at : -1
}

/**
 * MAPPING[KEY] = VALUE, for a key js-yaml would set the same way: one the core schema reads as a string
 * (`true` or `1` would be that value's string there), not `__proto__` (special in an object literal), and
 * not a duplicate (an error there).
 */
function setKey(mapping: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__' || resolvePlain(key) !== key || Object.prototype.hasOwnProperty.call(mapping, key))
    throw OUTSIDE_SUBSET
  mapping[key] = value
}

/** Whether the next line is one of the block at INDENT: false at the end or a shallower line; deeper is odd. */
function inBlock(lines: Lines, indent: number): boolean {
  if (lines.at >= lines.starts.length) return false
  const lineIndent = lines.indents[lines.at]!
  if (lineIndent > indent) throw OUTSIDE_SUBSET
  return lineIndent === indent
}

function skipSpaces(text: string, at: number, end: number): number {
  while (at < end && text.charCodeAt(at) === 32) at++
  return at
}

function readMapping(lines: Lines, indent: number, depth: number): Record<string, unknown> {
  const mapping: Record<string, unknown> = {}
  const { text, starts, ends } = lines
  while (inBlock(lines, indent)) {
    const start = starts[lines.at]!
    const end = ends[lines.at]!
    const colon = keyEnd(text, start, end)
    if (colon < 0) throw OUTSIDE_SUBSET
    const key = text.slice(start, colon)
    const rest = skipSpaces(text, colon + 1, end)
    lines.at++
    if (rest === end || text.charCodeAt(rest) === 35) {
      setKey(mapping, key, readNested(lines, indent, depth, true))
    } else {
      // A more indented line after it would continue it: the loop gives up on that line.
      setKey(mapping, key, readScalar(text, rest, end))
    }
  }
  return mapping
}

function readSequence(lines: Lines, indent: number, depth: number): unknown[] {
  const sequence: unknown[] = []
  const { text, indents, starts, ends } = lines
  while (inBlock(lines, indent)) {
    const start = starts[lines.at]!
    const end = ends[lines.at]!
    // A key at the sequence's indentation ends it: it was its parent key's value (`key:` then `- item`).
    if (!isSequenceEntry(text, start, end)) break
    const rest = skipSpaces(text, start + 1, end)
    if (rest === end || text.charCodeAt(rest) === 35) {
      lines.at++
      sequence.push(readNested(lines, indent, depth, false))
    } else if (keyEnd(text, rest, end) >= 0) {
      // A mapping that starts on the entry's line: its keys sit at the column after the dash.
      const column = indent + (rest - start)
      indents[lines.at] = column
      starts[lines.at] = rest
      sequence.push(readMapping(lines, column, depth + 1))
    } else {
      lines.at++
      sequence.push(readScalar(text, rest, end))
    }
  }
  return sequence
}

/** The scalar from OFFSET to the line's END (trailing spaces already gone), or a one-line flow sequence. */
function readScalar(text: string, offset: number, end: number): unknown {
  const first = text[offset]!
  if (first === "'" || first === '"') return readQuoted(text.slice(offset, end), first)
  if (first === '[') return readFlowSequence(text.slice(offset, end))
  if (first === '{') return readFlowMapping(text.slice(offset, end))
  if (INDICATOR.has(first)) throw OUTSIDE_SUBSET
  // `- `, `? ` and `: ` open a sequence entry, a complex key and a value; `-x`, `?x`, `:x` are plain.
  if ((first === '-' || first === '?' || first === ':') && (offset + 1 === end || text[offset + 1] === ' '))
    throw OUTSIDE_SUBSET
  // The scalar ends at ` #` (a comment); `a: b: c` is a nested mapping (or an error), `a: b:` too.
  let plainEnd = end
  for (let at = offset + 1; at < end; at++) {
    if (text.charCodeAt(at) !== 32) continue
    const before = text.charCodeAt(at - 1)
    if (before === 58) throw OUTSIDE_SUBSET
    if (text.charCodeAt(at + 1) === 35) {
      plainEnd = at
      while (text.charCodeAt(plainEnd - 1) === 32) plainEnd--
      break
    }
  }
  if (text.charCodeAt(plainEnd - 1) === 58) throw OUTSIDE_SUBSET
  return resolvePlain(text.slice(offset, plainEnd))
}

/**
 * The entries of a one-line flow collection FLOW opened by its first character and closed by CLOSE, each
 * a plain or quoted scalar (or, in a mapping, `key: scalar`): `regions: [fsn1, nbg1]`,
 * `{ id: ubuntu, version: "24.04" }`. Nesting, a comment inside, a `?` and an empty entry are js-yaml's to
 * read; so is a quote that does not close before the collection does.
 */
function flowEntries(flow: string, close: string): string[] {
  const entries: string[] = []
  let entryStart = 1
  for (let at = 1; at < flow.length; at++) {
    const char = flow[at]!
    if (char === "'" || char === '"') {
      // A quote opens a scalar only at an entry's or a value's start; inside a plain scalar it is a
      // character, and such a text is js-yaml's to read.
      let before = at - 1
      while (flow[before] === ' ') before--
      const opens = '[{,'.includes(flow[before]!) || (flow[before] === ':' && before < at - 1)
      if (!opens) throw OUTSIDE_SUBSET
      // To the closing quote ('' is a quote inside single quotes); readQuoted checks the entry again.
      let end = flow.indexOf(char, at + 1)
      if (char === "'") while (end > 0 && flow[end + 1] === "'") end = flow.indexOf("'", end + 2)
      if (end < 0) throw OUTSIDE_SUBSET
      at = end
    } else if (char === ',' || char === close) {
      entries.push(flow.slice(entryStart, at).trim())
      entryStart = at + 1
      if (char === close) {
        const after = flow.slice(at + 1)
        if (after !== '' && !/^ +#/.test(after)) throw OUTSIDE_SUBSET
        // `[]` and `{}`: no entries; `[a, ]` or `[a,,b]`: given up on below.
        return entries.length === 1 && entries[0] === '' ? [] : entries
      }
    } else if ('[]{}#?'.includes(char)) {
      throw OUTSIDE_SUBSET
    }
  }
  throw OUTSIDE_SUBSET
}

/** A scalar inside a flow collection: quoted, or plain with no indicator first and no `:` (a pair, or a colon to weigh). */
function resolveFlowScalar(item: string): unknown {
  const first = item[0]
  if (first === "'" || first === '"') return readQuoted(item, first)
  if (first === undefined || INDICATOR.has(first) || item.includes(':') || /^-(?: |$)/.test(item)) throw OUTSIDE_SUBSET
  return resolvePlain(item)
}

function readFlowSequence(flow: string): unknown[] {
  return flowEntries(flow, ']').map(resolveFlowScalar)
}

function readFlowMapping(flow: string): Record<string, unknown> {
  const mapping: Record<string, unknown> = {}
  for (const entry of flowEntries(flow, '}')) {
    const colon = keyEnd(entry, 0, entry.length)
    if (colon < 0 || colon + 1 === entry.length) throw OUTSIDE_SUBSET
    setKey(mapping, entry.slice(0, colon), resolveFlowScalar(entry.slice(colon + 1).trimStart()))
  }
  return mapping
}

/** A quoted scalar that closes on its line, with nothing but a comment after it; no escapes in double quotes. */
function readQuoted(text: string, quote: "'" | '"'): string {
  let close = text.indexOf(quote, 1)
  if (quote === "'") while (close > 0 && text[close + 1] === "'") close = text.indexOf("'", close + 2)
  if (close < 0) throw OUTSIDE_SUBSET
  const after = text.slice(close + 1)
  if (after !== '' && !/^ +#/.test(after)) throw OUTSIDE_SUBSET
  const body = text.slice(1, close)
  if (quote === '"') {
    if (body.includes('\\')) throw OUTSIDE_SUBSET
    return body
  }
  return body.replaceAll("''", "'")
}

/** A plain scalar as the core schema reads it: null, a boolean, a plain decimal, or a string. */
function resolvePlain(text: string): unknown {
  switch (text) {
    case 'null':
    case 'Null':
    case 'NULL':
    case '~':
      return null
    case 'true':
    case 'True':
    case 'TRUE':
      return true
    case 'false':
    case 'False':
    case 'FALSE':
      return false
  }
  const first = text.charCodeAt(0)
  // Only text starting with a digit, a sign or a dot can be a number.
  if ((first >= 48 && first <= 57) || first === 43 || first === 45 || first === 46) {
    if (text.length <= MAX_DECIMAL_LENGTH && (DECIMAL_INT.test(text) || DECIMAL_FRACTION.test(text)))
      return Number(text)
    if (OTHER_NUMBER.test(text)) throw OUTSIDE_SUBSET
  }
  return text
}
