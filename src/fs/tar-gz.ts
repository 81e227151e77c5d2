// Backups as gzip-compressed ustar archives, streamed: a writer that adds files, bytes and
// directories with each member's SHA-256, and an extractor that refuses anything but plain members.
import { createHash } from 'node:crypto'
import { constants, createReadStream } from 'node:fs'
import { type FileHandle, open } from 'node:fs/promises'
import { once } from 'node:events'
import { dirname, join } from 'node:path'
import { createGunzip, createGzip } from 'node:zlib'

import { BLOCK, TarFormatError, ustarHeader } from './ustar.js'
import { isEndBlock, readUstarHeader, safeMemberName } from './ustar-reader.js'
import { makeDirectories } from './make-directories.js'
import { withPath, writeAll, type WritableFile } from './write-all.js'

/** One member as written or extracted: its bytes' SHA-256 and size (directories have neither). */
export interface TarMember {
  name: string
  type: 'file' | 'directory'
  mode: number
  size: number
  sha256: string
}

export interface TarGzWriter {
  /** Adds bytes held in memory. */
  addBytes(name: string, data: Uint8Array, mode?: number): Promise<TarMember>
  /**
   * Adds a file from disk. Its size is read first; a file that shrinks while it is read is padded
   * with zeros and one that grows is cut there (as pg_basebackup does: WAL replay repairs both).
   */
  addFile(name: string, path: string, mode?: number): Promise<TarMember>
  addDirectory(name: string, mode?: number): Promise<TarMember>
  /** Ends the archive, fsyncs and closes the file; the archive's own SHA-256 and size. */
  finish(): Promise<{ sha256: string; size: number }>
  /** Closes and leaves the file as it is (the caller removes it). */
  abort(): Promise<void>
}

/** The part of a FileHandle the archive code uses. */
export interface ArchiveFile extends WritableFile {
  chmod(mode: number): Promise<void>
  chown(uid: number, gid: number): Promise<void>
  sync(): Promise<void>
  close(): Promise<void>
}

/** Opens a file as `open` of node:fs/promises does; tests give one that writes short or fails. */
export type OpenArchiveFile = (path: string, flags: number, mode: number) => Promise<ArchiveFile>

/** A new archive at `path` (created exclusively, `mode` 0600 by default; never an existing file). */
export async function createTarGz(
  path: string,
  options: { mode?: number; mtime?: Date; open?: OpenArchiveFile } = {},
): Promise<TarGzWriter> {
  const mode = options.mode ?? 0o600
  const mtime = Math.floor((options.mtime ?? new Date()).getTime() / 1000)
  const handle = await (options.open ?? open)(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode)
  try {
    await handle.chmod(mode)
  } catch (error) {
    await handle.close()
    throw withPath(error, path)
  }
  const gzip = createGzip({ level: 6 })
  const whole = createHash('sha256')
  let size = 0
  let writeError: Error | undefined
  const drained = (async () => {
    for await (const chunk of gzip as AsyncIterable<Buffer>) {
      // Every byte, or an error: the hash and size below must be of what the file holds.
      await writeAll(handle, chunk, path)
      whole.update(chunk)
      size += chunk.length
    }
  })().catch((error: Error) => {
    writeError = error
    gzip.destroy()
  })
  const names = new Set<string>()

  async function put(data: Uint8Array): Promise<void> {
    if (writeError) throw writeError
    if (!gzip.write(data)) await Promise.race([once(gzip, 'drain'), drained])
    if (writeError) throw writeError
  }
  async function pad(length: number): Promise<void> {
    const rest = length % BLOCK
    if (rest !== 0) await put(Buffer.alloc(BLOCK - rest, 0))
  }
  function claim(name: string): void {
    if (names.has(name)) throw new TarFormatError(`two members named ${name}`)
    names.add(name)
  }

  return {
    async addBytes(name, data, fileMode = 0o600) {
      claim(name)
      await put(ustarHeader({ name, mode: fileMode, size: data.length, type: 'file', mtime }))
      await put(data)
      await pad(data.length)
      return {
        name,
        type: 'file',
        mode: fileMode,
        size: data.length,
        sha256: createHash('sha256').update(data).digest('hex'),
      }
    },
    async addFile(name, path, fileMode) {
      claim(name)
      const source = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW)
      try {
        const info = await source.stat()
        if (!info.isFile()) throw new TarFormatError(`${path} is not a regular file`)
        const length = info.size
        const memberMode = fileMode ?? info.mode & 0o7777
        await put(ustarHeader({ name, mode: memberMode, size: length, type: 'file', mtime }))
        const hash = createHash('sha256')
        let done = 0
        const chunk = Buffer.alloc(1 << 20)
        while (done < length) {
          const want = Math.min(chunk.length, length - done)
          const { bytesRead } = await source.read(chunk, 0, want, done)
          const piece = bytesRead === 0 ? Buffer.alloc(want, 0) : Buffer.from(chunk.subarray(0, bytesRead))
          hash.update(piece)
          await put(piece)
          done += piece.length
        }
        await pad(length)
        return { name, type: 'file', mode: memberMode, size: length, sha256: hash.digest('hex') }
      } finally {
        await source.close()
      }
    },
    async addDirectory(name, dirMode = 0o700) {
      const dirName = name.endsWith('/') ? name : `${name}/`
      claim(dirName)
      await put(ustarHeader({ name: dirName, mode: dirMode, size: 0, type: 'directory', mtime }))
      return { name: dirName, type: 'directory', mode: dirMode, size: 0, sha256: '' }
    },
    async finish() {
      await put(Buffer.alloc(2 * BLOCK, 0))
      gzip.end()
      await drained
      if (writeError) {
        await handle.close()
        throw writeError
      }
      try {
        await handle.sync()
      } catch (error) {
        await handle.close()
        throw withPath(error, path)
      }
      await handle.close().catch((error: unknown) => {
        throw withPath(error, path)
      })
      return { sha256: whole.digest('hex'), size }
    },
    async abort() {
      gzip.destroy()
      await drained.catch(() => undefined)
      await handle.close().catch(() => undefined)
    },
  }
}

/** Reads exactly `length` bytes from a chunked stream, keeping what is left over. */
class ChunkReader {
  private buffered: Buffer[] = []
  private available = 0
  private done = false
  /** Bytes handed out so far: where the next read starts in the uncompressed archive. */
  consumed = 0
  constructor(private readonly source: AsyncIterator<Buffer>) {}

  async read(length: number): Promise<Buffer | undefined> {
    while (this.available < length && !this.done) {
      const next = await this.source.next()
      if (next.done) this.done = true
      else {
        this.buffered.push(next.value)
        this.available += next.value.length
      }
    }
    if (this.available < length) return undefined
    const all = this.buffered.length === 1 ? this.buffered[0]! : Buffer.concat(this.buffered)
    const out = all.subarray(0, length)
    const rest = all.subarray(length)
    this.buffered = rest.length > 0 ? [rest] : []
    this.available = rest.length
    this.consumed += length
    return out
  }
}

export interface ExtractOptions {
  /** Refuse an archive with more members than this (default 100,000). */
  maxMembers?: number
  /**
   * Refuse an archive whose members hold more than this many bytes in all (default: no bound). Judged at
   * each member's header, by the size it declares, so the member that would pass it is never created: a
   * small gzip stream can expand a thousandfold, and a crafted one fills the disk before it ends.
   */
  maxBytes?: number
  /** Owner of what is written (the embedded server's `postgres` user when fleetkit runs as root). */
  owner?: { uid: number; gid: number }
  /** Opens each member's file (tests give one that writes short or fails). */
  open?: OpenArchiveFile
}

/**
 * Extracts `archive` into the existing directory `dest`: regular files and directories only (a
 * link, a device, an absolute name, `..` or a duplicate throws TarFormatError), each file created
 * exclusively and fsynced; returns every member with the SHA-256 of the bytes written.
 */
export async function extractTarGz(archive: string, dest: string, options: ExtractOptions = {}): Promise<TarMember[]> {
  const maxMembers = options.maxMembers ?? 100_000
  const maxBytes = options.maxBytes ?? Infinity
  let unpacked = 0
  const gunzip = createGunzip()
  const input = createReadStream(archive)
  input.on('error', (error) => gunzip.destroy(error))
  input.pipe(gunzip)
  const reader = new ChunkReader((gunzip as AsyncIterable<Buffer>)[Symbol.asyncIterator]())
  const members: TarMember[] = []
  const seen = new Set<string>()
  try {
    for (;;) {
      const block = await reader.read(BLOCK)
      if (!block) throw new TarFormatError('the archive ends without its end marker')
      if (isEndBlock(block)) break
      const header = readUstarHeader(block, reader.consumed - BLOCK)
      if (header.format === 'v7') throw new TarFormatError('not a ustar archive')
      const { typeflag: flag, name: rawName, size } = header
      const mode = header.mode & 0o777
      // Only the two member kinds fleetkit writes; extension headers ('x', 'L') are refused too.
      const type = flag === '5' ? 'directory' : flag === '0' || flag === '\0' ? 'file' : undefined
      if (!type) throw new TarFormatError(`member ${JSON.stringify(rawName)} is not a regular file or directory`)
      const relative = safeMemberName(rawName)
      const name = type === 'directory' ? `${relative}/` : relative
      if (seen.has(name)) throw new TarFormatError(`two members named ${name}`)
      seen.add(name)
      if (members.length >= maxMembers) throw new TarFormatError(`more than ${maxMembers} members`)
      const target = join(dest, relative)
      if (type === 'directory') {
        await makeDirectories(target, 0o700, 0o700)
        if (options.owner) await chownPath(target, options.owner)
        members.push({ name, type, mode, size: 0, sha256: '' })
        continue
      }
      if (unpacked + size > maxBytes)
        throw new TarFormatError(
          `it unpacks to more than ${maxBytes} bytes (member ${name} declares ${size} after ${unpacked} before it)`,
        )
      unpacked += size
      // Inside the destination, every directory made is private, as the members' own are.
      await makeDirectories(dirname(target), 0o700, 0o700)
      const handle = await (options.open ?? open)(
        target,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
        0o600,
      )
      const hash = createHash('sha256')
      try {
        await handle.chmod(mode)
        let left = size
        while (left > 0) {
          const piece = await reader.read(Math.min(left, 1 << 20))
          if (!piece) throw new TarFormatError(`the archive ends inside ${name}`)
          hash.update(piece)
          // Every byte: the hash is of the archive's bytes, so a short write would pass the member check.
          await writeAll(handle, piece, target)
          left -= piece.length
        }
        if (options.owner) await handle.chown(options.owner.uid, options.owner.gid)
        await handle.sync()
      } catch (error) {
        // A full TMPDIR or data directory: the error names the file, so the operator knows which filesystem.
        throw withPath(error, target)
      } finally {
        await handle.close()
      }
      const rest = size % BLOCK
      if (rest !== 0 && !(await reader.read(BLOCK - rest))) throw new TarFormatError(`the archive ends inside ${name}`)
      members.push({ name, type, mode, size, sha256: hash.digest('hex') })
    }
  } catch (error) {
    if (error instanceof TarFormatError) throw error
    const code = (error as { code?: string }).code
    // zlib's errors: not gzip, a damaged stream, a truncated one.
    if (code?.startsWith('Z_') || code === 'ERR_ZLIB_INITIALIZATION_FAILED')
      throw new TarFormatError(`not a readable gzip stream (${code})`)
    throw error
  } finally {
    input.destroy()
    gunzip.destroy()
  }
  return members
}

async function chownPath(path: string, owner: { uid: number; gid: number }): Promise<void> {
  let handle: FileHandle | undefined
  try {
    handle = await open(path, constants.O_RDONLY)
    await handle.chown(owner.uid, owner.gid)
  } finally {
    await handle?.close()
  }
}
