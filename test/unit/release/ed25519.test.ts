import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import {
  publicKeyFromRaw,
  rawPublicKey,
  rawPublicKeyToSpkiPem,
  spkiPemToRawPublicKey,
} from '../../../src/release/ed25519-keys.js'
import { signSums, verifySumsSignature } from '../../../src/release/signature.js'

describe('Ed25519 release keys and signatures', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  const raw = rawPublicKey(publicKey)
  const sums = Buffer.from(`${'a'.repeat(64)}  fleetkit-agent-1.0.0-linux-amd64.tar.zst\n`)

  it('turns the raw base64 key into SPKI PEM and back', () => {
    assert.equal(Buffer.from(raw, 'base64').length, 32)
    const pem = rawPublicKeyToSpkiPem(raw)
    assert.match(pem, /^-----BEGIN PUBLIC KEY-----\n/)
    assert.equal(spkiPemToRawPublicKey(pem), raw)
    assert.equal(rawPublicKey(privateKey), raw)
  })

  it('refuses a public key that is not base64 of 32 bytes', () => {
    for (const bad of [
      '',
      'not base64!',
      Buffer.alloc(31).toString('base64'),
      Buffer.alloc(33).toString('base64'),
      `${raw}\nextra`,
    ]) {
      assert.throws(
        () => publicKeyFromRaw(bad),
        (e: unknown) => e instanceof FleetkitError && e.code === 'RELEASE_KEY_INVALID',
        JSON.stringify(bad),
      )
    }
  })

  it('refuses a PEM public key of another algorithm', () => {
    const rsa = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      .publicKey.export({ format: 'pem', type: 'spki' })
      .toString()
    assert.throws(
      () => spkiPemToRawPublicKey(rsa),
      (e: unknown) => e instanceof FleetkitError && e.code === 'RELEASE_KEY_INVALID',
    )
  })

  it('signs as base64 of 64 raw bytes and verifies only the exact bytes with the right key', () => {
    const signature = signSums(sums, privateKey)
    assert.match(signature, /^[A-Za-z0-9+/]{86}==\n$/)
    assert.ok(verifySumsSignature(sums, signature, publicKeyFromRaw(raw)))
    const edited = Buffer.from(sums)
    edited[0] = 'b'.charCodeAt(0)
    assert.ok(!verifySumsSignature(edited, signature, publicKeyFromRaw(raw)))
    const foreign = generateKeyPairSync('ed25519').publicKey
    assert.ok(!verifySumsSignature(sums, signature, foreign))
    for (const garbage of [
      '',
      'not a signature',
      Buffer.alloc(63).toString('base64'),
      Buffer.alloc(64).toString('base64'),
    ]) {
      assert.ok(!verifySumsSignature(sums, garbage, publicKey), garbage)
    }
  })
})
