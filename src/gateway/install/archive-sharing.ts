// What the gateway's account must own beside the state directory once it runs the embedded server: the
// WAL archive directory when it lies outside the state (archive_command runs as the server's user, and root's
// state made it as `postgres`) and the SSH key `db archive ship` logs in with (the timer runs as the
// account). `gateway install` gives both to the account; `uninstall --remove-account` gives them back.
import { isAbsolute, relative } from 'node:path'

import { readArchiveConfig } from '../../store/embedded/archive-dir.js'
import { readArchiveRemote } from '../../store/embedded/archive-remote.js'
import { embeddedServerPaths } from '../../store/embedded/paths.js'
import { type Ids, type OwnershipChange, planOwnedTree } from './state-sharing.js'

/** The WAL archive directory recorded for the state (db archive enable), when it lies outside the state directory. */
export async function archiveDirOutside(stateDir: string): Promise<string | undefined> {
  const config = await readArchiveConfig(embeddedServerPaths(stateDir))
  if (config === undefined) return undefined
  const inside = relative(stateDir, config.dir)
  return inside === '' || (!inside.startsWith('..') && !isAbsolute(inside)) ? undefined : config.dir
}

/** The SSH key the off-host archive logs in with, when a remote is recorded. */
export async function archiveIdentityFile(stateDir: string): Promise<string | undefined> {
  return (await readArchiveRemote(embeddedServerPaths(stateDir)))?.identityFile
}

/**
 * What giving the archive directory (outside the state) and the archive's SSH key to `archive` and `key`
 * changes; each absent one changes nothing.
 */
export async function planArchiveOwnership(
  stateDir: string,
  owners: { archive: Ids; key: Ids },
): Promise<OwnershipChange[]> {
  const dir = await archiveDirOutside(stateDir)
  const key = await archiveIdentityFile(stateDir)
  return [
    ...(dir === undefined ? [] : await planOwnedTree(dir, owners.archive)),
    ...(key === undefined ? [] : await planOwnedTree(key, owners.key)),
  ]
}
