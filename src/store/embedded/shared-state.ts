// A state directory shared by a service account and the members of its group (`fleetkit gateway
// install`): `<state>/postgres` is setgid and owned by the account. Files fleetkit creates there are
// then made the account's and group-readable, so the gateway, root and members can all use them.
import { stat } from 'node:fs/promises'

import type { UnixIds } from '../postgres-binaries.js'
import type { EmbeddedServerPaths } from './paths.js'

/** The account that owns a shared state's `postgres/`, or undefined for a private state. */
export async function sharedStateOwner(paths: Pick<EmbeddedServerPaths, 'root'>): Promise<UnixIds | undefined> {
  try {
    const info = await stat(paths.root)
    return (info.mode & 0o2000) !== 0 && info.uid !== 0 ? { uid: info.uid, gid: info.gid } : undefined
  } catch {
    return undefined
  }
}

export async function isSharedState(paths: EmbeddedServerPaths): Promise<boolean> {
  return (await sharedStateOwner(paths)) !== undefined
}
