// The CA hosts verify release downloads with (the seed writes it to /etc/fleetkit/release-ca.pem, the
// inventory hands it to agent_update): release.caFile, read from the operator's disk, for a private
// mirror; else, when release.url is the gateway's enrollment listener (which serves published
// releases), the gateway CA bundle; else none (a mirror with a publicly trusted certificate).
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'

import { releaseUrlOnGateway } from '../definition/gateway-urls.js'
import type { Definition } from '../definition/types.js'
import { invalidValue } from './values.js'

/**
 * The release CA bundle, or undefined when hosts use the system roots. release.caFile wins (relative to
 * the definition's directory); `gatewayCa` reads the gateway CA bundle, and is called only when release.url
 * is on an enrollment listener without a caFile.
 */
export async function readReleaseCa(
  definition: Definition,
  definitionDir: string,
  gatewayCa: () => Promise<string>,
): Promise<string | undefined> {
  const file = definition.release.caFile
  if (file === undefined) return releaseUrlOnGateway(definition) ? gatewayCa() : undefined
  try {
    return await readFile(resolve(definitionDir, file), 'utf8')
  } catch {
    throw invalidValue('release.caFile', "a readable PEM file (relative paths start at the definition's directory)")
  }
}
