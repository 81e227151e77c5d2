import assert from 'node:assert/strict'

import { formatSha256Sums, parseSha256Sums, sha256Hex } from '../../../src/release/sha256sums.js'

describe('SHA256SUMS', () => {
  const a = { name: 'fleetkit-agent-1.0.0-linux-arm64.tar.zst', sha256: sha256Hex(Buffer.from('arm')) }
  const b = { name: 'fleetkit-agent-1.0.0-linux-amd64.tar.zst', sha256: sha256Hex(Buffer.from('amd')) }

  it('writes sha256sum lines sorted by name, two spaces, one newline each', () => {
    assert.equal(formatSha256Sums([a, b]), `${b.sha256}  ${b.name}\n${a.sha256}  ${a.name}\n`)
  })

  it('reads back what it writes and counts malformed lines', () => {
    const text = `${formatSha256Sums([a, b])}not a sum line\n${'A'.repeat(64)}  upper-case.tar.zst\n`
    const parsed = parseSha256Sums(text)
    assert.deepEqual(parsed.lines, [b, a])
    assert.equal(parsed.malformed, 2)
  })

  it('reads the binary-mode marker as sha256sum does', () => {
    assert.deepEqual(parseSha256Sums(`${a.sha256} *${a.name}\n`).lines, [a])
  })

  it('computes the SHA-256 sha256sum prints', () => {
    assert.equal(sha256Hex(Buffer.from('abc')), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })
})
