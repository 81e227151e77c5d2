// One off-host archive directory holds one cluster's archive. WAL segment names repeat from cluster to
// cluster (every new one starts at 000000010000000000000001), and a segment whose checksum is on the remote
// counts as shipped: a second control host shipping into the same directory would skip its own segments as
// "already there" and leave its state unprotected, and a restore from the mix would fail. So the first
// ship (or remote add) writes `cluster.json` with the local system identifier, and every later one refuses
// a directory that names another cluster.
import { hostname } from 'node:os'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import type { ArchiveRemote } from '../../store/embedded/archive-remote.js'
import type { RemoteArchiveFiles } from './remote-files.js'

const CLUSTER_MARKER = 'cluster.json'

interface ClusterMarker {
  systemIdentifier: string
  claimedAt: string
  claimedBy: string
}

/** Claims REMOTE's directory for the cluster SYSTEM_IDENTIFIER, or refuses one another cluster holds. */
export async function claimRemoteForCluster(
  files: RemoteArchiveFiles,
  remote: ArchiveRemote,
  systemIdentifier: string,
  now: Date,
): Promise<'claimed' | 'ours'> {
  if ((await files.list('.')).includes(CLUSTER_MARKER)) return judgeClaim(files, remote, systemIdentifier)
  // Two control hosts claiming one empty directory at once: each writes its own part (named by its
  // cluster), and the rename that will not replace a file lets exactly one of them in.
  const part = `${CLUSTER_MARKER}.${systemIdentifier}.part`
  const marker: ClusterMarker = { systemIdentifier, claimedAt: now.toISOString(), claimedBy: hostname() }
  await files.putText(part, `${JSON.stringify(marker, null, 2)}\n`)
  try {
    await files.renameNew(part, CLUSTER_MARKER)
    return 'claimed'
  } catch (error) {
    await files.remove(part).catch(() => undefined)
    if (!(await files.list('.')).includes(CLUSTER_MARKER)) throw error
    return judgeClaim(files, remote, systemIdentifier)
  }
}

/** 'ours' when the directory's cluster.json names SYSTEM_IDENTIFIER; ARCHIVE_REMOTE_FOREIGN otherwise. */
async function judgeClaim(files: RemoteArchiveFiles, remote: ArchiveRemote, systemIdentifier: string): Promise<'ours'> {
  const held = parseMarker(await files.readText(CLUSTER_MARKER))
  if (held?.systemIdentifier === systemIdentifier) return 'ours'
  throw new FleetkitError(
    'ARCHIVE_REMOTE_FOREIGN',
    `${remote.url} holds the archive of another PostgreSQL cluster (system identifier ${held?.systemIdentifier ?? 'unreadable'}, claimed by ${held?.claimedBy ?? 'unknown'}; this one is ${systemIdentifier}); nothing was sent`,
    {
      actions: [
        'fleetkit db archive remote add ssh://USER@HOST/A-PATH-OF-ITS-OWN --host-key LINE --identity FILE',
        'fleetkit runbook ARCHIVE_REMOTE_FOREIGN',
      ],
      data: { url: remote.url, remoteSystemIdentifier: held?.systemIdentifier ?? null, systemIdentifier },
    },
  )
}

function parseMarker(text: string): ClusterMarker | undefined {
  try {
    const value = JSON.parse(text) as Partial<ClusterMarker>
    return typeof value.systemIdentifier === 'string' && /^\d{1,20}$/.test(value.systemIdentifier)
      ? (value as ClusterMarker)
      : undefined
  } catch {
    return undefined
  }
}
