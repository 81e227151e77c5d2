// Errors that say the environment failed, not fleetkit: PostgreSQL's disk is full or the server failed
// a statement for a reason of its own, the connection to it broke mid-command, a local filesystem
// refused a write. toFleetkitError gives them their codes, so INTERNAL_ERROR keeps meaning a bug.
// Classified by SQLSTATE and errno, never by message text (PostgreSQL's may quote data).
import { describeSqlState, isConnectionError, isServerFailure, SQLSTATE, sqlState } from './sqlstate.js'
import type { FailureCode } from './failure-codes.js'

export interface EnvironmentFailure {
  code: FailureCode
  message: string
  actions: string[]
  data: Record<string, unknown>
}

/** errno codes of a filesystem that cannot take a write: full, over quota, read-only, failing. */
const FILESYSTEM_ERRNOS: Record<string, string> = {
  ENOSPC: 'no space left on the device',
  EDQUOT: 'over the disk quota',
  EROFS: 'the filesystem is read-only',
  EIO: 'an I/O error',
}

/**
 * errno codes of a directory that cannot be made where the operator asked for it (an --out, a state directory):
 * the path is wrong, not the disk. Only for mkdir: ENOENT or EEXIST of another call means something else.
 */
const DIRECTORY_ERRNOS: Record<string, string> = {
  ENOTDIR: 'a part of the path is a file, not a directory',
  EEXIST: 'a file is in its place',
  ENOENT: 'this filesystem takes no new directories there, as /proc and /sys do not',
}

/** The coded failure an environment error stands for, or undefined for any other error. */
export function environmentFailure(error: Error): EnvironmentFailure | undefined {
  const state = sqlState(error)
  if (state !== undefined) return databaseFailure(state, error)
  const e = error as NodeJS.ErrnoException & { dest?: string }
  const denied = permissionFailure(e)
  if (denied) return denied
  const misplaced = directoryFailure(e)
  if (misplaced) return misplaced
  const what = e.code === undefined ? undefined : FILESYSTEM_ERRNOS[e.code]
  // A system call's error (it names one); another library's error that reuses an errno code is not ours to name.
  if (what === undefined || typeof e.syscall !== 'string') return undefined
  // A call with two paths (copyFile, rename, link) failing to write failed on its destination, not its source.
  const path = e.dest ?? e.path
  const shown = path === undefined ? `a file (${e.syscall})` : path
  return {
    code: 'FILESYSTEM_WRITE_FAILED',
    message: `could not write ${shown} (${e.code}: ${what}); the command stopped there`,
    actions: [
      e.code === 'EROFS'
        ? `remount the filesystem holding ${shown} read-write`
        : `free space on the filesystem holding ${shown} (df -h)`,
      'then run the command again',
    ],
    data: { errno: e.code, syscall: e.syscall, ...(path === undefined ? {} : { path }) },
  }
}

function directoryFailure(e: NodeJS.ErrnoException): EnvironmentFailure | undefined {
  // A temporary directory (mkdtemp, under TMPDIR) whose parent is missing or a file: TMPDIR names no directory.
  if (e.syscall === 'mkdtemp' && (e.code === 'ENOENT' || e.code === 'ENOTDIR') && e.path !== undefined) {
    // The directory the template names (this module stays free of node: imports: the agent bundle carries it).
    const parent = e.path.slice(0, e.path.lastIndexOf('/')) || '/'
    return {
      code: 'FILESYSTEM_WRITE_FAILED',
      message: `could not make a temporary directory in ${parent} (${e.code}: it is not a directory); the command stopped there`,
      actions: [
        `export TMPDIR=/tmp   (TMPDIR names ${parent}), or another directory this user can write`,
        'then run the command again',
      ],
      data: { errno: e.code, syscall: e.syscall, path: e.path },
    }
  }
  const what = e.code === undefined ? undefined : DIRECTORY_ERRNOS[e.code]
  if (what === undefined || e.syscall !== 'mkdir' || e.path === undefined) return undefined
  return {
    code: 'FILESYSTEM_WRITE_FAILED',
    message: `could not make the directory ${e.path} (${e.code}: ${what}); the command stopped there`,
    actions: [
      'name a directory under one this user can write (the option or variable that gave this path)',
      'then run the command again',
    ],
    data: { errno: e.code, syscall: e.syscall, path: e.path },
  }
}

/**
 * A file this user may not open, create or remove: most often a state directory shared with the gateway
 * service (`fleetkit gateway install`), whose CA keys and server files only root and the service's
 * account may touch. Never a bug: the command must run as someone who may.
 */
function permissionFailure(e: NodeJS.ErrnoException & { dest?: string }): EnvironmentFailure | undefined {
  if ((e.code !== 'EACCES' && e.code !== 'EPERM') || typeof e.syscall !== 'string') return undefined
  const path = e.path ?? e.dest
  const shown = path === undefined ? `a file (${e.syscall})` : path
  return {
    code: 'FILESYSTEM_PERMISSION_DENIED',
    message: `this user may not ${e.syscall} ${shown} (${e.code}); the command stopped there`,
    actions: [
      'run the command as a user who may: on a state shared with the gateway service, as root (sudo fleetkit ...)',
      'fleetkit runbook FILESYSTEM_PERMISSION_DENIED',
    ],
    data: { errno: e.code, syscall: e.syscall, ...(path === undefined ? {} : { path }) },
  }
}

function databaseFailure(state: string, error: Error): EnvironmentFailure | undefined {
  const named = describeSqlState(state)
  const logs = "fleetkit db status (the embedded server's log: <state dir>/postgres/server.log)"
  if (state === SQLSTATE.diskFull) {
    return {
      code: 'STATE_DISK_FULL',
      message: `PostgreSQL could not write: its disk is full (SQLSTATE ${named}); the change was not made`,
      actions: [
        "free space on the filesystem of the PostgreSQL data directory (the embedded server's: <state dir>/postgres)",
        'then run the command again',
      ],
      data: { sqlstate: state },
    }
  }
  if (isConnectionError(error)) {
    return {
      code: 'STATE_UNREACHABLE',
      message: `the connection to PostgreSQL broke during the command (SQLSTATE ${named}); what it had not committed was rolled back`,
      actions: [logs, 'run the command again once the server answers'],
      data: { sqlstate: state },
    }
  }
  if (isServerFailure(error)) {
    return {
      code: 'STATE_SERVER_FAILED',
      message: `PostgreSQL failed the statement for a reason of its own (SQLSTATE ${named}); what the command had not committed was rolled back`,
      actions: [logs, 'then run the command again'],
      data: { sqlstate: state },
    }
  }
  return undefined
}
