// Keeps files that hold a secret (seeds, private keys) out of Git: a path the operator chose inside
// a work tree that does not ignore it is refused before anything is written, unless forced.
import { execFile } from 'node:child_process'
import { stat } from 'node:fs/promises'
import { dirname, relative, resolve } from 'node:path'

import { FleetkitError } from '../checks/fleetkit-error.js'

/** How one `git` ran: its exit status and stdout; undefined when git is not installed. */
export type GitRunner = (args: readonly string[]) => Promise<{ exitCode: number; stdout: string } | undefined>

const GIT_TIMEOUT_MS = 10_000

/** Runs `git ARGS` as a child process (execFile, no shell); a non-zero exit is a result, not a throw. */
const runGit: GitRunner = (args) =>
  new Promise((done) => {
    execFile('git', [...args], { timeout: GIT_TIMEOUT_MS, windowsHide: true }, (error, stdout) => {
      if (!error) return done({ exitCode: 0, stdout })
      const code = (error as NodeJS.ErrnoException).code
      // Not installed (or not runnable): there is no Git to keep the file out of.
      if (code === 'ENOENT' || code === 'EACCES') return done(undefined)
      done({ exitCode: typeof code === 'number' ? code : -1, stdout })
    })
  })

/** The nearest directory of `path` that exists: git needs one to start from (-C). */
async function existingDirectoryOf(path: string): Promise<string> {
  let dir = dirname(path)
  for (;;) {
    try {
      if ((await stat(dir)).isDirectory()) return dir
    } catch {
      // not there yet: its parent
    }
    const parent = dirname(dir)
    if (parent === dir) return dir
    dir = parent
  }
}

/**
 * The Git work tree that would pick `path` up (inside it and not ignored), or undefined: outside
 * any work tree, ignored (.gitignore, .git/info/exclude, the global excludes), or git not installed.
 * A tracked file is never "ignored" (`git check-ignore` skips tracked paths), so it counts as exposed.
 */
export async function gitWorkTreeExposing(path: string, git: GitRunner = runGit): Promise<string | undefined> {
  const absolute = resolve(path)
  const dir = await existingDirectoryOf(absolute)
  const inside = await git(['-C', dir, 'rev-parse', '--is-inside-work-tree', '--show-toplevel'])
  if (!inside || inside.exitCode !== 0) return undefined
  const [isInside, top] = inside.stdout.split('\n')
  if (isInside?.trim() !== 'true') return undefined
  const ignored = await git(['-C', dir, 'check-ignore', '-q', '--', relative(dir, absolute)])
  // 0: ignored; 1: not ignored; anything else (git could not tell): treated as not ignored.
  if (ignored?.exitCode === 0) return undefined
  return top?.trim() || dir
}

export interface SecretOutputCheck {
  /** The file about to be written. */
  path: string
  /** What it holds, for the message: "the agent seed of web-1", "the release signing key". */
  what: string
  /** The first action: the command that writes it outside any repository. */
  outside: string
  /** The command that wrote it, re-run with --force in the actions. */
  retry: string
  /** --force: write it there anyway. */
  force: boolean
  git?: GitRunner
}

/**
 * Refuses (SECRET_OUTPUT_IN_GIT) a secret-bearing file inside a Git work tree that does not ignore
 * it, where one `git add -A` would publish it. Called before anything is written or stored.
 */
export async function assertSecretOutsideGit(check: SecretOutputCheck): Promise<void> {
  if (check.force) return
  const path = resolve(check.path)
  const workTree = await gitWorkTreeExposing(path, check.git)
  if (workTree === undefined) return
  const inTree = relative(workTree, path)
  throw new FleetkitError(
    'SECRET_OUTPUT_IN_GIT',
    `${path} is inside the Git work tree ${workTree}, which does not ignore it: ${check.what} holds a secret and must not reach a repository; nothing was written (--force writes it there anyway)`,
    {
      actions: [
        check.outside,
        `or ignore it first: echo '/${inTree}' >> ${workTree}/.gitignore`,
        `or ${check.retry} --force   (write it there anyway)`,
      ],
      data: { path, workTree },
    },
  )
}
