// loadDefinition: read fleet.yaml (or JSON) from disk and return the validated Definition,
// or throw DEFINITION_MISSING / DEFINITION_UNREADABLE / DEFINITION_INVALID with every error.
import { readFile } from 'node:fs/promises'

import { FleetkitError } from '../checks/fleetkit-error.js'
import type { HostPolicy } from './host-policy.js'
import type { Definition, DefinitionError } from './types.js'
import { validateDefinitionText } from './validate-text.js'

export { validateDefinitionText, type DefinitionTextResult, type ValidateDefinitionOptions } from './validate-text.js'

export interface LoadDefinitionOptions {
  allowDocumentationRanges?: boolean
  policy?: HostPolicy
}

export async function loadDefinition(path: string, options: LoadDefinitionOptions = {}): Promise<Definition> {
  const text = await readDefinitionFile(path)
  const { definition, errors } = validateDefinitionText(text, path, options)
  if (errors.length > 0 || !definition) throw definitionErrorsToFleetkitError(path, errors)
  return definition
}

export async function readDefinitionFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') {
      throw new FleetkitError('DEFINITION_MISSING', `no fleet definition at ${path}`, {
        actions: ['fleetkit validate --definition PATH (or set FLEETKIT_DEFINITION)'],
        data: { path },
        cause: error,
      })
    }
    throw new FleetkitError('DEFINITION_UNREADABLE', `cannot read the fleet definition ${path} (${code ?? 'error'})`, { data: { path }, cause: error })
  }
}

/** One line per error: `CODE /pointer (line:col): message`. */
export function formatDefinitionError(e: DefinitionError): string {
  const position = e.line === undefined ? '' : ` (${e.line}:${e.column ?? 1})`
  return `${e.code} ${e.path === '' ? '/' : e.path}${position}: ${e.message}`
}

/** The error a caller throws for a definition with errors: UNREADABLE when it did not parse, else INVALID. */
export function definitionErrorsToFleetkitError(path: string, errors: DefinitionError[]): FleetkitError {
  const unreadable = errors.find((e) => e.code === 'DEFINITION_UNREADABLE')
  const detailLines = errors.map(formatDefinitionError)
  if (unreadable) {
    return new FleetkitError('DEFINITION_UNREADABLE', `${path} is not well-formed: ${unreadable.message}`, {
      actions: [`fix the syntax at line ${unreadable.line ?? 1}, column ${unreadable.column ?? 1} of ${path}`],
      data: { path, line: unreadable.line ?? null, column: unreadable.column ?? null, errors },
      detailLines,
    })
  }
  return new FleetkitError('DEFINITION_INVALID', `${path} has ${errors.length} error${errors.length === 1 ? '' : 's'}`, {
    actions: [`fix each error listed (data.errors under --json), then run: fleetkit validate --definition ${path}`],
    data: { path, errors },
    detailLines,
  })
}
