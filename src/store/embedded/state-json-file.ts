// The small JSON files fleetkit keeps beside the embedded server (`<state>/postgres/archive.json`,
// `archive-remote.json`, `archive-ship.json`): written whole (a temporary file renamed over), 0600 in
// a private state. In a group-shared state (`fleetkit gateway install`) they follow the password
// file: the account's, mode 0640, whoever wrote them, so the gateway (its gauges) and the group's
// members read what root recorded. None of them holds a secret (the identity is a path).
import { chmod, chown, rename, unlink, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'

import { sharedStateOwner } from './shared-state.js'

/** Writes `value` as JSON to `file` in one rename, with the owner and mode its state directory calls for. */
export async function writeStateJsonFile(file: string, value: unknown): Promise<void> {
  const temp = `${file}.tmp`
  const shared = await sharedStateOwner({ root: dirname(file) })
  await writeFile(temp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 })
  try {
    if (shared) {
      if (process.getuid?.() === 0) await chown(temp, shared.uid, shared.gid)
      await chmod(temp, 0o640)
    }
    await rename(temp, file)
  } catch (error) {
    await unlink(temp).catch(() => undefined)
    throw error
  }
}
