// The first duplicate key of a JSON text, which JSON.parse accepts (the last one wins). A definition in YAML
// with a duplicate key is refused (js-yaml: "duplicated mapping key"); in JSON it must be too, or a reviewer
// reads `"publicSsh": false` while the later `"publicSsh": true` is what applies.

export interface DuplicateKey {
  key: string
  /** 1-based, of the second occurrence's opening quote. */
  line: number
  column: number
}

interface Frame {
  /** The keys seen so far, for an object; undefined for an array. */
  keys: Set<string> | undefined
  /** The next string in this object is a key (after `{` or `,`), not a value. */
  expectKey: boolean
}

/**
 * The first key that appears twice in one object of TEXT, which must be JSON that JSON.parse took. One pass with
 * an explicit stack: linear in the text, whatever its nesting. Keys compare as JSON.parse decodes them, so
 * `"\u0070ublicSsh"` is `"publicSsh"`.
 */
export function firstDuplicateKey(text: string): DuplicateKey | undefined {
  const stack: Frame[] = []
  for (let at = 0; at < text.length; at++) {
    const char = text.charCodeAt(at)
    if (char === 0x22 /* " */) {
      let end = at + 1
      while (text.charCodeAt(end) !== 0x22) end += text.charCodeAt(end) === 0x5c /* \ */ ? 2 : 1
      const top = stack.at(-1)
      if (top?.keys !== undefined && top.expectKey) {
        const raw = text.slice(at, end + 1)
        const key = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1)
        if (top.keys.has(key)) return { key, ...lineAndColumn(text, at) }
        top.keys.add(key)
        top.expectKey = false
      }
      at = end
    } else if (char === 0x7b /* { */) stack.push({ keys: new Set(), expectKey: true })
    else if (char === 0x5b /* [ */) stack.push({ keys: undefined, expectKey: false })
    else if (char === 0x7d /* } */ || char === 0x5d /* ] */) stack.pop()
    else if (char === 0x2c /* , */) {
      const top = stack.at(-1)
      if (top?.keys !== undefined) top.expectKey = true
    }
  }
  return undefined
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1
  let lineStart = 0
  for (let at = text.indexOf('\n'); at !== -1 && at < offset; at = text.indexOf('\n', at + 1)) {
    line++
    lineStart = at + 1
  }
  return { line, column: offset - lineStart + 1 }
}
