// The CA hosts verify release downloads with (the seed writes it to /etc/fleetkit/release-ca.pem, the
// inventory hands it to agent_update): release.caFile, read from the operator's disk, for a private
// mirror; else, when release.url is the gateway's enrollment listener (which serves published
// releases), the gateway CA bundle; else none (a mirror with a publicly trusted certificate).
import { resolve } from 'node:path'

import { readRegularFile } from '../fs/read-regular-file.js'

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
  // Bounded, and never a FIFO or a device (`/dev/zero` filled the memory): a CA bundle is a few kilobytes.
  const bytes = await readRegularFile(resolve(definitionDir, file), MAX_CA_FILE_BYTES, () =>
    invalidValue(
      'release.caFile',
      `a readable PEM file of at most ${MAX_CA_FILE_BYTES} bytes (relative paths start at the definition's directory)`,
    ),
  )
  return bytes.toString('utf8')
}

/** The most a release CA bundle may hold: a bundle of a thousand certificates is well under it. */
const MAX_CA_FILE_BYTES = 1024 * 1024
