// The rule every role's meta/argument_specs.yml follows against its defaults/main.yml, as a pure
// function over the two parsed files, so a test can prove it on the roles and on a made-up violation.
import { isDeepStrictEqual } from 'node:util'

interface OptionSpec {
  required?: unknown
  default?: unknown
  options?: Record<string, OptionSpec>
  [key: string]: unknown
}

interface EntryPointSpec {
  options?: Record<string, OptionSpec> | null
}

/** The parsed meta/argument_specs.yml: `{argument_specs: {ENTRY_POINT: {options: {...}}}}`. */
export interface ArgumentSpecsFile {
  argument_specs?: Record<string, EntryPointSpec | null> | null
}

/**
 * What breaks the rule, one line each (empty when it holds):
 * - every option, and every suboption of a list or dict option, has a `default` or `required: true`;
 * - a top-level option's `default` equals its value in defaults/main.yml: Ansible never applies a spec's
 *   default, so the spec only documents the one in defaults/main.yml;
 * - a `required` top-level option has no value in defaults/main.yml: Ansible checks `required` against
 *   the role's variables, its defaults included, so with a value there the check can never fail;
 * - every variable of defaults/main.yml is an option of at least one entry point.
 */
export function argumentSpecViolations(
  role: string,
  specs: ArgumentSpecsFile,
  defaults: Record<string, unknown> | null,
): string[] {
  const violations: string[] = []
  const defaultValues = defaults ?? {}
  const specified = new Set<string>()
  const entryPoints = specs.argument_specs ?? {}
  if (Object.keys(entryPoints).length === 0) violations.push(`${role}: meta/argument_specs.yml has no entry point`)

  const checkOptions = (options: Record<string, OptionSpec>, where: string, topLevel: boolean) => {
    for (const [name, option] of Object.entries(options)) {
      const hasDefault = option !== null && typeof option === 'object' && 'default' in option
      const required = option?.required === true
      const path = `${where}.${name}`
      if (!hasDefault && !required) violations.push(`${path}: has neither a default nor required: true`)
      if (hasDefault && required) violations.push(`${path}: has a default and required: true`)
      if (topLevel) {
        specified.add(name)
        const inDefaults = Object.hasOwn(defaultValues, name)
        if (hasDefault && !inDefaults) {
          violations.push(`${path}: the spec's default is not in defaults/main.yml (Ansible applies only that file)`)
        } else if (hasDefault && !isDeepStrictEqual(option.default, defaultValues[name])) {
          violations.push(
            `${path}: the spec's default ${JSON.stringify(option.default)} differs from defaults/main.yml's ${JSON.stringify(defaultValues[name])}`,
          )
        }
        if (required && inDefaults) {
          violations.push(`${path}: is required but defaults/main.yml gives it a value, so required never fails`)
        }
      }
      if (option?.options) checkOptions(option.options, path, false)
    }
  }

  for (const [entryPoint, spec] of Object.entries(entryPoints)) {
    checkOptions(spec?.options ?? {}, `${role}:${entryPoint}`, true)
  }
  for (const name of Object.keys(defaultValues)) {
    if (!specified.has(name)) violations.push(`${role}: defaults/main.yml's ${name} is no option of any entry point`)
  }
  return violations
}
