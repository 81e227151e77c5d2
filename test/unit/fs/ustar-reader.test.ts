// The one tar header reader: what fleetkit's writer puts in comes back, and hostile headers (bad
// checksum, base-256 or non-octal numbers, a pax or GNU name that climbs out) are refused or shown.
import assert from 'node:assert/strict'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { BLOCK, TarFormatError, ustarHeader } from '../../../src/fs/ustar.js'
import {
  isEndBlock,
  readUstarHeader,
  safeMemberName,
  UstarExtensions,
  type UstarHeaderFields,
} from '../../../src/fs/ustar-reader.js'
import { listTarEntries } from '../../../src/release/tar-reader.js'
import { checkArchiveEntries } from '../../../src/release/verify-release.js'

function header(over: { name?: string; size?: number; type?: 'file' | 'directory' } = {}): Buffer {
  return ustarHeader({ name: 'fleetkit-agent', mode: 0o755, mtime: 0, size: 0, type: 'file', ...over })
}

/** Writes the checksum again after a field was changed, so only the change is judged. */
function resum(block: Buffer): Buffer {
  block.fill(0x20, 148, 156)
  let sum = 0
  for (const byte of block) sum += byte
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1')
  return block
}

/** An extension header ('x' pax, 'L' GNU long name) with its data, padded to whole blocks. */
function extension(typeflag: string, data: Buffer): Buffer {
  const block = header({ name: 'PaxHeaders/fleetkit-agent', size: data.length })
  block[156] = typeflag.charCodeAt(0)
  const padded = Buffer.alloc(Math.ceil(data.length / BLOCK) * BLOCK)
  data.copy(padded)
  return Buffer.concat([resum(block), padded])
}

function paxRecord(key: string, value: string): Buffer {
  const body = ` ${key}=${value}\n`
  // The length counts its own digits: grow it until it is stable.
  let length = body.length + 1
  while (String(length).length + body.length !== length) length += 1
  return Buffer.from(`${length}${body}`)
}

const END = Buffer.alloc(2 * BLOCK)

describe('fs: the ustar header reader', () => {
  it('reads back what the writer wrote: name, prefix, mode, ids, size and type', () => {
    const long = `${'d'.repeat(120)}/fleetkit-agent`
    const read = readUstarHeader(header({ name: long, size: 1234 }))
    assert.deepEqual(read, {
      name: long,
      linkname: '',
      typeflag: '0',
      type: 'file',
      mode: 0o755,
      uid: 0,
      gid: 0,
      size: 1234,
      format: 'posix',
    } satisfies UstarHeaderFields)
    assert.equal(readUstarHeader(header({ name: 'db/', type: 'directory' })).type, 'directory')
    assert.equal(isEndBlock(Buffer.alloc(BLOCK)), true)
    assert.equal(isEndBlock(header()), false)
  })

  it('refuses a bad checksum before believing any field, naming the offset', () => {
    const block = header()
    block[0] = 'g'.charCodeAt(0)
    assert.throws(() => readUstarHeader(block, 4096), { name: 'Error', message: /bad checksum at offset 4096/ })
    assert.throws(() => readUstarHeader(block), TarFormatError)
  })

  it('refuses base-256 and non-octal numbers, even with a correct checksum', () => {
    const base256 = header()
    base256.fill(0, 124, 136)
    base256[124] = 0x80
    base256[135] = 1
    assert.throws(() => readUstarHeader(resum(base256)), { message: /base-256/ })

    for (const [offset, text] of [
      [124, '0000000001\u00389'], // size with the digit 9
      [100, '-000755'], // a negative mode
      [108, '0x10000'], // hexadecimal uid
      [148, 'zzzzzz'], // the checksum field itself
    ] as const) {
      const block = header()
      block.write(text, offset, 'latin1')
      if (offset !== 148) resum(block)
      assert.throws(() => readUstarHeader(block), TarFormatError, `${offset}: ${text}`)
    }
  })

  it('refuses a block that is not 512 bytes', () => {
    assert.throws(() => readUstarHeader(header().subarray(0, 500)), TarFormatError)
  })

  it('reads GNU and v7 blocks without ustar’s prefix (GNU keeps other fields there)', () => {
    const gnu = header()
    gnu.write('ustar  \0', 257, 'latin1')
    gnu.write('ignored', 345, 'latin1')
    assert.deepEqual((({ name, format }) => ({ name, format }))(readUstarHeader(resum(gnu))), {
      name: 'fleetkit-agent',
      format: 'gnu',
    })
    const v7 = header()
    v7.fill(0, 257, 500)
    assert.equal(readUstarHeader(resum(v7)).format, 'v7')
  })

  it('gives a member the name of the pax or GNU header before it, for that member only', () => {
    const extensions = new UstarExtensions()
    const pax = paxRecord('path', 'bin/fleetkit-agent')
    assert.equal(extensions.absorb(readUstarHeader(extension('x', pax).subarray(0, BLOCK)), pax), true)
    const member = readUstarHeader(header())
    assert.equal(extensions.absorb(member, Buffer.alloc(0)), false)
    assert.equal(extensions.apply(member).name, 'bin/fleetkit-agent')
    assert.equal(extensions.apply(member).name, 'fleetkit-agent', 'the next member keeps its own name')

    const gnuName = Buffer.from('very/long/name\0')
    extensions.absorb(readUstarHeader(extension('L', gnuName).subarray(0, BLOCK)), gnuName)
    assert.equal(extensions.apply(member).name, 'very/long/name')
  })

  it('refuses a bad pax record and a pax size that differs from the header', () => {
    const extensions = new UstarExtensions()
    const x = readUstarHeader(extension('x', Buffer.alloc(1)).subarray(0, BLOCK))
    for (const bad of ['99 path=x\n', 'abc path=x\n', '0 path=x\n', '3 path=x\n'])
      assert.throws(() => extensions.absorb(x, Buffer.from(bad)), { message: /bad pax record/ }, bad)
    extensions.absorb(x, paxRecord('size', '99999999999'))
    assert.throws(() => extensions.apply(readUstarHeader(header({ size: 10 }))), { message: /pax size/ })
  })

  it('a pax path with .. is the name the caller sees, and the name checks refuse it', () => {
    const pax = paxRecord('path', '../../root/.ssh/authorized_keys')
    const archive = Buffer.concat([extension('x', pax), header(), END])
    const [entry] = listTarEntries(archive)
    assert.equal(entry!.name, '../../root/.ssh/authorized_keys', 'never the innocent name of the ustar header')
    assert.throws(() => safeMemberName(entry!.name), TarFormatError)
    assert.throws(
      () => checkArchiveEntries([entry!]),
      (error: unknown) => {
        return error instanceof FleetkitError && error.code === 'RELEASE_ARCHIVE_UNSAFE'
      },
    )
  })

  it('safe member names stay inside the directory they are extracted to', () => {
    assert.equal(safeMemberName('db/base/1'), 'db/base/1')
    assert.equal(safeMemberName('db/'), 'db')
    for (const name of ['', '/', '/etc/passwd', '..', 'a/../b', './a', 'a//b', 'a/./b', 'a\0b', 'a/..'])
      assert.throws(() => safeMemberName(name), TarFormatError, JSON.stringify(name))
  })
})
