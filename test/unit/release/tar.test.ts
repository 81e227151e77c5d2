import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { TarFormatError, ustarHeader } from '../../../src/fs/ustar.js'
import { type TarEntry, listTarEntries } from '../../../src/release/tar-reader.js'
import { singleFileTar } from '../../../src/release/tar-writer.js'
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

  it('is byte-identical for the same input, and to what earlier versions wrote', () => {
    const one = singleFileTar({ name: 'fleetkit-agent', mode: 0o755, mtime: 0, content })
    const two = singleFileTar({ name: 'fleetkit-agent', mode: 0o755, mtime: 0, content: Buffer.from(content) })
    assert.ok(one.equals(two))
    // A release's digest is pinned by every host that installed it: the bytes never change between versions.
    const digest = (tar: Buffer) => createHash('sha256').update(tar).digest('hex')
    assert.equal(digest(one), '65ede6ae66f5370e25f7f9d42e27946a9d7c2443786a52f040b688852a996e06')
    assert.equal(
      digest(singleFileTar({ name: 'fleetkit-agent', mode: 0o755, mtime: 1_700_000_000, content })),
      '8843dcbc36c03a1a8376d9496cb6e493127f0d70e2f0bcc561089e668ed7fce6',
    )
  })

  it('refuses a header whose checksum is wrong', () => {
    const tar = singleFileTar({ name: 'fleetkit-agent', mode: 0o755, mtime: 0, content })
    tar[0] = 'g'.charCodeAt(0)
    assert.throws(() => listTarEntries(tar), TarFormatError)
  })

  it('reads a symlink entry as a symlink', () => {
    const header = ustarHeader({
      name: 'fleetkit-agent',
      mode: 0o777,
      mtime: 0,
      size: 0,
      type: 'file',
      rootNames: true,
    })
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
