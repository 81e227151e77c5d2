// The local files an agent seed embeds (the gateway CA bundle, the release CA), read before the
// command opens the database so a refused PKI directory or a missing CA is reported on its own.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'

import type { Env } from '../../config/state-dir.js'
import type { Definition } from '../../definition/types.js'
import { resolvePkiDir } from '../../pki/pki-dir.js'
import { assertPkiDirectoryPrivate } from '../../pki/pki-files.js'
import { readReleaseCa } from '../../render/release-ca.js'
import { caMissingError } from '../../pki/restore-leftovers.js'
import type { SeedKind } from '../../render/seed-documents.js'

/** What an agent seed embeds from this machine: the gateway CA bundle and the release CA (src/render/release-ca.ts). */
export interface SeedFiles {
  caBundle?: string
  releaseCa?: string
}

/**
 * Reads the files an agent seed embeds (a worker seed embeds none). The command calls it before it
 * opens the database: a PKI directory others may write, or a missing CA, is refused with its own
 * code before anything connects, and a database that is down never hides it.
 */
export async function readSeedFiles(
  kind: SeedKind,
  env: Env,
  definition: Definition,
  /** Where a relative release.caFile is resolved from (the definition's directory). */
  definitionDir: string,
): Promise<SeedFiles> {
  if (kind !== 'agent') return {}
  const caBundle = await readGatewayCaBundle(env)
  // A release.url on the gateway's enrollment listener is fetched with the bundle the seed pins anyway.
  return { caBundle, releaseCa: await readReleaseCa(definition, definitionDir, () => Promise.resolve(caBundle)) }
}

/** The CA bundle the agent pins until its first renewal; `fleetkit ca init` creates it. Sync hands it to a host it enrolls. */
export async function readGatewayCaBundle(env: Env): Promise<string> {
  const dir = resolvePkiDir(env)
  const path = join(dir, 'ca-bundle.pem')
  // A bundle others could have edited would pin their CA on the new host.
  await assertPkiDirectoryPrivate(dir)
  try {
    return await readFile(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    throw await caMissingError(dir, `the gateway CA bundle ${path} does not exist, so an agent seed cannot pin it`, {
      actions: ['fleetkit ca init', "or set FLEETKIT_PKI_DIR to the gateway's PKI directory"],
      data: { path },
    })
  }
}
