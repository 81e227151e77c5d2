// The body of one issuance worker thread (issuance-pool.ts): CSR verification and certificate
// issuance (DER written directly, signed by node:crypto), off the gateway's event loop. Each CA is
// parsed once per worker.
import { parentPort } from 'node:worker_threads'

import { issueClientCertificate } from '../../pki/client-certificate.js'
import { loadIssuingCa, type IssuingCa } from '../../pki/certificate-authority.js'
import { checkCertificateRequest } from '../../pki/csr.js'
import type { IssuanceReply, IssuanceTask } from './issuance-pool.js'

/** CAs loaded so far by fingerprint: one during normal running, two during a rotation. */
const cas = new Map<string, Promise<IssuingCa>>()

function caOf(task: Extract<IssuanceTask, { kind: 'issue' }>): Promise<IssuingCa> {
  let ca = cas.get(task.ca.fingerprintSha256)
  if (!ca) {
    if (cas.size >= 4) cas.clear()
    ca = loadIssuingCa(task.ca.certificatePem, task.ca.privateKeyPem)
    cas.set(task.ca.fingerprintSha256, ca)
  }
  return ca
}

async function run(task: IssuanceTask): Promise<IssuanceReply> {
  if (task.kind === 'ping') return { id: task.id, kind: 'pong' }
  if (task.kind === 'check') {
    const checked = await checkCertificateRequest(task.csrPem, task.nodeId)
    return checked.ok
      ? { id: task.id, kind: 'checked', ok: true, publicKeyDer: checked.publicKey.rawData }
      : { id: task.id, kind: 'checked', ok: false, reason: checked.reason }
  }
  const issued = await issueClientCertificate({
    ca: await caOf(task),
    subjectPublicKey: { rawData: task.publicKeyDer },
    nodeId: task.nodeId,
    now: new Date(task.nowMs),
    lifetimeSeconds: task.lifetimeSeconds,
  })
  return {
    id: task.id,
    kind: 'issued',
    certificatePem: issued.certificatePem,
    fingerprintSha256: issued.fingerprintSha256,
    serial: issued.serial,
    notBeforeMs: issued.notBefore.getTime(),
    notAfterMs: issued.notAfter.getTime(),
    issuerCaSha256: issued.issuerCaSha256,
  }
}

parentPort!.on('message', (task: IssuanceTask) => {
  run(task).then(
    (reply) => parentPort!.postMessage(reply),
    (error: unknown) =>
      parentPort!.postMessage({
        id: task.id,
        kind: 'failed',
        message: error instanceof Error ? error.message : String(error),
      } satisfies IssuanceReply),
  )
})
