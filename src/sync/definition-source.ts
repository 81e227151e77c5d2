// The definition a sync applies and the revision it records: with --ref, the file at that exact
// commit of the fleet repository; without, the file on disk, whose revision is HEAD only when it is committed unchanged.
import { execFile } from 'node:child_process'
import { realpath } from 'node:fs/promises'
import { dirname } from 'node:path'
import { promisify } from 'node:util'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { assertNotExample } from '../definition/example-guard.js'
import { definitionErrorsToFleetkitError, readDefinitionFile, validateDefinitionText } from '../definition/load.js'
import { readDefinitionAtRevision } from '../definition/transitions/read-revision.js'
import type { Definition } from '../definition/types.js'

const run = promisify(execFile)

const FULL_SHA = /^[0-9a-f]{40}$/

export interface DefinitionSource {
  definition: Definition
  text: string
  /** The commit the text is at; null when the file on disk differs from HEAD or is not in Git. */
  revision: string | null
}

async function git(dir: string, args: string[]): Promise<string | undefined> {
  try {
    return (await run('git', ['-C', dir, ...args])).stdout.trim()
  } catch {
    return undefined
  }
}

function assertFullSha(ref: string): void {
  if (!FULL_SHA.test(ref)) {
    throw new FleetkitError(
      'SYNC_REF_INVALID',
      `--ref ${JSON.stringify(ref.slice(0, 80))} is not a full commit SHA (40 lowercase hex digits); branch names and short SHAs move, so they are refused`,
      {
        actions: ['git rev-parse HEAD (in the fleet repository)', 'fleetkit sync --ref SHA'],
        data: { ref: ref.slice(0, 80) },
      },
    )
  }
}

export async function readDefinitionSource(
  path: string,
  ref: string | undefined,
  command: string,
): Promise<DefinitionSource> {
  let text: string
  let revision: string | null
  if (ref !== undefined) {
    assertFullSha(ref)
    const dir = dirname(await realpath(path).catch(() => path))
    if ((await git(dir, ['cat-file', '-t', ref])) !== 'commit') {
      throw new FleetkitError('SYNC_REF_INVALID', `--ref ${ref} is not a commit of the repository that holds ${path}`, {
        actions: [`git -C ${dir} log --oneline -5`, 'git fetch (if the commit is on a remote)'],
        data: { ref },
      })
    }
    text = await readDefinitionAtRevision(path, ref)
    revision = ref
  } else {
    text = await readDefinitionFile(path)
    revision = await committedRevision(path, text)
  }
  const source = ref === undefined ? path : `${path}@${ref.slice(0, 12)}`
  const { definition, errors } = validateDefinitionText(text, source)
  if (errors.length > 0 || !definition) throw definitionErrorsToFleetkitError(source, errors)
  assertNotExample(definition, command)
  return { definition, text, revision }
}

/** HEAD when the file at HEAD is exactly `text`; otherwise the file is not a revision yet. */
async function committedRevision(path: string, text: string): Promise<string | null> {
  const dir = dirname(await realpath(path).catch(() => path))
  const head = await git(dir, ['rev-parse', 'HEAD'])
  if (!head || !FULL_SHA.test(head)) return null
  try {
    return (await readDefinitionAtRevision(path, head)) === text ? head : null
  } catch {
    return null
  }
}
