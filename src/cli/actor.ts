// Who runs a command, as events, the sync ledger's started_by and allocations record it: one rule
// for every command, found here once and handed to the library (the lifecycle and sync never look).
import { hostname, userInfo } from 'node:os'

import type { Env } from '../config/state-dir.js'

/** Where the login name and the host name come from; tests pass their own. */
export interface ActorHost {
  /** The account's name from the password database; may throw when the uid has no entry (a container). */
  userName(): string
  uid(): number | undefined
  hostname(): string
}

const systemHost: ActorHost = {
  userName: () => userInfo().username,
  uid: () => process.getuid?.(),
  hostname,
}

/**
 * FLEETKIT_ACTOR when set (automation names itself), else `user@host`: the user from $SUDO_USER (the
 * person behind `sudo fleetkit ...`, not root), else $USER, else $LOGNAME, else the account of the
 * process (`uid N` when it has no name), so a cron job or a container without $USER is still someone. Control characters become spaces; at most 64 characters.
 */
export function actorOf(env: Env = process.env, host: ActorHost = systemHost): string {
  const named = env.FLEETKIT_ACTOR?.trim()
  return printable(named || `${userOf(env, host)}@${hostOf(host)}`)
}

function userOf(env: Env, host: ActorHost): string {
  const fromEnv = env.SUDO_USER?.trim() || env.USER?.trim() || env.LOGNAME?.trim()
  if (fromEnv) return fromEnv
  try {
    const name = host.userName().trim()
    if (name) return name
  } catch {
    // No entry in the password database: the uid is all there is.
  }
  return `uid ${host.uid() ?? '?'}`
}

function hostOf(host: ActorHost): string {
  try {
    return host.hostname().trim() || 'localhost'
  } catch {
    return 'localhost'
  }
}

function printable(name: string): string {
  // eslint-disable-next-line no-control-regex
  return Array.from(name.replace(/[\u0000-\u001f\u007f]/g, ' '))
    .slice(0, 64)
    .join('')
}
