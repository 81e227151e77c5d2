import assert from 'node:assert/strict'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { type TarEntry, TarFormatError, listTarEntries } from '../../../src/release/tar-reader.js'
import { singleFileTar, ustarHeader } from '../../../src/release/tar-writer.js'
import { checkArchiveEntries } from '../../../src/release/verify-release.js'

function entry(over: Partial<TarEntry>): TarEntry {
  return {
    name: 'fleetkit-agent',
    type: 'file',
    typeflag: '0',
    mode: 0o755,
    uid: 0,
    gid: 0,
    size: 1,
    linkname: '',
    dataOffset: 512,
    ...over,
  }
}

function unsafeCode(entries: TarEntry[]): string | undefined {
  try {
    checkArchiveEntries(entries)
    return undefined
  } catch (error) {
    return error instanceof FleetkitError ? error.code : 'other'
  }
}

describe('single-file tar', () => {
  const content = Buffer.from('#!/bin/sh\necho "fleetkit-agent 1.0.0"\n')

  it('writes one regular root-owned entry that the reader lists back', () => {
    const tar = singleFileTar({ name: 'fleetkit-agent', mode: 0o755, mtime: 0, content })
    assert.equal(tar.length % 10240, 0)
    const entries = listTarEntries(tar)
    assert.equal(entries.length, 1)
    const [only] = entries
    assert.deepEqual(
      { name: only!.name, type: only!.type, mode: only!.mode, uid: only!.uid, gid: only!.gid, size: only!.size },
      { name: 'fleetkit-agent', type: 'file', mode: 0o755, uid: 0, gid: 0, size: content.length },
    )
    assert.deepEqual(tar.subarray(only!.dataOffset, only!.dataOffset + only!.size), content)
  })

  it('is byte-identical for the same input', () => {
    const one = singleFileTar({ name: 'fleetkit-agent', mode: 0o755, mtime: 0, content })
    const two = singleFileTar({ name: 'fleetkit-agent', mode: 0o755, mtime: 0, content: Buffer.from(content) })
    assert.ok(one.equals(two))
  })

  it('refuses a header whose checksum is wrong', () => {
    const tar = singleFileTar({ name: 'fleetkit-agent', mode: 0o755, mtime: 0, content })
    tar[0] = 'g'.charCodeAt(0)
    assert.throws(() => listTarEntries(tar), TarFormatError)
  })

  it('reads a symlink entry as a symlink', () => {
    const header = ustarHeader({ name: 'fleetkit-agent', mode: 0o777, mtime: 0, size: 0 })
    header[156] = '2'.charCodeAt(0)
    // Recompute the checksum after changing the type flag.
    header.fill(0x20, 148, 156)
    let sum = 0
    for (const byte of header) sum += byte
    header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1')
    const entries = listTarEntries(Buffer.concat([header, Buffer.alloc(1024)]))
    assert.equal(entries[0]!.type, 'symlink')
  })
})

describe('archive entry rules', () => {
  it('accepts exactly one regular file named fleetkit-agent', () => {
    assert.equal(unsafeCode([entry({})]), undefined)
  })

  it('refuses links, directories, extra entries, paths and an empty archive', () => {
    const cases: TarEntry[][] = [
      [],
      [entry({}), entry({ name: 'authorized_keys' })],
      [entry({ type: 'symlink', typeflag: '2', linkname: '/bin/sh' })],
      [entry({ type: 'hardlink', typeflag: '1', linkname: 'other' })],
      [entry({ type: 'directory', typeflag: '5', name: 'fleetkit-agent/' })],
      [entry({ name: '../fleetkit-agent' })],
      [entry({ name: './fleetkit-agent' })],
      [entry({ name: '/usr/local/bin/fleetkit-agent' })],
      [entry({ type: 'other', typeflag: '3' })],
    ]
    for (const entries of cases) assert.equal(unsafeCode(entries), 'RELEASE_ARCHIVE_UNSAFE', JSON.stringify(entries))
  })
})
