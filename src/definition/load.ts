// loadDefinition: read fleet.yaml (or JSON) from disk and return the validated Definition,
// or throw DEFINITION_MISSING / DEFINITION_UNREADABLE / DEFINITION_INVALID with every error.
import { type FileHandle, open } from 'node:fs/promises'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { COMPLEXITY_LIMITS, sizeProblem } from './complexity.js'
import type { HostPolicy } from './host-policy.js'
import type { Definition, DefinitionError } from './types.js'
import { validateDefinitionText } from './validate-text.js'

export { validateDefinitionText } from './validate-text.js'

export interface LoadDefinitionOptions {
  policy?: HostPolicy
}

export async function loadDefinition(path: string, options: LoadDefinitionOptions = {}): Promise<Definition> {
  const text = await readDefinitionFile(path)
  const { definition, errors } = validateDefinitionText(text, path, options)
  if (errors.length > 0 || !definition) throw definitionErrorsToFleetkitError(path, errors)
  return definition
}

export async function readDefinitionFile(path: string): Promise<string> {
  let file
  try {
    file = await open(path, 'r')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') {
      throw new FleetkitError('DEFINITION_MISSING', `no fleet definition at ${path}`, {
        actions: ['fleetkit validate --definition PATH (or set FLEETKIT_DEFINITION)'],
        data: { path },
        cause: error,
      })
    }
    throw new FleetkitError('DEFINITION_UNREADABLE', `cannot read the fleet definition ${path} (${code ?? 'error'})`, {
      data: { path },
      cause: error,
    })
  }
  try {
    // A file far over the limit is refused by its size, before a byte of it is read.
    const tooLarge = sizeProblem((await file.stat()).size)
    if (tooLarge !== undefined) throw tooComplexError(path, tooLarge)
    return await readBounded(file, path)
  } catch (error) {
    if (error instanceof FleetkitError) throw error
    const code = (error as NodeJS.ErrnoException).code
    throw new FleetkitError('DEFINITION_UNREADABLE', `cannot read the fleet definition ${path} (${code ?? 'error'})`, {
      data: { path },
      cause: error,
    })
  } finally {
    await file.close()
  }
}

/**
 * The file's text, read no further than one byte past the size limit: a pipe (`--definition <(...)`) or a
 * device reports no size to refuse by, and /dev/zero never ends.
 */
async function readBounded(file: FileHandle, path: string): Promise<string> {
  const limit = COMPLEXITY_LIMITS.maxChars
  const chunks: Buffer[] = []
  let total = 0
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.min(1024 * 1024, limit + 1 - total))
    const { bytesRead } = await file.read(chunk, 0, chunk.length, null)
    if (bytesRead === 0) break
    chunks.push(chunk.subarray(0, bytesRead))
    total += bytesRead
    const tooLarge = sizeProblem(total)
    if (tooLarge !== undefined) throw tooComplexError(path, tooLarge)
  }
  return Buffer.concat(chunks, total).toString('utf8')
}

function tooComplexError(path: string, reason: string, errors?: DefinitionError[]): FleetkitError {
  const limits = `at most ${COMPLEXITY_LIMITS.maxChars / 1024 / 1024} MiB, ${COMPLEXITY_LIMITS.maxDepth} levels deep and ${COMPLEXITY_LIMITS.maxValues} values with aliases followed`
  return new FleetkitError(
    'DEFINITION_TOO_COMPLEX',
    `${path} is refused unread: ${reason.replace(/^the file is refused unread: /, '')}`,
    {
      actions: [
        `make ${path} an ordinary fleet definition (${limits}); use no YAML anchors to build large structures`,
        `fleetkit validate --definition ${path}`,
      ],
      data: { path, ...(errors ? { errors } : {}) },
    },
  )
}

/** Characters of a pointer on a human line; data.errors keeps it whole. */
const SHOWN_POINTER_MAX = 200

/**
 * One line per error: `CODE /pointer (line:col): message`. A pointer is built from the file's keys, so a long key
 * is cut here; control characters in it are escaped where the line is printed (cli/error-output.ts).
 */
function formatDefinitionError(e: DefinitionError): string {
  const position = e.line === undefined ? '' : ` (${e.line}:${e.column ?? 1})`
  const path = e.path.length > SHOWN_POINTER_MAX ? `${e.path.slice(0, SHOWN_POINTER_MAX - 3)}...` : e.path
  return `${e.code} ${path === '' ? '/' : path}${position}: ${e.message}`
}

/** The error a caller throws for a definition with errors: UNREADABLE when it did not parse, else INVALID. */
export function definitionErrorsToFleetkitError(path: string, errors: DefinitionError[]): FleetkitError {
  const complex = errors.find((e) => e.code === 'DEFINITION_TOO_COMPLEX')
  if (complex) return tooComplexError(path, complex.message, errors)
  const unreadable = errors.find((e) => e.code === 'DEFINITION_UNREADABLE')
  const detailLines = errors.map(formatDefinitionError)
  if (unreadable) {
    return new FleetkitError('DEFINITION_UNREADABLE', `${path} is not well-formed: ${unreadable.message}`, {
      actions: [`fix the syntax at line ${unreadable.line ?? 1}, column ${unreadable.column ?? 1} of ${path}`],
      data: { path, line: unreadable.line ?? null, column: unreadable.column ?? null, errors },
      detailLines,
    })
  }
  return new FleetkitError(
    'DEFINITION_INVALID',
    `${path} has ${errors.length} error${errors.length === 1 ? '' : 's'}`,
    {
      actions: [`fix each error listed (data.errors under --json), then run: fleetkit validate --definition ${path}`],
      data: { path, errors },
      detailLines,
    },
  )
}
