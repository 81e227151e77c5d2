// Hostile YAML is refused before anything walks it: a file over the size limit, nesting past the
// depth limit, or more values than a fleet has (an alias bomb shares one node many times) is DEFINITION_TOO_COMPLEX.

export interface ComplexityLimits {
  /** Characters of definition text; a 5,000-node fleet is about 2 MiB. */
  maxChars: number
  /** Nesting of mappings and sequences; a definition needs about 6. */
  maxDepth: number
  /** Values reached when aliases are followed; a 5,000-node fleet reaches about 250,000. */
  maxValues: number
}

export const COMPLEXITY_LIMITS: ComplexityLimits = { maxChars: 16 * 1024 * 1024, maxDepth: 64, maxValues: 2_000_000 }

/**
 * Why the parsed data is too complex, or undefined. Counts every value reached, so shared (aliased)
 * nodes count each time: the walk stops at the budget, which bounds its time whatever the expansion.
 */
export function complexityProblem(data: unknown, limits: ComplexityLimits = COMPLEXITY_LIMITS): string | undefined {
  let budget = limits.maxValues
  // Two stacks side by side rather than a [value, depth] pair per value: this walk meets every value.
  const stack: unknown[] = [data]
  const depths: number[] = [1]
  while (stack.length > 0) {
    const value = stack.pop()
    const depth = depths.pop()!
    if (--budget < 0)
      return `it expands to more than ${limits.maxValues} values (aliases are followed; an alias bomb ends here)`
    if (value === null || typeof value !== 'object') continue
    if (depth > limits.maxDepth) return `it nests deeper than ${limits.maxDepth} levels`
    const children = Array.isArray(value) ? value : Object.values(value)
    // A sequence of a million aliases is refused without pushing a million entries first.
    if (children.length > budget)
      return `it expands to more than ${limits.maxValues} values (aliases are followed; an alias bomb ends here)`
    // An index loop: this runs cold on every value, where for...of's iterator protocol costs most.
    for (let i = 0; i < children.length; i++) {
      stack.push(children[i])
      depths.push(depth + 1)
    }
  }
  return undefined
}

export function sizeProblem(chars: number, limits: ComplexityLimits = COMPLEXITY_LIMITS): string | undefined {
  return chars > limits.maxChars ? `it is larger than ${limits.maxChars / 1024 / 1024} MiB` : undefined
}
