import assert from 'node:assert/strict'

import { isFleetkitError } from '../../../src/checks/fleetkit-error.js'
import {
  AGENT_PATHS,
  errorCodeOf,
  jobPath,
  readHeartbeatRequest,
  readJobCompleteRequest,
  readJobHeartbeatRequest,
  readLeaseResponse,
  readNodeLostBody,
} from '../../../src/protocol/agent-routes.js'
import { readIdentityResponse, readRenewResponse } from '../../../src/protocol/renewal.js'
import { readChecksJobResult } from '../../../src/protocol/check-result.js'
import { NODE_ID, readEnrollRequest, readEnrollResponse } from '../../../src/protocol/enrollment.js'
import { readRecoverChallengeRequest } from '../../../src/protocol/recovery.js'
import { GRAMMAR, isNodeIdOrUuid } from '../../../src/definition/grammar.js'
import { readRequest, readResponse } from '../../../src/protocol/read.js'
import { WireFormatError, printableText } from '../../../src/protocol/wire-format.js'

const JOB_ID = '0b7c9a52-7f0e-4a55-9d1f-3f4a8e1c2b3d'
const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'
const refuses = (fn: () => unknown, path: RegExp) =>
  assert.throws(fn, (e: unknown) => e instanceof WireFormatError && path.test(e.path), String(path))

describe('protocol: checks result', () => {
  it('reads a well-formed result into one CheckResult type, dropping unknown fields', () => {
    const result = readChecksJobResult({
      checks: [
        { id: 'host:br-netfilter', status: 'fail', code: 'BR_NETFILTER_OFF', detail: 'module not loaded', extra: 1 },
        { id: 'agent:clock-skew', status: 'warn', code: 'CLOCK_SKEW', detail: 'skew 900 ms' },
        { id: 'host:disk-free', status: 'pass', detail: '40 GiB free' },
      ],
    })
    assert.deepEqual(result.checks, [
      { id: 'host:br-netfilter', status: 'fail', code: 'BR_NETFILTER_OFF', detail: 'module not loaded' },
      { id: 'agent:clock-skew', status: 'warn', code: 'CLOCK_SKEW', detail: 'skew 900 ms' },
      { id: 'host:disk-free', status: 'pass', detail: '40 GiB free' },
    ])
  })

  it('reads not_applicable as a status of its own, and refuses one that names a failure code', () => {
    const na = { id: 'host:br-netfilter', status: 'not_applicable', detail: 'the node declares container: true' }
    assert.deepEqual(readChecksJobResult({ checks: [na] }).checks, [na])
    refuses(() => readChecksJobResult({ checks: [{ ...na, code: 'BR_NETFILTER_OFF' }] }), /code$/)
    refuses(() => readChecksJobResult({ checks: [{ ...na, status: 'n/a' }] }), /status$/)
  })

  it('refuses an unregistered failure code instead of passing it through', () => {
    refuses(
      () =>
        readChecksJobResult({
          checks: [{ id: 'host:br-netfilter', status: 'fail', code: 'HOST_BR_NETFILTER_MISSING', detail: 'x' }],
        }),
      /^result\.checks\[0\]\.code$/,
    )
    refuses(
      () =>
        readChecksJobResult({ checks: [{ id: 'host:br-netfilter', status: 'warn', code: 'toString', detail: 'x' }] }),
      /code$/,
    )
    refuses(
      () =>
        readChecksJobResult({ checks: [{ id: 'host:br-netfilter', status: 'warn', code: '__proto__', detail: 'x' }] }),
      /code$/,
    )
  })

  it('refuses an unknown status, a malformed ID, a failing check without a code, duplicates and an empty or missing list', () => {
    const ok = { id: 'host:disk-free', status: 'pass', detail: '' }
    refuses(() => readChecksJobResult({ checks: [{ ...ok, status: 'exploded' }] }), /status$/)
    refuses(() => readChecksJobResult({ checks: [{ ...ok, status: 'PASS' }] }), /status$/)
    refuses(() => readChecksJobResult({ checks: [{ ...ok, id: 'Bad ID' }] }), /\.id$/)
    refuses(() => readChecksJobResult({ checks: [{ ...ok, id: 'host:disk-free\u001b[2J' }] }), /\.id$/)
    refuses(() => readChecksJobResult({ checks: [{ ...ok, status: 'fail' }] }), /code$/)
    refuses(() => readChecksJobResult({ checks: [ok, ok] }), /checks\[1\]\.id$/)
    refuses(() => readChecksJobResult({ checks: [] }), /checks$/)
    refuses(() => readChecksJobResult({}), /checks$/)
    refuses(() => readChecksJobResult(null), /^result$/)
    refuses(() => readChecksJobResult({ checks: ['junk'] }), /checks\[0\]$/)
    refuses(
      () => readChecksJobResult({ checks: Array.from({ length: 201 }, (_, i) => ({ ...ok, id: `host:c${i}` })) }),
      /checks$/,
    )
    refuses(() => readChecksJobResult({ checks: [{ ...ok, detail: 7 }] }), /detail$/)
    refuses(() => readChecksJobResult({ checks: [{ id: ok.id, status: ok.status }] }), /detail$/)
  })

  it('strips terminal control sequences and characters from the detail, and bounds it', () => {
    const [check] = readChecksJobResult({
      checks: [
        {
          id: 'host:disk-free',
          status: 'pass',
          detail: 'ok\u001b[31m red\u001b[0m\r\nnext\u0007 \u001b]0;title\u0007\u202eevil\u009b',
        },
      ],
    }).checks
    assert.equal(check!.detail, 'ok red next evil')
    // eslint-disable-next-line no-control-regex
    assert.doesNotMatch(check!.detail, /[\u0000-\u001f\u007f-\u009f\u202e]/)
    const [long] = readChecksJobResult({
      checks: [{ id: 'host:disk-free', status: 'pass', detail: 'x'.repeat(1900) }],
    }).checks
    assert.equal(long!.detail.length, 500)
    assert.equal(printableText('\u001b[1;31mBOLD\u001b[m', 10), 'BOLD')
    // What PostgreSQL cannot store: a NUL becomes a space, an unpaired surrogate U+FFFD; a pair is kept.
    assert.equal(printableText('a\u0000b \ud800c\udfff \ud83d\ude00', 20), 'a b \ufffdc\ufffd \ud83d\ude00')
  })

  it('never reads a field from the prototype', () => {
    const hostile = JSON.parse(
      '{"__proto__": {"checks": [{"id": "host:x", "status": "pass", "detail": ""}]}}',
    ) as unknown
    refuses(() => readChecksJobResult(hostile), /checks$/)
    assert.equal(({} as { checks?: unknown }).checks, undefined)
  })
})

describe('protocol: agent routes', () => {
  it('reads a lease with a job, and with none', () => {
    const lease = {
      job: {
        id: JOB_ID,
        kind: 'checks',
        payload: {},
        lease_token: 't0k',
        lease_expires_at: '2026-01-01T00:02:00.000Z',
        attempt: 1,
        extra: true,
      },
      server_time: '2026-01-01T00:00:00.000Z',
    }
    assert.deepEqual(readLeaseResponse(lease), {
      job: {
        id: JOB_ID,
        kind: 'checks',
        payload: {},
        lease_token: 't0k',
        lease_expires_at: '2026-01-01T00:02:00.000Z',
        attempt: 1,
      },
    })
    assert.deepEqual(readLeaseResponse({ job: null }), { job: null })
    refuses(() => readLeaseResponse({ job: { ...lease.job, id: 12 } }), /^job\.id$/)
    refuses(() => readLeaseResponse({ job: { ...lease.job, lease_expires_at: 'soon' } }), /lease_expires_at$/)
    refuses(() => readLeaseResponse({ job: { ...lease.job, payload: [] } }), /payload$/)
    refuses(() => readLeaseResponse({ job: { ...lease.job, attempt: 0 } }), /attempt$/)
    refuses(() => readLeaseResponse([]), /^body$/)
  })

  it("reads a lost node's cleanup list in its one shape only", () => {
    assert.deepEqual(readNodeLostBody({ cleanup: [{ job_id: JOB_ID }], error: { code: 'node_lost', message: 'x' } }), {
      cleanup: [{ job_id: JOB_ID }],
    })
    refuses(() => readNodeLostBody({ cleanup: [JOB_ID] }), /^cleanup\[0\]$/)
    refuses(() => readNodeLostBody({ cleanup: [{ id: JOB_ID }] }), /cleanup\[0\]\.job_id$/)
    refuses(() => readNodeLostBody({ cleanup: Array.from({ length: 65 }, () => ({ job_id: JOB_ID })) }), /^cleanup$/)
  })

  it('reads a completion: succeeded carries a checks result, failed an error; anything else is refused', () => {
    const checks = [{ id: 'host:disk-free', status: 'pass', detail: 'ok' }]
    assert.deepEqual(readJobCompleteRequest({ lease_token: 't', status: 'succeeded', result: { checks } }), {
      lease_token: 't',
      status: 'succeeded',
      result: { checks },
    })
    assert.deepEqual(
      readJobCompleteRequest({
        lease_token: 't',
        status: 'failed',
        result: { error: { code: 'job_error', message: 'boom\nline two' } },
      }),
      { lease_token: 't', status: 'failed', result: { error: { code: 'job_error', message: 'boom line two' } } },
    )
    refuses(() => readJobCompleteRequest({ lease_token: 't', status: 'succeeded', result: {} }), /^result\.checks$/)
    refuses(() => readJobCompleteRequest({ lease_token: 't', status: 'failed', result: {} }), /^result\.error$/)
    refuses(() => readJobCompleteRequest({ lease_token: 't', status: 'done', result: { checks } }), /^status$/)
    refuses(() => readJobCompleteRequest({ status: 'succeeded', result: { checks } }), /^lease_token$/)
    refuses(
      () => readJobCompleteRequest({ lease_token: 'x'.repeat(257), status: 'succeeded', result: { checks } }),
      /^lease_token$/,
    )
    refuses(() => readJobHeartbeatRequest({ lease_token: '' }), /^lease_token$/)
  })

  it('reads heartbeat facts bounded and refuses facts that are not an object', () => {
    assert.equal(readHeartbeatRequest({}).facts, null)
    assert.equal(readHeartbeatRequest({ facts: { cpu_count: 'many' } }).facts?.cpu_count, null)
    refuses(() => readHeartbeatRequest({ facts: 'x' }), /^facts$/)
  })

  it('reads renewal, enrollment and identity answers and refuses what is not a certificate', () => {
    const renewed = { certificate_pem: PEM, ca_bundle_pem: PEM + PEM, not_after: '2026-01-02T00:00:00.000Z' }
    assert.deepEqual(readRenewResponse({ ...renewed, server_time: 'x' }), renewed)
    refuses(() => readRenewResponse({ ...renewed, certificate_pem: 'not a pem' }), /^certificate_pem$/)
    refuses(() => readRenewResponse({ ...renewed, ca_bundle_pem: undefined }), /^ca_bundle_pem$/)
    assert.deepEqual(readEnrollResponse({ certificate_pem: PEM, ca_pem: PEM, not_after: '2026-01-02T00:00:00Z' }), {
      certificate_pem: PEM,
      ca_pem: PEM,
      not_after: '2026-01-02T00:00:00Z',
    })
    refuses(() => readEnrollResponse({ certificate_pem: PEM, not_after: '2026-01-02T00:00:00Z' }), /^ca_pem$/)
    const identity = {
      node_id: 'n1',
      status: 'active',
      certificate: {
        serial: '4a0b',
        not_before: '2026-01-01T00:00:00.000Z',
        not_after: '2026-01-02T00:00:00.000Z',
        fingerprint_sha256: 'a'.repeat(64),
        issuer_ca_sha256: 'b'.repeat(64),
      },
    }
    assert.deepEqual(readIdentityResponse(identity), identity)
    refuses(
      () => readIdentityResponse({ ...identity, certificate: { ...identity.certificate, fingerprint_sha256: 'zz' } }),
      /fingerprint_sha256$/,
    )
  })

  it("reads a claimed node id only as fleet.yaml's node id or a UUID, what the agent accepts", () => {
    assert.equal(NODE_ID.source, GRAMMAR.nodeId.pattern, 'the wire and the definition agree on what a node id is')
    const enroll = { node_id: 'web-1', enrollment_secret: 's', csr_pem: '' }
    const grammar = new RegExp(GRAMMAR.nodeId.pattern)
    const uuid = '0b6c3f52-7d4e-4a57-9a44-0f2f0c6b1e11'
    for (const id of ['web-1', 'a', `a${'b'.repeat(61)}c`, 'db-01-fsn1', uuid]) {
      assert.ok(grammar.test(id) || id === uuid, id)
      assert.equal(readEnrollRequest({ ...enroll, node_id: id }).node_id, id)
    }
    for (const bad of [
      '',
      'Web-1',
      '1web',
      'web-',
      'a'.repeat(64),
      'web\u001b[2J',
      'web\u0000',
      '../../etc',
      'web 1',
      'web.1',
      'wéb',
      uuid.toUpperCase(),
      5,
    ])
      refuses(() => readEnrollRequest({ ...enroll, node_id: bad }), /^node_id$/)
    // The gateway takes what the agent's own configuration takes, no more and no less.
    for (const id of [
      'web-1',
      uuid,
      uuid.toUpperCase(),
      'web.1',
      'Web-1',
      '',
      `${uuid}x`,
      'x'.repeat(63),
      'x'.repeat(64),
    ])
      assert.equal(
        (() => {
          try {
            readEnrollRequest({ ...enroll, node_id: id })
            return true
          } catch {
            return false
          }
        })(),
        isNodeIdOrUuid(id),
        id,
      )
    assert.equal(readRecoverChallengeRequest({ node_id: 'db-1' }).node_id, 'db-1')
    refuses(() => readRecoverChallengeRequest({ node_id: '\u001b]0;x\u0007' }), /^node_id$/)
  })

  it('fills job paths and reads error codes without throwing', () => {
    assert.equal(jobPath(AGENT_PATHS.jobComplete, JOB_ID), `/v1/agent/jobs/${JOB_ID}/complete`)
    assert.equal(jobPath(AGENT_PATHS.jobHeartbeat, '../x'), '/v1/agent/jobs/..%2Fx/heartbeat')
    assert.equal(errorCodeOf({ error: { code: 'renewal_not_due', message: 'x' } }), 'renewal_not_due')
    for (const body of [{}, null, 'x', { error: 'x' }, { error: { code: 7 } }, { error: { code: 'Not Snake' } }])
      assert.equal(errorCodeOf(body), undefined)
  })
})

describe('protocol: the two sides of a violation', () => {
  it('the gateway refuses a request with REQUEST_INVALID naming the field and never its value', () => {
    const secret = 's3cret-value-that-must-not-leak'
    assert.throws(
      () => readRequest(readEnrollRequest, { node_id: ['n1'], enrollment_secret: secret, csr_pem: '' }),
      (e: unknown) => {
        assert.ok(isFleetkitError(e))
        assert.equal(e.code, 'REQUEST_INVALID')
        assert.match(e.message, /node_id/)
        return true
      },
    )
    assert.throws(
      () => readRequest(readEnrollRequest, { node_id: 'n1', enrollment_secret: secret.repeat(100), csr_pem: '' }),
      (e: unknown) => {
        assert.ok(isFleetkitError(e))
        assert.doesNotMatch(`${e.message} ${JSON.stringify(e.data)}`, /s3cret/)
        assert.equal(e.data?.field, 'enrollment_secret')
        return true
      },
    )
  })

  it('the agent refuses a response with GATEWAY_RESPONSE_INVALID naming the route', () => {
    assert.throws(
      () => readResponse(readLeaseResponse, { job: 'x' }, AGENT_PATHS.lease),
      (e: unknown) => {
        assert.ok(isFleetkitError(e))
        assert.equal(e.code, 'GATEWAY_RESPONSE_INVALID')
        assert.equal(e.data?.route, '/v1/agent/lease')
        return true
      },
    )
  })
})
