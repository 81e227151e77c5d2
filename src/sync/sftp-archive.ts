// The off-host WAL archive's files over SFTP (`fleetkit db archive remote add|ship|verify`): one node-ssh
// connection with the archive host's key pinned (connectPinned, as sync's steps are), its SFTP channel,
// and paths kept inside the remote archive directory. Every failure is a coded error: the host down or
// refusing the login (ARCHIVE_REMOTE_UNREACHABLE), another host key (ARCHIVE_REMOTE_HOST_KEY_MISMATCH),
// a file operation refused there (ARCHIVE_REMOTE_FAILED); a write on this machine that fails (a full disk)
// is this machine's failure, not the remote's.
import { createHash } from 'node:crypto'
import { open as openLocal } from 'node:fs/promises'
import { posix } from 'node:path'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { withPath, writeAll as writeAllLocal } from '../fs/write-all.js'
import type { Env } from '../config/state-dir.js'
import { connectPinned, HostKeyRefused, SshUnreachable } from './ssh-client.js'

/** The remote archive as `db archive` records it (src/store/embedded/archive-remote.ts). */
export interface SftpArchiveRemote {
  url: string
  user: string
  host: string
  port: number
  path: string
  hostKey: string
  identityFile: string
}

// ssh2 ships no types: the SFTP calls used here, typed here.
type Done<T = void> = (error: Error | null | undefined, value: T) => void
interface Sftp {
  readdir(path: string, cb: Done<{ filename: string }[]>): void
  mkdir(path: string, attrs: { mode: number }, cb: Done): void
  stat(path: string, cb: Done<{ isDirectory(): boolean }>): void
  open(path: string, flags: string, attrs: { mode: number }, cb: Done<Buffer>): void
  write(handle: Buffer, buf: Buffer, off: number, len: number, position: number, cb: Done): void
  read(handle: Buffer, buf: Buffer, off: number, len: number, position: number, cb: Done<number>): void
  close(handle: Buffer, cb: Done): void
  ext_openssh_fsync(handle: Buffer, cb: Done): void
  ext_openssh_rename(from: string, to: string, cb: Done): void
  rename(from: string, to: string, cb: Done): void
  unlink(path: string, cb: Done): void
  end(): void
}

const CHUNK = 256 * 1024
/** The largest text file (`.sha256`, a base backup's manifest, cluster.json) read from the remote. */
const MAX_TEXT_BYTES = 1024 * 1024

function call<T = void>(fn: (cb: Done<T>) => void): Promise<T> {
  return new Promise((resolve, reject) => fn((error, value) => (error ? reject(error) : resolve(value))))
}

/** The archive's files on the remote host; close() ends the connection. */
export interface SftpArchive {
  list(dir: string): Promise<string[]>
  mkdirs(dir: string): Promise<void>
  put(localPath: string, path: string): Promise<void>
  putText(path: string, text: string): Promise<void>
  rename(from: string, to: string): Promise<void>
  renameNew(from: string, to: string): Promise<void>
  remove(path: string): Promise<void>
  sha256(path: string): Promise<string>
  readText(path: string): Promise<string>
  get(path: string, localPath: string): Promise<void>
  close(): void
}

export async function openSftpArchive(remote: SftpArchiveRemote, env: Env): Promise<SftpArchive> {
  const node = `${remote.host}:${remote.port}`
  let ssh: Awaited<ReturnType<typeof connectPinned>>
  try {
    ssh = await connectPinned(
      { node, host: remote.host, port: remote.port, user: remote.user, pinnedKey: remote.hostKey },
      env,
      remote.identityFile,
      // A host that stops answering mid-transfer ends the session within a minute instead of hanging a
      // ship run for ever (the next timer run would then wait on its lock).
      { keepaliveIntervalMs: 15_000 },
    )
  } catch (error) {
    if (error instanceof HostKeyRefused) {
      throw new FleetkitError(
        'ARCHIVE_REMOTE_HOST_KEY_MISMATCH',
        `${node} presented an SSH host key other than the one pinned for ${remote.url}; fleetkit did not log in`,
        {
          actions: [
            `check ${remote.host}'s key out of band, then fleetkit db archive remote add ${remote.url} --host-key LINE --identity FILE`,
          ],
          data: { url: remote.url },
        },
      )
    }
    if (error instanceof SshUnreachable) {
      throw new FleetkitError(
        'ARCHIVE_REMOTE_UNREACHABLE',
        `the off-host archive ${remote.url} cannot be reached: ${error.message.slice(0, 300)}`,
        {
          actions: [
            `ssh -i ${remote.identityFile} -p ${remote.port} ${remote.user}@${remote.host}`,
            'fleetkit db archive ship (again once it answers)',
          ],
          data: { url: remote.url },
        },
      )
    }
    throw error
  }
  let sftp: Sftp
  try {
    sftp = (await ssh.requestSFTP()) as unknown as Sftp
  } catch (error) {
    ssh.dispose()
    throw failed(remote, 'open the SFTP channel', '', error)
  }
  const abs = (path: string) => {
    const joined = posix.join(remote.path, path)
    if (joined !== remote.path && !joined.startsWith(`${remote.path}/`))
      throw new RangeError(`${path} leaves the archive`)
    return joined
  }
  const attempt = async <R>(what: string, path: string, fn: () => Promise<R>): Promise<R> => {
    try {
      return await fn()
    } catch (error) {
      throw failed(remote, what, path, error)
    }
  }
  const writeAll = async (path: string, source: (buf: Buffer, position: number) => Promise<number>) => {
    const handle = await call<Buffer>((cb) => sftp.open(abs(path), 'w', { mode: 0o600 }, cb))
    try {
      const buf = Buffer.alloc(CHUNK)
      for (let position = 0; ;) {
        const n = await source(buf, position)
        if (n === 0) break
        await call((cb) => sftp.write(handle, buf, 0, n, position, cb))
        position += n
      }
      // fsync@openssh.com: the bytes are on the host's disk before the file is renamed into place.
      await call((cb) => sftp.ext_openssh_fsync(handle, cb))
    } finally {
      await call((cb) => sftp.close(handle, cb)).catch(() => undefined)
    }
  }
  const readAll = async (path: string, sink: (chunk: Buffer) => Promise<void> | void) => {
    const handle = await call<Buffer>((cb) => sftp.open(abs(path), 'r', { mode: 0 }, cb))
    try {
      const buf = Buffer.alloc(CHUNK)
      for (let position = 0; ;) {
        const n = await call<number>((cb) => sftp.read(handle, buf, 0, CHUNK, position, cb))
        if (!n) break
        await sink(buf.subarray(0, n))
        position += n
      }
    } finally {
      await call((cb) => sftp.close(handle, cb)).catch(() => undefined)
    }
  }
  return {
    list: (dir) =>
      attempt('list', dir, async () => {
        try {
          return (await call<{ filename: string }[]>((cb) => sftp.readdir(abs(dir), cb))).map((e) => e.filename)
        } catch (error) {
          // SFTP's "no such file": a directory not made yet holds nothing.
          if ((error as { code?: number }).code === 2) return []
          throw error
        }
      }),
    mkdirs: (dir) =>
      attempt('create', dir, async () => {
        let at = '/'
        for (const part of abs(dir).split('/').filter(Boolean)) {
          at = posix.join(at, part)
          await call((cb) => sftp.mkdir(at, { mode: 0o700 }, cb)).catch(async (error: unknown) => {
            // There already (a parent of the archive, or a second run): fine if it is a directory
            // (stat, not readdir: a parent such as /home may let us pass without letting us list it).
            const info = await call<{ isDirectory(): boolean }>((cb) => sftp.stat(at, cb)).catch(() => undefined)
            if (!info?.isDirectory()) throw error
          })
        }
      }),
    put: (localPath, path) =>
      attempt('write', path, async () => {
        const local = await openLocal(localPath, 'r')
        try {
          await writeAll(path, async (buf, position) => (await local.read(buf, 0, buf.length, position)).bytesRead)
        } finally {
          await local.close()
        }
      }),
    putText: (path, text) =>
      attempt('write', path, async () => {
        const bytes = Buffer.from(text, 'utf8')
        await writeAll(path, (buf, position) =>
          Promise.resolve(position >= bytes.length ? 0 : bytes.copy(buf, 0, position)),
        )
      }),
    rename: (from, to) => attempt('rename', from, () => call((cb) => sftp.ext_openssh_rename(abs(from), abs(to), cb))),
    // SFTP's own rename fails when the target exists (OpenSSH's server links, then unlinks the old name).
    renameNew: (from, to) => attempt('rename', from, () => call((cb) => sftp.rename(abs(from), abs(to), cb))),
    remove: (path) => attempt('remove', path, () => call((cb) => sftp.unlink(abs(path), cb))),
    sha256: (path) =>
      attempt('read', path, async () => {
        const hash = createHash('sha256')
        await readAll(path, (chunk) => void hash.update(chunk))
        return hash.digest('hex')
      }),
    readText: (path) =>
      attempt('read', path, async () => {
        const chunks: Buffer[] = []
        let size = 0
        await readAll(path, (chunk) => {
          // A checksum, a manifest or cluster.json: a few KiB. A host that serves more is not read into memory.
          size += chunk.length
          if (size > MAX_TEXT_BYTES) throw new Error(`larger than ${MAX_TEXT_BYTES} bytes, which no text file here is`)
          chunks.push(Buffer.from(chunk))
        })
        return Buffer.concat(chunks).toString('utf8')
      }),
    get: async (path, localPath) => {
      // This machine's side fails as itself (a full disk is FILESYSTEM_WRITE_FAILED naming the file, via
      // toFleetkitError), not as ARCHIVE_REMOTE_FAILED: the remote did nothing wrong.
      const local = await openLocal(localPath, 'w', 0o600)
      try {
        let localFailure: unknown
        await attempt('read', path, () =>
          readAll(path, (chunk) =>
            writeAllLocal(local, chunk, localPath).catch((error: unknown) => {
              localFailure = error
              throw error
            }),
          ),
        ).catch((error: unknown) => {
          throw localFailure ?? error
        })
        await local.sync()
      } catch (error) {
        await local.close().catch(() => undefined)
        throw withPath(error, localPath)
      }
      await local.close().catch((error: unknown) => {
        throw withPath(error, localPath)
      })
    },
    close: () => {
      sftp.end()
      ssh.dispose()
    },
  }
}

function failed(remote: SftpArchiveRemote, what: string, path: string, error: unknown): FleetkitError {
  if (error instanceof FleetkitError) return error
  return new FleetkitError(
    'ARCHIVE_REMOTE_FAILED',
    `could not ${what} ${remote.url}${path ? `/${path}` : ''}: ${(error as Error).message.slice(0, 300)}`,
    {
      actions: [
        `check the directory ${remote.path} on ${remote.host} (its owner, free space)`,
        'fleetkit db archive ship',
      ],
      data: { url: remote.url, path },
    },
  )
}
