// What the environment's failures become (src/checks/environment-failures.ts, via toFleetkitError):
// a full or failing database or disk is a coded error with its next step, never INTERNAL_ERROR, and
// PostgreSQL's own message (which may quote data) is never repeated.
import assert from 'node:assert/strict'

import { toFleetkitError } from '../../../src/checks/fleetkit-error.js'
import { isQueryUnavailable } from '../../../src/store/state-guard.js'
import { connectFailure } from '../../../src/store/pg-errors.js'
import { asConnectFailure, asConnectionFailure } from '../../../src/store/state-client.js'

const pgError = (code: string) =>
  Object.assign(new Error('could not extend file "base/16384/16397": secret-looking-value'), {
    code,
    severity: 'ERROR',
  })
const errnoError = (code: string, syscall: string, path?: string) =>
  Object.assign(new Error(`${code}: boom`), { code, syscall, errno: -28, ...(path ? { path } : {}) })

describe('environment failures: coded, never INTERNAL_ERROR', () => {
  it("PostgreSQL's full disk is STATE_DISK_FULL (exit 74), with what to free and without its message", () => {
    const e = toFleetkitError(pgError('53100'))
    assert.equal(e.code, 'STATE_DISK_FULL')
    assert.equal(e.exitCode, 74)
    assert.match(e.message, /disk is full \(SQLSTATE 53100 disk_full\); the change was not made/)
    assert.doesNotMatch(e.message, /secret-looking-value/)
    assert.match(e.actions.join('\n'), /free space/)
    assert.deepEqual(e.data, { sqlstate: '53100' })
  })

  it("the server's own failures are STATE_SERVER_FAILED; a connection broken mid-command STATE_UNREACHABLE", () => {
    for (const code of ['53200', '53300', '58030', 'XX001', '25006', '57014'])
      assert.equal(toFleetkitError(pgError(code)).code, 'STATE_SERVER_FAILED', code)
    for (const code of ['57P01', '08006']) assert.equal(toFleetkitError(pgError(code)).code, 'STATE_UNREACHABLE', code)
    assert.match(toFleetkitError(pgError('58030')).message, /SQLSTATE 58030 io_error/)
  })

  it('a statement the request got wrong stays what it was: a bug unless its caller coded it', () => {
    for (const code of ['23505', '42P01', '22P02'])
      assert.equal(toFleetkitError(pgError(code)).code, 'INTERNAL_ERROR', code)
    assert.equal(toFleetkitError(new TypeError('x is undefined')).code, 'INTERNAL_ERROR')
  })

  it('a local filesystem that refuses a write is FILESYSTEM_WRITE_FAILED, naming the path and the errno', () => {
    const full = toFleetkitError(errnoError('ENOSPC', 'write', '/var/lib/fleetkit/pki/ca.pem'))
    assert.equal(full.code, 'FILESYSTEM_WRITE_FAILED')
    assert.equal(full.exitCode, 74)
    assert.equal(
      full.message,
      'could not write /var/lib/fleetkit/pki/ca.pem (ENOSPC: no space left on the device); the command stopped there',
    )
    assert.deepEqual(full.data, { errno: 'ENOSPC', syscall: 'write', path: '/var/lib/fleetkit/pki/ca.pem' })
    assert.match(
      toFleetkitError(errnoError('EROFS', 'open', '/etc/x')).actions[0]!,
      /remount the filesystem holding \/etc\/x read-write/,
    )
    assert.match(toFleetkitError(errnoError('EDQUOT', 'fsync')).message, /could not write a file \(fsync\) \(EDQUOT/)
  })

  it('a copy that could not be written names its destination, not its source (copyFile, link, rename)', () => {
    const copy = Object.assign(errnoError('ENOSPC', 'copyfile', '/tmp/fleetkit-restore-x/pki/ca.pem'), {
      dest: '/var/lib/fleetkit/pki.restore-1/ca.pem',
    })
    const e = toFleetkitError(copy)
    assert.equal(e.code, 'FILESYSTEM_WRITE_FAILED')
    assert.equal(e.data?.path, '/var/lib/fleetkit/pki.restore-1/ca.pem')
    assert.match(e.message, /^could not write \/var\/lib\/fleetkit\/pki\.restore-1\/ca\.pem \(ENOSPC/)
  })

  it('a directory that cannot be made where its path says is FILESYSTEM_WRITE_FAILED; the same errno of another call is not', () => {
    const proc = toFleetkitError(errnoError('ENOENT', 'mkdir', '/proc/1/out'))
    assert.equal(proc.code, 'FILESYSTEM_WRITE_FAILED')
    assert.equal(
      proc.message,
      'could not make the directory /proc/1/out (ENOENT: this filesystem takes no new directories there, as /proc and /sys do not); the command stopped there',
    )
    assert.deepEqual(proc.data, { errno: 'ENOENT', syscall: 'mkdir', path: '/proc/1/out' })
    assert.match(
      toFleetkitError(errnoError('ENOTDIR', 'mkdir', '/etc/hostname/x')).message,
      /a part of the path is a file/,
    )
    assert.match(toFleetkitError(errnoError('EEXIST', 'mkdir', '/etc/hostname')).message, /a file is in its place/)
    const temp = toFleetkitError(errnoError('ENOENT', 'mkdtemp', '/nonexistent/fleetkit-restore-41j5ib'))
    assert.equal(temp.code, 'FILESYSTEM_WRITE_FAILED')
    assert.match(
      temp.message,
      /^could not make a temporary directory in \/nonexistent \(ENOENT: it is not a directory\)/,
    )
    assert.match(temp.actions[0]!, /^export TMPDIR=\/tmp {3}\(TMPDIR names \/nonexistent\)/)
    // ENOENT of an open is a missing file, which its caller names (or a bug): not this.
    assert.equal(toFleetkitError(errnoError('ENOENT', 'open', '/x')).code, 'INTERNAL_ERROR')
  })

  it('a file this user may not touch is FILESYSTEM_PERMISSION_DENIED (exit 77), naming the path and sudo', () => {
    const denied = toFleetkitError(errnoError('EACCES', 'open', '/var/lib/fleetkit/pki/ca.key'))
    assert.equal(denied.code, 'FILESYSTEM_PERMISSION_DENIED')
    assert.equal(denied.exitCode, 77)
    assert.equal(
      denied.message,
      'this user may not open /var/lib/fleetkit/pki/ca.key (EACCES); the command stopped there',
    )
    assert.match(denied.actions[0]!, /as root \(sudo fleetkit \.\.\.\)/)
    assert.deepEqual(denied.data, { errno: 'EACCES', syscall: 'open', path: '/var/lib/fleetkit/pki/ca.key' })
    assert.equal(toFleetkitError(errnoError('EPERM', 'unlink')).code, 'FILESYSTEM_PERMISSION_DENIED')
    // Without a system call it is some library's code, not a file's.
    assert.equal(toFleetkitError(Object.assign(new Error('x'), { code: 'EACCES' })).code, 'INTERNAL_ERROR')
  })

  it("an errno code without a system call (another library's error) is not taken for the filesystem's", () => {
    assert.equal(toFleetkitError(Object.assign(new Error('x'), { code: 'EIO' })).code, 'INTERNAL_ERROR')
    // A network errno is not a filesystem failure either (the agent's gateway errors have their own codes).
    assert.equal(toFleetkitError(errnoError('ECONNRESET', 'read')).code, 'INTERNAL_ERROR')
  })

  it("the gateway answers 503 for the database's own failures, and stays a bug for the request's", () => {
    for (const code of ['53100', '53200', '58030', '25006', '57P01', '08006'])
      assert.ok(isQueryUnavailable(pgError(code)), code)
    for (const code of ['23505', '42P01']) assert.ok(!isQueryUnavailable(pgError(code)), code)
  })
})

describe('a connection lost under a statement (src/store/state-client.ts)', () => {
  it('is SQLSTATE 08006, so the CLI says STATE_UNREACHABLE and the gateway 503, never INTERNAL_ERROR', () => {
    const lost = asConnectionFailure(new Error('Connection terminated unexpectedly')) as Error & { code: string }
    assert.equal(lost.code, '08006')
    assert.match(lost.message, /^the connection to PostgreSQL was lost: Connection terminated unexpectedly$/)
    assert.equal(toFleetkitError(lost).code, 'STATE_UNREACHABLE')
    assert.ok(isQueryUnavailable(lost))
  })

  it('leaves SQL errors and programming errors as they are', () => {
    const sql = pgError('23505')
    assert.equal(asConnectionFailure(sql), sql)
    const bug = new TypeError('Client was passed a null or undefined query')
    assert.equal(asConnectionFailure(bug), bug)
    assert.equal(asConnectionFailure('not an error'), 'not an error')
  })

  it("a connection that cannot be made is 08001, and connectFailure still names the driver's reason", () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5'), {
      code: 'ECONNREFUSED',
      syscall: 'connect',
      errno: -111,
    })
    const annotated = asConnectFailure(refused) as Error & { code: string }
    assert.equal(annotated.code, '08001')
    assert.equal(toFleetkitError(annotated).code, 'STATE_UNREACHABLE')
    const coded = connectFailure(annotated, 'postgres://u:***@h:5/db', 'DATABASE_URL')
    assert.equal(coded.code, 'STATE_UNREACHABLE')
    assert.equal(coded.message, 'cannot reach PostgreSQL at postgres://u:***@h:5/db: connection refused')
    assert.deepEqual(coded.data, { url: 'postgres://u:***@h:5/db', errno: 'ECONNREFUSED' })
    // The server's answer (a refused login) is its own SQLSTATE, not annotated.
    const login = pgError('28P01')
    assert.equal(asConnectFailure(login), login)
  })
})
