import assert from 'node:assert/strict'

import { isRenewalDue, renewalDueAt } from '../../../src/pki/renewal.js'

const CA = 'a'.repeat(64)
const cert = {
  notBefore: new Date('2026-01-01T00:00:00Z'),
  notAfter: new Date('2026-01-01T03:00:00Z'),
  issuerCaSha256: CA,
}

describe('pki: renewal rule', () => {
  it('is due only when less than a third of the stored lifetime is left', () => {
    assert.equal(isRenewalDue(cert, CA, new Date('2026-01-01T00:00:01Z')), false)
    assert.equal(
      isRenewalDue(cert, CA, new Date('2026-01-01T02:00:00Z')),
      false,
      'exactly a third left is not less than a third',
    )
    assert.equal(isRenewalDue(cert, CA, new Date('2026-01-01T02:00:01Z')), true)
    assert.equal(renewalDueAt(cert).toISOString(), '2026-01-01T02:00:00.000Z')
  })

  it('is due at once for a certificate from another CA (rotation)', () => {
    assert.equal(isRenewalDue(cert, 'b'.repeat(64), new Date('2026-01-01T00:00:01Z')), true)
  })
})
