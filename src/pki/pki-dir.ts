// Where the PKI files live: FLEETKIT_PKI_DIR, else <state dir>/pki. No x509 here,
// so commands can resolve the path before loading the heavy PKI modules.
import { join, resolve } from 'node:path'

import { resolveStateDir, type Env } from '../config/state-dir.js'

export function resolvePkiDir(env: Env = process.env): string {
  const explicit = env.FLEETKIT_PKI_DIR?.trim()
  return explicit ? resolve(explicit) : join(resolveStateDir(env), 'pki')
}
