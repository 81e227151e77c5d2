// Whether a directory fleetkit keeps secrets in is fleetkit's own. As root, fleetkit runs the embedded
// PostgreSQL as the owner of `<state>/postgres`, reads the database password from there and writes the CA
// key under the state directory; a directory that another user owns or may write (or one above it that
// they may rename) lets that user plant the password, become the database's superuser, or swap the PKI.
// As git's safe.directory and sshd's StrictModes do, such a directory is refused, not used.
import { execFile } from 'node:child_process'
import { realpath, stat } from 'node:fs/promises'
import { dirname } from 'node:path'
import { promisify } from 'node:util'

import { GATEWAY_ACCOUNT } from '../config/gateway-account.js'

export interface TrustRules {
  /** The owners whose directories are trusted: this process's user, root, the gateway's account. */
  trusted: (uid: number) => boolean | Promise<boolean>
  /**
   * Whether a group-writable `dir` itself is a state `fleetkit gateway install` shared with its group
   * (setgid, owned by the gateway's account): the one layout in which the group may write it.
   */
  sharedWithGroup?: (info: { uid: number; gid: number; mode: number }) => boolean | Promise<boolean>
}

export interface UntrustedDirectory {
  /** The directory at fault: `dir` itself or one above it. */
  path: string
  /** `owner`: another user owns it; `writable`: others (or, for `dir` itself, its group) may write it. */
  kind: 'owner' | 'writable'
  uid: number
  /** Four octal digits. */
  mode: string
}

/**
 * The first directory from `dir` up to `/` that makes `dir` untrusted, or undefined when it is
 * trusted. `dir` itself (and, when it does not exist yet, the nearest directory above it that does)
 * must belong to a trusted owner and not be writable by others or its group (unless shared); every
 * directory above must belong to a trusted owner and not be writable by others unless sticky (`/tmp`: no
 * one may then rename what another owns in it).
 */
export async function findUntrustedDirectory(dir: string, rules: TrustRules): Promise<UntrustedDirectory | undefined> {
  let current = await realpath(dir).catch(() => undefined)
  let own = true
  if (current === undefined) {
    // Not made yet: its creator makes it 0700; what it is made in must be trusted as it would be.
    current = dir
    for (;;) {
      const parent = dirname(current)
      const real = await realpath(parent).catch(() => undefined)
      if (real !== undefined) {
        current = real
        break
      }
      if (parent === current) return undefined
      current = parent
    }
    own = false
  }
  for (;;) {
    const info = await stat(current)
    const mode = info.mode & 0o7777
    const shown = mode.toString(8).padStart(4, '0')
    if (!(await rules.trusted(info.uid))) return { path: current, kind: 'owner', uid: info.uid, mode: shown }
    const sticky = (mode & 0o1000) !== 0
    const othersWrite = (mode & 0o002) !== 0
    const groupWrite = (mode & 0o020) !== 0
    if (own) {
      // Its own entries (postgres/, pki/, the password) must not be creatable or replaceable by others.
      if (othersWrite) return { path: current, kind: 'writable', uid: info.uid, mode: shown }
      if (groupWrite && !(await rules.sharedWithGroup?.({ uid: info.uid, gid: info.gid, mode }))) {
        return { path: current, kind: 'writable', uid: info.uid, mode: shown }
      }
    } else if (othersWrite && !sticky) {
      return { path: current, kind: 'writable', uid: info.uid, mode: shown }
    }
    const parent = dirname(current)
    if (parent === current) return undefined
    current = parent
    own = false
  }
}

/**
 * A refusal's words for `problem` found for `dir`: why (whose it is, or who may write it) and the command that
 * mends it when the directory is the operator's to trust.
 */
export function describeUntrusted(problem: UntrustedDirectory, dir: string): { why: string; fix: string } {
  if (problem.kind === 'owner')
    return {
      why: `${problem.path} belongs to uid ${problem.uid}, not to this user, root or ${GATEWAY_ACCOUNT}`,
      fix: `if ${problem.path} is yours to trust: chown -R ${process.getuid?.() ?? 0} ${problem.path}`,
    }
  const own = problem.path === dir
  return {
    why: `${problem.path} may be written by ${own ? 'its group or others' : 'others'} (mode ${problem.mode})`,
    fix: `chmod ${own ? 'go-w' : 'o-w'} ${problem.path}`,
  }
}

/** This process's user, root, and the gateway's account (a state `fleetkit gateway install` shared). */
export function fleetkitTrustRules(): TrustRules {
  const own = process.getuid?.()
  return {
    trusted: async (uid) => uid === 0 || uid === own || uid === (await gatewayUid()),
    // install's layout: setgid directories of the account, its group sharing them (state-sharing.ts).
    sharedWithGroup: async (info) => (info.mode & 0o2000) !== 0 && info.uid === (await gatewayUid()),
  }
}

let gatewayAccount: Promise<number | undefined> | undefined
/** Looked up only for a directory neither root's nor this user's, once per process (an `id` child each time). */
function gatewayUid(): Promise<number | undefined> {
  gatewayAccount ??= accountUid(GATEWAY_ACCOUNT)
  return gatewayAccount
}

async function accountUid(name: string): Promise<number | undefined> {
  try {
    const { stdout } = await promisify(execFile)('id', ['-u', name], { timeout: 10_000 })
    const uid = Number.parseInt(stdout, 10)
    return Number.isInteger(uid) ? uid : undefined
  } catch {
    return undefined
  }
}
