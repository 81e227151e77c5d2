// The small JSON files fleetkit keeps beside the embedded server (`<state>/postgres/archive.json`,
// `archive-remote.json`, `archive-ship.json`): written whole (a temporary file fsynced and renamed over), 0600 in
// a private state. In a group-shared state (`fleetkit gateway install`) they follow the password
// file: the account's, mode 0640, whoever wrote them, so the gateway (its gauges) and the group's
// members read what root recorded. None of them holds a secret (the identity is a path).
import { basename, dirname } from 'node:path'

import { writeFilesAtomic } from '../../fs/atomic-file.js'
import { sharedStateOwner } from './shared-state.js'

/**
 * Writes `value` as JSON to `file` crash-safely (a temp file fsynced, renamed over, the directory fsynced:
 * src/fs/atomic-file.ts), with the owner and mode its state directory calls for.
 */
export async function writeStateJsonFile(file: string, value: unknown): Promise<void> {
  const shared = await sharedStateOwner({ root: dirname(file) })
  await writeFilesAtomic(dirname(file), [
    {
      name: basename(file),
      content: `${JSON.stringify(value, null, 2)}\n`,
      mode: shared ? 0o640 : 0o600,
      // Only root may give a file away; anyone else writing a shared state is the account or a member.
      ...(shared && process.getuid?.() === 0 ? { owner: shared } : {}),
    },
  ])
}
