// Writing every byte through a file handle, and errors that name their file. write() may write
// fewer bytes than asked without an error (the disk filled in the middle of the buffer): only
// bytesWritten says so, and only the next write fails (ENOSPC). A FileHandle's errors carry no path,
// so the writer adds the file it was writing: the operator needs it to know which filesystem is full.
// Node built-ins only (none at all): the agent bundle carries atomic-file.ts, which uses it.

/** The part of a FileHandle a writer needs; tests give one that writes short or fails. */
export interface WritableFile {
  write(buffer: Uint8Array, offset: number, length: number): Promise<{ bytesWritten: number }>
}

/** A system call's error (errno, syscall) with `path` set when it names no file (a FileHandle's); returned for `throw`. */
export function withPath<T>(error: T, path: string): T {
  const e = error as { syscall?: unknown; path?: unknown } | null
  if (typeof e === 'object' && e !== null && typeof e.syscall === 'string' && e.path === undefined) e.path = path
  return error
}

/** Writes all of `data` at the handle's position, looping on short writes; errors name `path`. */
export async function writeAll(handle: WritableFile, data: Uint8Array, path: string): Promise<void> {
  let offset = 0
  while (offset < data.length) {
    let bytesWritten: number
    try {
      ;({ bytesWritten } = await handle.write(data, offset, data.length - offset))
    } catch (error) {
      throw withPath(error, path)
    }
    // A regular file never takes nothing without an error; if one did, looping would never end.
    if (bytesWritten <= 0)
      throw Object.assign(new Error(`EIO: the write to ${path} took no bytes`), { code: 'EIO', syscall: 'write', path })
    offset += bytesWritten
  }
}
