// Trust material the running agent takes over without restarting: the gateway's new trust bundle
// (a CA rotation began or completed) and an identity restaged beside it by `renew-certificate`.
// Each is proven on /healthz with a new client before the session swaps to it.
import { writeFileAtomic } from '../fs/atomic-file.js'
import type { Logger } from '../log/logger.js'
import { toFleetkitError } from '../checks/fleetkit-error.js'
import { AGENT_PATHS } from '../protocol/agent-routes.js'
import { readIdentityResponse } from '../protocol/renewal.js'
import { readResponse } from '../protocol/read.js'
import { trustBundleDigest } from '../pki/trust-bundle-digest.js'
import type { AgentConfig } from './config.js'
import { joinBundles } from './enroll.js'
import { identityPaths, loadIdentity } from './identity.js'
import type { AgentSession } from './session.js'

/**
 * The gateway trusts another bundle than the one staged here (a rotation began or completed): fetch
 * it over mTLS, prove it on /healthz with a new client, stage it as gateway-ca.pem and swap in place.
 * After a completed rotation this drops the old CA at once, not only at the next renewal.
 */
export async function adoptGatewayBundle(
  session: AgentSession,
  config: AgentConfig,
  log: Logger,
  digest: string,
): Promise<void> {
  try {
    const reply = await session.call('GET', AGENT_PATHS.identity)
    const answer =
      reply.status === 200 ? readResponse(readIdentityResponse, reply.body, AGENT_PATHS.identity) : undefined
    if (!answer?.ca_bundle_pem || trustBundleDigest(answer.ca_bundle_pem) !== digest) return
    const identity = { ...session.identity, caPem: joinBundles(answer.ca_bundle_pem) }
    const client = session.clientFor(identity)
    try {
      if ((await client.request('GET', '/healthz')).status !== 200) throw new Error('no 200 from /healthz')
    } catch (error) {
      client.close()
      log('warn', 'trust_bundle_unusable', { digest, message: (error as Error).message })
      return
    }
    await writeFileAtomic(identityPaths(config.pkiDir).caBundle, identity.caPem, 0o600)
    session.swap(identity, client)
    log('info', 'trust_bundle_updated', {
      digest,
      certificates: identity.caPem.split('BEGIN CERTIFICATE').length - 1,
    })
  } catch (error) {
    const e = toFleetkitError(error)
    log('warn', 'trust_bundle_refresh_failed', { code: e.code, message: e.message })
  }
}

/** `fleetkit-agent renew-certificate` run beside this process restages the files: use them. */
export async function adoptRestagedIdentity(session: AgentSession, config: AgentConfig, log: Logger): Promise<void> {
  let staged
  try {
    staged = await loadIdentity(config.pkiDir, config.caFile)
  } catch {
    return
  }
  if (
    staged.fingerprint256 === session.identity.fingerprint256 ||
    staged.window.notAfter.getTime() <= session.identity.window.notAfter.getTime()
  )
    return
  const client = session.clientFor(staged)
  try {
    if ((await client.request('GET', '/healthz')).status !== 200) throw new Error('no 200 from /healthz')
  } catch (error) {
    client.close()
    log('warn', 'restaged_identity_unusable', { serial: staged.serial, message: (error as Error).message })
    return
  }
  const previous = session.identity.serial
  session.swap(staged, client)
  log('info', 'identity_reloaded', {
    serial: staged.serial,
    previous_serial: previous,
    not_after: staged.window.notAfter.toISOString(),
  })
}
