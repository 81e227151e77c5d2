// Hetzner Cloud's label selectors (`k=v`, `k==v`, `k!=v`, `k`, `!k`, `k in (a,b)`, `k notin (a,b)`,
// comma for AND), parsed and matched: the stub answers `label_selector` queries with it.

type Requirement =
  | { op: 'eq' | 'ne'; key: string; value: string }
  | { op: 'exists' | 'absent'; key: string }
  | { op: 'in' | 'notin'; key: string; values: string[] }

const KEY = String.raw`[A-Za-z0-9][A-Za-z0-9._/-]*`
const VALUE = String.raw`[A-Za-z0-9._-]*`
const SET = new RegExp(String.raw`^(${KEY})\s+(in|notin)\s+\(([^)]*)\)$`)
const EQUALITY = new RegExp(String.raw`^(${KEY})\s*(==|=|!=)\s*(${VALUE})$`)
const EXISTS = new RegExp(String.raw`^(!?)\s*(${KEY})$`)

/** The requirements of a selector, or undefined when it does not parse (the API answers invalid_input). */
export function parseLabelSelector(selector: string): Requirement[] | undefined {
  const requirements: Requirement[] = []
  for (const part of splitTopLevel(selector)) {
    const text = part.trim()
    const set = SET.exec(text)
    const equality = EQUALITY.exec(text)
    const exists = EXISTS.exec(text)
    if (set) {
      const values = set[3]!.split(',').map((value) => value.trim())
      requirements.push({ op: set[2] === 'in' ? 'in' : 'notin', key: set[1]!, values })
    } else if (equality) {
      requirements.push({ op: equality[2] === '!=' ? 'ne' : 'eq', key: equality[1]!, value: equality[3]! })
    } else if (exists) {
      requirements.push({ op: exists[1] === '!' ? 'absent' : 'exists', key: exists[2]! })
    } else {
      return undefined
    }
  }
  return requirements
}

export function matchesLabels(requirements: readonly Requirement[], labels: Record<string, string>): boolean {
  return requirements.every((r) => {
    const has = Object.hasOwn(labels, r.key)
    switch (r.op) {
      case 'eq':
        return has && labels[r.key] === r.value
      case 'ne':
        return !has || labels[r.key] !== r.value
      case 'exists':
        return has
      case 'absent':
        return !has
      case 'in':
        return has && r.values.includes(labels[r.key]!)
      case 'notin':
        return !has || !r.values.includes(labels[r.key]!)
    }
  })
}

/** Splits on commas outside parentheses: `a=1,b in (x,y)` is two requirements. */
function splitTopLevel(selector: string): string[] {
  const parts: string[] = []
  let depth = 0
  let current = ''
  for (const char of selector) {
    if (char === '(') depth++
    if (char === ')') depth--
    if (char === ',' && depth === 0) {
      parts.push(current)
      current = ''
    } else {
      current += char
    }
  }
  parts.push(current)
  return parts
}
