// The state directory and <stateDir>/postgres: created private, and (as root) passable by the
// `postgres` user, which must reach its data directory through every parent.
import { chmod, stat } from 'node:fs/promises'
import { dirname } from 'node:path'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import {
  describeUntrusted,
  findUntrustedDirectory,
  fleetkitTrustRules,
  type TrustRules,
} from '../../fs/trusted-directory.js'
import type { UnixIds } from '../postgres-binaries.js'
import type { EmbeddedServerPaths } from './paths.js'
import { makeDirectories } from '../../fs/make-directories.js'

/**
 * Refuses a state directory (or its `postgres/`, or a directory above them) that a user other than this
 * one, root or the gateway's account owns, or that others may write: its owner could plant the database
 * password that fleetkit then trusts, run the server as themselves and so be its superuser, or swap the
 * PKI kept beside it (src/fs/trusted-directory.ts). Checked before anything there is read or made.
 */
export async function assertStateTrusted(
  paths: EmbeddedServerPaths,
  rules: TrustRules = fleetkitTrustRules(),
): Promise<void> {
  for (const dir of [paths.stateDir, paths.root]) {
    const problem = await findUntrustedDirectory(dir, rules)
    if (!problem) continue
    const { why, fix } = describeUntrusted(problem, dir)
    throw new FleetkitError(
      'STATE_DIR_UNUSABLE',
      `refusing the state directory ${paths.stateDir}: ${why}, who could plant the database password or swap the PKI there`,
      {
        actions: [fix, 'or set FLEETKIT_STATE_DIR (or --state-dir) to a directory of your own'],
        data: {
          stateDir: paths.stateDir,
          path: problem.path,
          reason: problem.kind,
          uid: problem.uid,
          mode: problem.mode,
        },
      },
    )
  }
}

export async function prepareDirectories(
  paths: EmbeddedServerPaths,
  runAs: UnixIds | undefined,
  trust?: TrustRules,
): Promise<void> {
  await assertStateTrusted(paths, trust)
  // initdb and the server take the data directory on their command lines and in their files, one path a line.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(paths.root))
    throw new FleetkitError(
      'STATE_DIR_UNUSABLE',
      `the state directory ${JSON.stringify(paths.stateDir)} holds a control character (a newline?) in its path; PostgreSQL cannot use it`,
      {
        actions: ['set FLEETKIT_STATE_DIR (or --state-dir) to a path of printable characters'],
        data: { stateDir: paths.stateDir },
      },
    )
  try {
    await makeDirectories(paths.stateDir, 0o700)
    await makeDirectories(paths.root, 0o700)
    if (runAs) {
      // The postgres user must pass through (not list) fleetkit's own directories to reach its data.
      for (const dir of [paths.stateDir, paths.root]) {
        const info = await stat(dir)
        if (info.uid === 0 && (info.mode & 0o001) === 0) await chmod(dir, (info.mode & 0o7777) | 0o011)
      }
      await checkReachable(paths.root, runAs)
    }
  } catch (error) {
    if (error instanceof FleetkitError) throw error
    throw new FleetkitError(
      'STATE_DIR_UNUSABLE',
      `cannot use the state directory ${paths.stateDir}: ${(error as { code?: string }).code ?? 'error'}`,
      {
        actions: [
          'set FLEETKIT_STATE_DIR to a directory this user can write',
          'or set DATABASE_URL to use an existing PostgreSQL server',
        ],
        data: { stateDir: paths.stateDir, errno: (error as { code?: string }).code },
        cause: error,
      },
    )
  }
}

/** Every directory above `dir` must let the postgres user through, or it cannot open its data. */
async function checkReachable(dir: string, runAs: UnixIds): Promise<void> {
  for (let current = dir; ; current = dirname(current)) {
    const info = await stat(current)
    const bit = info.uid === runAs.uid ? 0o100 : info.gid === runAs.gid ? 0o010 : 0o001
    if ((info.mode & bit) === 0) {
      throw new FleetkitError(
        'STATE_DIR_UNUSABLE',
        `the postgres user cannot reach ${dir}: ${current} is mode ${(info.mode & 0o777).toString(8)}`,
        {
          actions: [
            'set FLEETKIT_STATE_DIR to a directory outside it, for example /var/lib/fleetkit',
            'or set DATABASE_URL to use an existing PostgreSQL server',
          ],
          data: { stateDir: dirname(dir), blockedBy: current, mode: (info.mode & 0o777).toString(8) },
        },
      )
    }
    if (dirname(current) === current) return
  }
}
