// `fleetkit ca server-cert`: re-issue the gateway's server certificate with other names, without a
// new CA; the work is src/pki/reissue-server-certificate.ts, this file parses flags and prints.
import { Flags } from '@oclif/core'

import { pkiDirFlag, pkiDirOf, stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import type { ServerCertResult } from '../../pki/reissue-server-certificate.js'

export default class CaServerCert extends FleetkitCommand<ServerCertResult> {
  static override summary =
    "Re-issue the gateway's server certificate with other names or a new key (same CA); the gateway reloads it within 2 s."
  static override description = `Replaces server.pem in FLEETKIT_PKI_DIR with a certificate for exactly the names given (or the current
ones), signed by the CA that signed the current one (during a rotation, the CA being rotated out, which every
agent still trusts). The key stays unless --new-key: then server.key is replaced too (after a leak of it).
Agents trust the CA and the names, not the key, so none is cut off.`
  static override examples = [
    '<%= config.bin %> <%= command.id %> --server-name gateway.example.net --server-name 203.0.113.10',
    '<%= config.bin %> <%= command.id %> --new-key',
  ]

  static override flags = {
    'server-name': Flags.string({
      summary: 'A DNS name or IP address the gateway answers as (repeatable; the new list replaces the old).',
      multiple: true,
    }),
    'new-key': Flags.boolean({ summary: 'Replace server.key with a new P-256 key too (the names stay unless given).' }),
    'pki-dir': pkiDirFlag(),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<ServerCertResult> {
    const { flags } = await this.parse(CaServerCert)
    const { reissueServerCertificate } = await import('../../pki/reissue-server-certificate.js')
    const result = await this.withOperator({}, ({ clock }) =>
      reissueServerCertificate({
        pkiDir: pkiDirOf(flags),
        serverNames: flags['server-name'] ?? [],
        newKey: flags['new-key'],
        now: clock.now(),
      }),
    )
    if (result.newKey) this.log(`Replaced ${result.pkiDir}/server.key with a new key (0600).`)
    this.log(
      `Re-issued ${result.pkiDir}/server.pem for ${result.serverNames.join(', ')} (was ${result.previousServerNames.join(', ')}), valid until ${result.serverNotAfter}`,
    )
    this.log('The gateway serves it from its next PKI reload (within 2 s); no restart.')
    return result
  }
}
