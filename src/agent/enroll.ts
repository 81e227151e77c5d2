// `fleetkit-agent enroll`: a key made here (kept on disk until staged), a CSR for it, one POST
// /v1/enroll with the single-use secret over server-auth TLS, the identity staged atomically, the secret deleted.
import { X509Certificate, createPrivateKey } from 'node:crypto'
import { readFile } from 'node:fs/promises'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { errorCodeOf } from '../protocol/agent-routes.js'
import { ENROLL_PATH, type EnrollRequest, readEnrollResponse } from '../protocol/enrollment.js'
import { readResponse } from '../protocol/read.js'
import { removeDurably } from '../fs/atomic-file.js'
import { namingRotatedPin } from './ca-rotation-diagnosis.js'
import { explainTransportError } from './clock-skew.js'
import { type AgentConfig, requireSettings } from './config.js'
import { urlsFrom } from './gateway-choice.js'
import { GatewayClient } from './gateway-client.js'
import { assertPkiDirectoryPrivate, identityStaged, stageIdentity } from './identity.js'
import { clearPendingEnrollment, pendingKeyAndCsr } from './pending-enrollment.js'
import type { Logger } from '../log/logger.js'
import { type Rng, systemRng } from '../config/rng.js'
import { jitteredRetryMs } from './backoff.js'

export interface EnrollResult {
  outcome: 'enrolled' | 'already-enrolled'
  notAfter?: string
}

export interface EnrollDeps {
  log: Logger
  sleep?: (ms: number) => Promise<void>
  /** Attempts when the gateway sheds load (429 rate limited, 503 overloaded or its database down). */
  maxAttempts?: number
  /** The jitter added to each Retry-After (default: the system's randomness). */
  rng?: Rng
}

/** Answers after which the same request is sent again after Retry-After: nothing was done. */
const RETRY_LATER = new Set([429, 503])

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export async function enroll(config: AgentConfig, deps: EnrollDeps): Promise<EnrollResult> {
  requireSettings(config, ['nodeId', 'enrollUrl', 'caFile', 'secretFile'])
  if (await identityStaged(config.pkiDir)) {
    deps.log('info', 'enroll_skipped', { reason: 'identity already staged', pki_dir: config.pkiDir })
    return { outcome: 'already-enrolled' }
  }
  // Before the secret is used up: a directory the key cannot be staged in safely is refused now.
  await assertPkiDirectoryPrivate(config.pkiDir)
  const secret = await readSecret(config.secretFile)
  const pinnedCa = await readPinnedCa(config)
  // Written before the secret leaves this host: a lost answer is retried with the same key.
  const { keyPem, csrPem, reused } = await pendingKeyAndCsr(config.pkiDir, config.nodeId)
  if (reused)
    deps.log('info', 'enroll_resumed', {
      node_id: config.nodeId,
      reason: 'a previous attempt got no answer; sending the same key',
    })
  // A gateway and its replicas: an unreachable one hands the same request (same key) to the next.
  const urls = urlsFrom(config.enrollUrls.length > 0 ? config.enrollUrls : [config.enrollUrl], config.nodeId)
  let which = 0
  const clientFor = (url: string) =>
    new GatewayClient(url, { ca: pinnedCa }, { timeoutMs: config.requestTimeoutSeconds * 1000, maxSockets: 1 })
  let client = clientFor(urls[0]!)
  const sleep = deps.sleep ?? defaultSleep
  const maxAttempts = deps.maxAttempts ?? 8
  try {
    for (let attempt = 1; ; attempt++) {
      let response
      try {
        const request: EnrollRequest = { node_id: config.nodeId, enrollment_secret: secret, csr_pem: csrPem }
        response = await client.request('POST', ENROLL_PATH, request)
      } catch (error) {
        // A pinned CA the fleet rotated away from is named as such (the seed predates a CA rotation).
        const explained = await namingRotatedPin(
          await explainTransportError(error, urls[which]!, [urls[which]!]),
          config,
          pinnedCa,
          urls[which]!,
        )
        if (explained.code !== 'GATEWAY_UNREACHABLE' || which + 1 >= urls.length) throw explained
        deps.log('warn', 'enroll_failover', { from: urls[which], to: urls[which + 1], code: explained.code })
        client.close()
        client = clientFor(urls[++which]!)
        continue
      }
      if (RETRY_LATER.has(response.status) && attempt < maxAttempts) {
        // Retry-After plus jitter: a fleet booted together and shed together must not return together.
        const waitMs = jitteredRetryMs(response.headers['retry-after'], attempt, Date.now(), deps.rng ?? systemRng)
        deps.log('warn', 'enroll_throttled', {
          attempt,
          status: response.status,
          code: errorCodeOf(response.body) ?? null,
          retry_in_ms: waitMs,
        })
        await sleep(waitMs)
        continue
      }
      if (response.status !== 200) {
        const gatewayCode = errorCodeOf(response.body) ?? 'unknown'
        throw new FleetkitError(
          'AGENT_ENROLL_FAILED',
          `the gateway answered ${response.status} ${gatewayCode} to the enrollment of ${config.nodeId}`,
          {
            actions:
              response.status === 401
                ? [
                    'issue a fresh secret: fleetkit node token NODE (--reissue for a node that enrolled before), write it to the secret file, run fleetkit-agent enroll',
                  ]
                : ['fleetkit-agent doctor'],
            data: { status: response.status, gateway_code: gatewayCode, node_id: config.nodeId },
          },
        )
      }
      const { certificate_pem: certificatePem, ca_pem: caPem } = readResponse(
        readEnrollResponse,
        response.body,
        ENROLL_PATH,
      )
      if (!matchesKey(certificatePem, keyPem)) {
        throw new FleetkitError(
          'AGENT_ENROLL_FAILED',
          'the gateway answered 200 without a certificate for the key this agent generated',
          { data: { status: 200, gateway_code: 'bad_response' } },
        )
      }
      await stageIdentity(config.pkiDir, keyPem, certificatePem, joinBundles(pinnedCa, caPem))
      await clearPendingEnrollment(config.pkiDir)
      await removeDurably(config.secretFile)
      const notAfter = new X509Certificate(certificatePem).validTo
      deps.log('info', 'enrolled', {
        node_id: config.nodeId,
        not_after: new Date(notAfter).toISOString(),
        pki_dir: config.pkiDir,
      })
      return { outcome: 'enrolled', notAfter: new Date(notAfter).toISOString() }
    }
  } finally {
    client.close()
  }
}

async function readSecret(path: string): Promise<string> {
  let secret = ''
  try {
    secret = (await readFile(path, 'utf8')).trim()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new FleetkitError(
        'ENROLLMENT_SECRET_MISSING',
        `cannot read the enrollment secret file ${path}: ${(error as NodeJS.ErrnoException).code}`,
        { data: { path } },
      )
    }
  }
  if (secret === '') {
    throw new FleetkitError('ENROLLMENT_SECRET_MISSING', `no enrollment secret in ${path} and no identity staged`, {
      actions: [
        'issue a fresh secret: fleetkit node token NODE (--reissue for a node that enrolled before)',
        `write it to ${path} (mode 0600) and run fleetkit-agent enroll`,
      ],
      data: { path },
    })
  }
  return secret
}

async function readPinnedCa(config: AgentConfig): Promise<string> {
  try {
    const pem = await readFile(config.caFile, 'utf8')
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error('no PEM certificate in it')
    return pem
  } catch (error) {
    throw new FleetkitError(
      'AGENT_CONFIG_INVALID',
      `cannot use the gateway CA bundle ${config.caFile}: ${(error as Error).message}`,
      {
        actions: [`check FLEETKIT_GATEWAY_CA_FILE in ${config.configFile}`],
        data: { setting: 'FLEETKIT_GATEWAY_CA_FILE' },
      },
    )
  }
}

export function matchesKey(certificatePem: string, keyPem: string): boolean {
  try {
    return new X509Certificate(certificatePem).checkPrivateKey(createPrivateKey(keyPem))
  } catch {
    return false
  }
}

/** Concatenates PEM bundles, dropping certificates already present. */
export function joinBundles(...bundles: string[]): string {
  const seen = new Set<string>()
  const out: string[] = []
  for (const bundle of bundles) {
    for (const block of bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []) {
      const normalized = block.replace(/\r/g, '')
      if (seen.has(normalized)) continue
      seen.add(normalized)
      out.push(normalized)
    }
  }
  return out.join('\n') + '\n'
}

/** Retry-After in seconds (or an HTTP date); else a capped exponential backoff. */
export function retryAfterMs(header: string | string[] | undefined, attempt: number): number {
  const value = Array.isArray(header) ? header[0] : header
  const seconds = Number(value)
  if (value !== undefined && Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, 300_000)
  const date = value === undefined ? Number.NaN : Date.parse(value)
  if (!Number.isNaN(date)) return Math.min(Math.max(date - Date.now(), 0), 300_000)
  return Math.min(1000 * 2 ** attempt, 60_000)
}
