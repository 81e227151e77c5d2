// The key and CSR of an enrollment in progress, written to disk before the secret is sent:
// if the answer is lost (the gateway died after issuing), the next attempt sends the same key
// and the gateway answers with the certificate it already issued instead of refusing the secret.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'

import { removeDurably, syncDirectory, writeFileAtomic } from '../fs/atomic-file.js'
import { generateKeyAndCsr, type KeyAndCsr } from './key-and-csr.js'
import { makeDirectories } from '../fs/make-directories.js'

export function pendingEnrollmentPath(pkiDir: string): string {
  return join(pkiDir, 'enroll-pending.json')
}

/**
 * The pending key and CSR for `nodeId`: the one on disk when it is for this node, else a new
 * pair written durably (0600) before this returns, so it outlives a crash of this process too.
 */
export async function pendingKeyAndCsr(
  pkiDir: string,
  nodeId: string,
  generate: (nodeId: string) => Promise<KeyAndCsr> = generateKeyAndCsr,
): Promise<KeyAndCsr & { reused: boolean }> {
  const path = pendingEnrollmentPath(pkiDir)
  try {
    const saved = JSON.parse(await readFile(path, 'utf8')) as {
      node_id?: unknown
      key_pem?: unknown
      csr_pem?: unknown
    }
    if (saved.node_id === nodeId && typeof saved.key_pem === 'string' && typeof saved.csr_pem === 'string') {
      return { keyPem: saved.key_pem, csrPem: saved.csr_pem, reused: true }
    }
  } catch {
    // Missing or unreadable: a new pair replaces it.
  }
  const fresh = await generate(nodeId)
  await makeDirectories(pkiDir, 0o700)
  await writeFileAtomic(path, JSON.stringify({ node_id: nodeId, key_pem: fresh.keyPem, csr_pem: fresh.csrPem }), 0o600)
  await syncDirectory(pkiDir)
  return { ...fresh, reused: false }
}

/** The identity is staged: the pending pair has done its job. */
export async function clearPendingEnrollment(pkiDir: string): Promise<void> {
  await removeDurably(pendingEnrollmentPath(pkiDir))
}
