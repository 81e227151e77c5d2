// `fleetkit-agent doctor`: one line per check (bridge netfilter, the data volume, the
// identity files and expiry, reaching the gateway, clock skew) with check IDs from the registry.
import { readFile, stat } from 'node:fs/promises'

import { toFleetkitError } from '../checks/fleetkit-error.js'
import { AGENT_PATHS } from '../protocol/agent-routes.js'
import { readIdentityResponse } from '../protocol/renewal.js'
import type { CheckResult } from '../protocol/check-result.js'
import { readResponse } from '../protocol/read.js'
import { namingMissedRotation, namingRotatedPin } from './ca-rotation-diagnosis.js'
import { explainTransportError } from './clock-skew.js'
import type { AgentConfig } from './config.js'
import { urlsFrom } from './gateway-choice.js'
import { GatewayClient } from './gateway-client.js'
import type { Host } from './host.js'
import {
  type CheckContext,
  checkBrNetfilter,
  checkCertificate,
  checkClockSkew,
  checkDataVolume,
  checkDiskFree,
} from './host-checks.js'
import { type Identity, identityPaths, loadIdentity } from './identity.js'
import { AgentSession, probeUrls } from './session.js'

export interface DoctorDeps {
  host: Host
  now: () => Date
}

export async function runDoctor(config: AgentConfig, deps: DoctorDeps): Promise<CheckResult[]> {
  const base: CheckContext = {
    host: deps.host,
    dataMount: config.dataMount,
    minFreeGb: config.minFreeGb,
    unitName: config.unitName,
    firewallUnit: config.firewallUnit,
    now: deps.now(),
    certificate: undefined,
    clockSkewMs: undefined,
    container: config.container,
  }
  const results: CheckResult[] = [await checkBrNetfilter(base), await checkDataVolume(base), await checkDiskFree(base)]

  let identity: Identity | undefined
  try {
    identity = await loadIdentity(config.pkiDir, config.caFile)
  } catch (error) {
    const e = toFleetkitError(error)
    results.push({ id: 'agent:certificate', status: 'fail', code: e.code, detail: e.message })
  }
  if (identity) {
    const loose = await looseModes(config.pkiDir)
    const certificate = checkCertificate({ now: deps.now(), certificate: identity.window })
    if (loose.length > 0 && certificate.status !== 'fail') {
      results.push({
        id: 'agent:certificate',
        status: 'fail',
        code: 'IDENTITY_INVALID',
        detail: `identity files readable by others: ${loose.join(', ')}`,
      })
    } else results.push(certificate)
  }

  const gateway = await checkGateway(config, identity)
  results.push(gateway.result, checkClockSkew({ clockSkewMs: gateway.skewMs }))
  return results
}

/** The bundle the agent verifies the gateway with: the one renewals keep, else the pinned one. */
async function looseModes(pkiDir: string): Promise<string[]> {
  const loose: string[] = []
  for (const path of Object.values(identityPaths(pkiDir))) {
    try {
      if (((await stat(path)).mode & 0o077) !== 0) loose.push(path)
    } catch {
      // gateway-ca.pem is absent until the first renewal: the pinned bundle is used then.
    }
  }
  return loose
}

/** The longest detail a check result carries (src/protocol/check-result.ts). */
const DETAIL_MAX = 500

/**
 * With an identity: GET /v1/agent/identity over mTLS at every gateway of FLEETKIT_GATEWAY_URL, the
 * node's start gateway first. All accept: pass; some: warn naming the others (the agent moves past
 * them); none: fail with the start gateway's code. Without an identity: /healthz on the enrollment listener
 * with the pinned CA.
 */
async function checkGateway(
  config: AgentConfig,
  identity: Identity | undefined,
): Promise<{ result: CheckResult; skewMs: number | undefined }> {
  const id = 'agent:gateway'
  if (identity && config.gatewayUrl !== '') {
    const urls = urlsFrom(config.gatewayUrls.length > 0 ? config.gatewayUrls : [config.gatewayUrl], config.nodeId)
    const checks = await Promise.all(
      urls.map((url) => checkAgentListener({ ...config, gatewayUrl: url, gatewayUrls: [url] }, identity)),
    )
    const start = checks[0]!
    if (checks.length === 1) return start
    const failed = checks.filter((c) => c.result.status !== 'pass')
    const skewMs = start.skewMs ?? checks.find((c) => c.skewMs !== undefined)?.skewMs
    if (failed.length === checks.length)
      return {
        result: {
          ...start.result,
          detail: clip(`none of ${checks.length} gateways answers: ${checks.map((c) => c.result.detail).join('; ')}`),
        },
        skewMs,
      }
    if (failed.length === 0)
      return {
        result: {
          id,
          status: 'pass',
          detail: clip(`all ${checks.length} gateways accept certificate ${identity.serial}; ${start.result.detail}`),
        },
        skewMs,
      }
    const first = failed[0]!.result
    return {
      result: {
        id,
        status: 'warn',
        ...(first.code ? { code: first.code } : {}),
        detail: clip(
          `${failed.length} of ${checks.length} gateways fail (the agent moves past them): ${failed.map((c) => c.result.detail).join('; ')}`,
        ),
      },
      skewMs,
    }
  }
  if (config.enrollUrl === '')
    return {
      result: {
        id,
        status: 'fail',
        code: 'AGENT_CONFIG_INVALID',
        detail: 'neither FLEETKIT_GATEWAY_URL with an identity nor FLEETKIT_ENROLL_URL is set',
      },
      skewMs: undefined,
    }
  let ca: string
  try {
    ca = await readFile(config.caFile, 'utf8')
  } catch {
    return {
      result: {
        id,
        status: 'fail',
        code: 'AGENT_CONFIG_INVALID',
        detail: `cannot read the gateway CA bundle ${config.caFile}`,
      },
      skewMs: undefined,
    }
  }
  const client = new GatewayClient(
    config.enrollUrl,
    { ca },
    { timeoutMs: config.requestTimeoutSeconds * 1000, maxSockets: 1 },
  )
  try {
    const response = await client.request('GET', '/healthz')
    return {
      result:
        response.status === 200
          ? { id, status: 'pass', detail: `${config.enrollUrl} answers (not enrolled yet)` }
          : {
              id,
              status: 'fail',
              code: 'GATEWAY_UNREACHABLE',
              detail: `${config.enrollUrl}/healthz answered ${response.status}`,
            },
      skewMs: client.lastSkewMs,
    }
  } catch (error) {
    const e = await namingRotatedPin(
      await explainTransportError(error, config.enrollUrl, probeUrls(config)),
      config,
      ca,
      config.enrollUrl,
    )
    return {
      result: { id, status: 'fail', code: e.code, detail: e.message },
      skewMs: typeof e.data?.skew_ms === 'number' ? e.data.skew_ms : undefined,
    }
  } finally {
    client.close()
  }
}

/** GET /v1/agent/identity over mTLS at the one gateway of `config`. */
async function checkAgentListener(
  config: AgentConfig,
  identity: Identity,
): Promise<{ result: CheckResult; skewMs: number | undefined }> {
  const id = 'agent:gateway'
  const session = new AgentSession(config, identity)
  const url = session.gateways.current
  try {
    const response = await session.call('GET', AGENT_PATHS.identity)
    const answer =
      response.status === 200 ? readResponse(readIdentityResponse, response.body, AGENT_PATHS.identity) : undefined
    return {
      result: answer
        ? { id, status: 'pass', detail: `${url} accepts certificate ${identity.serial}; node status ${answer.status}` }
        : { id, status: 'fail', code: 'GATEWAY_UNREACHABLE', detail: `${url} answered ${response.status}` },
      skewMs: session.skewMs,
    }
  } catch (error) {
    // A handshake that fails after a CA rotation is named as such, not as an unreachable gateway.
    const e = await namingMissedRotation(toFleetkitError(error), config, identity)
    return {
      result: { id, status: 'fail', code: e.code, detail: e.message },
      skewMs: typeof e.data?.skew_ms === 'number' ? e.data.skew_ms : session.skewMs,
    }
  } finally {
    session.close()
  }
}

function clip(detail: string): string {
  return detail.length <= DETAIL_MAX ? detail : `${detail.slice(0, DETAIL_MAX - 3)}...`
}

export function formatCheckLine(result: CheckResult): string {
  return `${result.status.padEnd(4)} ${result.id.padEnd(18)} ${result.code ? `(${result.code}) ` : ''}${result.detail}`
}
