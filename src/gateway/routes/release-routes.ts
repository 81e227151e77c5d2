// GET and HEAD /<version>/<file> on the enrollment listener: the releases `fleetkit release publish` put
// in <state dir>/releases/<version>/, in the layout hosts read under release.url (docs/releases.md), so
// release.url may be the gateway's enrollment URL, whose CA every seed already carries.
import { constants } from 'node:fs'
import { type FileHandle, open } from 'node:fs/promises'
import { join } from 'node:path'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { SUMS_FILE, SIGNATURE_FILE, isReleaseFileName, isReleaseVersion } from '../../release/release-name.js'
import { FileReply } from './http.js'
import type { Route } from './router.js'

const RELEASE_ROUTE_PATTERN = '/:version/:file'

/**
 * What the route's two segments may be, before anything touches the disk: a version of the release
 * grammar (digits first, so never `.` or `..`) and one of the three kinds of release file. Neither
 * admits `/` or `%`, so no escape can reach another path; any other path is no route (404).
 */
const PARAMS = {
  version: /[0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z][0-9A-Za-z.-]*)?/,
  file: /SHA256SUMS|SHA256SUMS\.sig|fleetkit-agent-[0-9A-Za-z.-]+-linux-(?:amd64|arm64)\.tar\.zst/,
}

/** errno codes that mean "not there": no state directory, no releases/ in it, no such version or file, a link. */
const ABSENT = new Set(['ENOENT', 'ENOTDIR', 'ELOOP', 'EISDIR'])

/**
 * The version directory: never through a link (ELOOP), and never one that could block (a FIFO is ENOTDIR).
 * The state directory and releases/ above it are the operator's to place, and may be links.
 */
const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | constants.O_NONBLOCK

/**
 * The file: never through a link, and O_NONBLOCK so that opening a FIFO returns at once (without it, open
 * waits for a writer and holds one of libuv's four threads for good: four such requests stall every file
 * and crypto call of the gateway, the database login's SCRAM among them). The descriptor's type is judged
 * once it is open. No controlling terminal from a tty planted there.
 */
const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY

function notFound(version: string, file: string, why: string): FleetkitError {
  return new FleetkitError('RELEASE_NOT_FOUND', `release ${version} has no ${file} on this gateway: ${why}`, {
    data: { version, file },
  })
}

function contentTypeOf(file: string): string {
  return file === SUMS_FILE || file === SIGNATURE_FILE ? 'text/plain; charset=utf-8' : 'application/zstd'
}

/** Opens `path` with `flags`; what is absent or unreadable is RELEASE_NOT_FOUND, anything else thrown as is. */
async function openOrNotFound(path: string, flags: number, version: string, file: string): Promise<FileHandle> {
  try {
    return await open(path, flags)
  } catch (error) {
    const errno = (error as NodeJS.ErrnoException).code ?? ''
    if (ABSENT.has(errno)) throw notFound(version, file, 'it is not published')
    // A socket (ENXIO) or a device without its driver (ENODEV): no file of a release either.
    if (errno === 'ENXIO' || errno === 'ENODEV') throw notFound(version, file, 'it is not a regular file')
    // The state directory of another user: a setup to correct (publish as the gateway's user), not a server fault.
    if (errno === 'EACCES' || errno === 'EPERM') throw notFound(version, file, "the gateway's user may not read it")
    throw error
  }
}

/**
 * Opens <releasesDir>/<version>/<file> for reading, through no link at the version directory or at the
 * file, and only a regular file; anything absent or of another kind (a FIFO, a device, a directory) is
 * RELEASE_NOT_FOUND (404), never a 500 and never a request that waits.
 */
export async function openPublishedFile(
  releasesDir: string | undefined,
  version: string,
  file: string,
): Promise<FileReply> {
  // The route's patterns admit these already; checked again here so the function is safe on its own.
  if (!isReleaseVersion(version) || !isReleaseFileName(version, file))
    throw notFound(version.slice(0, 64), file.slice(0, 128), 'not a file of a release of that version')
  if (releasesDir === undefined) throw notFound(version, file, 'this gateway serves no releases')
  const directory = await openOrNotFound(join(releasesDir, version), DIRECTORY_FLAGS, version, file)
  let handle: FileHandle
  try {
    // The file is looked up in the directory just opened (Linux's openat, through its descriptor): a version
    // directory swapped for a link meanwhile cannot lead outside releases/.
    handle = await openOrNotFound(`/proc/self/fd/${directory.fd}/${file}`, FILE_FLAGS, version, file)
  } finally {
    await directory.close().catch(() => undefined)
  }
  try {
    const info = await handle.stat()
    if (!info.isFile()) throw notFound(version, file, 'it is not a regular file')
    return new FileReply(handle, info.size, contentTypeOf(file))
  } catch (error) {
    await handle.close().catch(() => undefined)
    throw error
  }
}

/**
 * The release routes of the enrollment listener. No authentication (the files are signed; hosts verify
 * them), no database (served while it is down), and shed first under load (curl retries a 503).
 */
export function releaseRoutes(releasesDir: string | undefined): Route[] {
  return (['GET', 'HEAD'] as const).map((method): Route => ({
    method,
    pattern: RELEASE_ROUTE_PATTERN,
    params: PARAMS,
    auth: 'none',
    shedding: 'first',
    needsDatabase: false,
    handler: (ctx) => openPublishedFile(releasesDir, ctx.params.version!, ctx.params.file!),
  }))
}
