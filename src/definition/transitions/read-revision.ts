// Reads the definition file as it was at a Git revision: `git show REF:relpath` run in the
// file's own repository. A bad ref, no repository or no such file is DEFINITION_REVISION_UNKNOWN.
import { execFile } from 'node:child_process'
import { realpath } from 'node:fs/promises'
import { basename, dirname, relative, sep } from 'node:path'
import { promisify } from 'node:util'

import { FleetkitError } from '../../checks/fleetkit-error.js'

const run = promisify(execFile)

export async function readDefinitionAtRevision(path: string, ref: string): Promise<string> {
  // A ref that starts with '-' would be read by git as an option.
  if (ref === '' || ref.startsWith('-') || /[\s:]/.test(ref)) {
    throw unknownRevision(path, ref, 'not a Git revision name')
  }
  let file: string
  try {
    file = await realpath(path)
  } catch (error) {
    throw unknownRevision(path, ref, 'the file does not exist', error)
  }
  const dir = dirname(file)
  let top: string
  try {
    top = (await run('git', ['-C', dir, 'rev-parse', '--show-toplevel'])).stdout.trim()
  } catch (error) {
    throw unknownRevision(path, ref, `${basename(file)} is not in a Git repository`, error)
  }
  const rel = relative(await realpath(top), file)
    .split(sep)
    .join('/')
  try {
    const { stdout } = await run('git', ['-C', top, 'show', `${ref}:${rel}`], { maxBuffer: 256 * 1024 * 1024 })
    return stdout
  } catch (error) {
    const stderr =
      String((error as { stderr?: string }).stderr ?? '')
        .split('\n')
        .find((l) => l.trim() !== '')
        ?.replace(/^fatal:\s*/, '') ?? 'git show failed'
    throw unknownRevision(path, ref, stderr, error)
  }
}

function unknownRevision(path: string, ref: string, why: string, cause?: unknown): FleetkitError {
  return new FleetkitError(
    'DEFINITION_REVISION_UNKNOWN',
    `cannot read ${path} at revision ${JSON.stringify(ref)}: ${why}`,
    {
      actions: ['git log --oneline -- ' + path, 'fleetkit validate --definition ' + path + ' --since REF'],
      data: { path, ref },
      cause,
    },
  )
}
