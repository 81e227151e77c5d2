// `fleetkit ca init`: create the CA, its trust bundle and the gateway's server certificate;
// the work is src/pki/init-pki.ts, this file parses flags and prints.
import { Flags } from '@oclif/core'

import { pkiDirFlag, pkiDirOf, stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import type { InitPkiResult } from '../../pki/init-pki.js'

export default class CaInit extends FleetkitCommand<InitPkiResult> {
  static override summary = 'Create the CA, its trust bundle and the gateway server certificate in the PKI directory.'
  static override description = `Writes ca.pem, ca.key (0600), ca-bundle.pem, server.pem and server.key (0600) into
FLEETKIT_PKI_DIR (default <state dir>/pki). Refuses to overwrite an existing CA (CA_EXISTS), and a PKI directory
inside a Git work tree that does not ignore it (SECRET_OUTPUT_IN_GIT; --force writes there anyway).`
  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --server-name gateway.example.net --server-name 203.0.113.10',
  ]

  static override flags = {
    'server-name': Flags.string({
      summary: 'A DNS name or IP address the gateway answers as (repeatable; default localhost, 127.0.0.1, ::1).',
      multiple: true,
    }),
    'pki-dir': pkiDirFlag(),
    'state-dir': stateDirFlag(),
    force: Flags.boolean({
      summary: 'Write the CA key even inside a Git work tree that does not ignore it (SECRET_OUTPUT_IN_GIT otherwise).',
      default: false,
    }),
  }

  async run(): Promise<InitPkiResult> {
    const { flags } = await this.parse(CaInit)
    const { initPki } = await import('../../pki/init-pki.js')
    const result = await this.withOperator({}, ({ clock }) =>
      initPki({ pkiDir: pkiDirOf(flags), serverNames: flags['server-name'], now: clock.now(), force: flags.force }),
    )
    this.log(`Created a CA in ${result.pkiDir}`)
    this.log(`  CA SHA-256:     ${result.caFingerprintSha256}`)
    this.log(`  CA valid until: ${result.caNotAfter}`)
    this.log(`  server names:   ${result.serverNames.join(', ')} (until ${result.serverNotAfter})`)
    this.log('Keep ca.key secret and backed up; start the gateway with: fleetkit gateway serve')
    return result
  }
}
