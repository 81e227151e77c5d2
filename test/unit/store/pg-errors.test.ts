import assert from 'node:assert/strict'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import {
  connectFailure,
  isConnectionError,
  isRetryableTransactionError,
  isUniqueViolation,
  redactDatabaseUrl,
  sqlState,
} from '../../../src/store/pg-errors.js'

const pgError = (fields: Record<string, unknown>) => Object.assign(new Error('text that must not matter'), fields)

describe('pg error mapping', () => {
  it('reads SQLSTATE only from a five-character code', () => {
    assert.equal(sqlState(pgError({ code: '23505' })), '23505')
    assert.equal(sqlState(pgError({ code: 'ECONNREFUSED' })), undefined)
    // Five-letter errno codes are not SQLSTATEs (none of PostgreSQL's classes starts with E).
    assert.equal(sqlState(pgError({ code: 'EPIPE' })), undefined)
    assert.equal(sqlState(pgError({ code: 'XX001' })), 'XX001')
    assert.equal(sqlState(undefined), undefined)
  })

  it('matches unique violations by code and constraint, not by message', () => {
    const e = pgError({ code: '23505', constraint: 'node_certificates_fingerprint_sha256_key', message: 'anything' })
    assert.ok(isUniqueViolation(e))
    assert.ok(isUniqueViolation(e, 'node_certificates_fingerprint_sha256_key'))
    assert.ok(!isUniqueViolation(e, 'other'))
    assert.ok(!isUniqueViolation(new Error('duplicate key value violates unique constraint')))
  })

  it('classifies connection failures and retryable transactions', () => {
    assert.ok(isConnectionError(pgError({ code: 'ECONNREFUSED' })))
    assert.ok(isConnectionError(pgError({ code: 'EPIPE' })))
    assert.ok(isConnectionError(pgError({ code: '08006' })))
    assert.ok(isConnectionError(pgError({ code: '57P01' })))
    assert.ok(!isConnectionError(pgError({ code: '23505' })))
    assert.ok(isRetryableTransactionError(pgError({ code: '40001' })))
    assert.ok(isRetryableTransactionError(pgError({ code: '40P01' })))
    assert.ok(!isRetryableTransactionError(pgError({ code: '23505' })))
  })

  it('turns a refused connection into STATE_UNREACHABLE with the redacted URL', () => {
    const error = connectFailure(pgError({ code: 'ECONNREFUSED' }), 'postgres://u:***@h:5432/db', 'DATABASE_URL')
    assert.ok(error instanceof FleetkitError)
    assert.equal(error.code, 'STATE_UNREACHABLE')
    assert.match(error.message, /postgres:\/\/u:\*\*\*@h:5432\/db: connection refused/)
    assert.equal(error.data?.errno, 'ECONNREFUSED')
    assert.ok(error.actions.at(-1)?.includes('fleetkit runbook STATE_UNREACHABLE'))
  })

  it('turns a refused login into STATE_AUTH_REFUSED and a missing database into STATE_UNREACHABLE', () => {
    assert.equal(connectFailure(pgError({ code: '28P01' }), 'x', 'DATABASE_URL').code, 'STATE_AUTH_REFUSED')
    const missing = connectFailure(pgError({ code: '3D000' }), 'x', 'DATABASE_URL')
    assert.equal(missing.code, 'STATE_UNREACHABLE')
    assert.match(missing.message, /does not exist/)
  })

  it("turns a server's own failure at connect into the code a statement's gets: a full disk is STATE_DISK_FULL", () => {
    // A new backend on a full disk cannot write its relcache init file: FATAL 53100 before any statement.
    const full = connectFailure(pgError({ code: '53100', severity: 'FATAL' }), 'postgres://u:***@h:5/db', 'embedded')
    assert.equal(full.code, 'STATE_DISK_FULL')
    assert.equal(full.exitCode, 74)
    assert.match(full.message, /its disk is full \(SQLSTATE 53100 disk_full\)/)
    assert.doesNotMatch(full.message, /text that must not matter/)
    assert.deepEqual(full.data, { url: 'postgres://u:***@h:5/db', sqlstate: '53100' })
    assert.ok(full.actions[0]?.startsWith('free space on the filesystem of the PostgreSQL data directory'))
    assert.ok(!full.actions.some((action) => action.includes('db stop')), 'never advise stopping the server')
    // Other resources, I/O errors, corruption: STATE_SERVER_FAILED, not "cannot reach".
    for (const code of ['53200', '53300', '58030', 'XX000'])
      assert.equal(connectFailure(pgError({ code }), 'x', 'DATABASE_URL').code, 'STATE_SERVER_FAILED', code)
    // A server starting up or shutting down is not there yet: still STATE_UNREACHABLE.
    const starting = connectFailure(pgError({ code: '57P03' }), 'x', 'embedded')
    assert.equal(starting.code, 'STATE_UNREACHABLE')
    assert.match(starting.message, /starting up or shutting down/)
  })

  it('redacts passwords from URLs and hides what is not a URL', () => {
    assert.equal(
      redactDatabaseUrl('postgres://fleet:s3cret@db.example.net:5432/fleet'),
      'postgres://fleet:***@db.example.net:5432/fleet',
    )
    assert.equal(redactDatabaseUrl('postgres://fleet@db/fleet'), 'postgres://fleet@db/fleet')
    assert.equal(
      redactDatabaseUrl('postgresql://a:b@h/d?sslmode=require&password=zz'),
      'postgresql://a:***@h/d?sslmode=require&password=***',
    )
    const kv = redactDatabaseUrl('host=db password=s3cret')
    assert.ok(!kv.includes('s3cret'))
  })

  it('never shows a password whose unencoded / ? or # ends the authority early', () => {
    // URL parsing would put the rest of such a password in the path, query or fragment.
    for (const url of ['postgres://u:12#s3cret@h/d', 'postgres://u:12?s3cret@h/d', 'postgres://u:12/s3cret@h/d']) {
      const shown = redactDatabaseUrl(url)
      assert.ok(!shown.includes('s3cret') && !shown.includes('12'), `${url} shown as ${shown}`)
    }
    assert.equal(redactDatabaseUrl('postgres://u:p@ss@h/d'), 'postgres://u:***@h/d')
    assert.equal(redactDatabaseUrl('postgres://u:pw@h/d#s3cret'), 'postgres://u:***@h/d')
  })
})
