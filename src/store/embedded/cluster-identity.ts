// Which PostgreSQL cluster a data directory holds: the system identifier initdb drew, the first field of
// global/pg_control (a uint64 in the machine's byte order, little-endian on every architecture fleetkit
// ships for). The same number `pg_control_system()` reports and every WAL segment's header carries; a
// restore from a base backup keeps it, so a control host rebuilt from the archive is the same cluster.
import { open } from 'node:fs/promises'
import { join } from 'node:path'

export async function readSystemIdentifier(dataDir: string): Promise<string> {
  const file = await open(join(dataDir, 'global', 'pg_control'), 'r')
  try {
    const head = Buffer.alloc(8)
    const { bytesRead } = await file.read(head, 0, 8, 0)
    if (bytesRead !== 8) throw new Error(`${dataDir}/global/pg_control is shorter than its first field`)
    return head.readBigUInt64LE(0).toString()
  } finally {
    await file.close()
  }
}
