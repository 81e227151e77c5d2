// `fleetkit ca operator-cert NAME`: a client certificate for the gateway's operator API
// (src/lifecycle/ca/operator-cert.ts).
import { join } from 'node:path'

import { Args, Flags } from '@oclif/core'

import { envWithStateDir, pkiDirFlag, pkiDirOf, stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import { resolveStateDir } from '../../config/state-dir.js'
import type { OperatorCertResult } from '../../lifecycle/ca/operator-cert.js'

export default class CaOperatorCert extends FleetkitCommand<OperatorCertResult> {
  static override summary = "Issue a client certificate for the gateway's operator API (allocations over HTTPS)."
  static override description = `Generates a P-256 key locally (written 0600, never stored elsewhere), signs a client
certificate with the fleet CA and records its fingerprint: the agent listener then serves
/v1/operator/* to it. Writes NAME.key, NAME.pem and gateway-ca.pem into --out. An --out inside a Git work
tree that does not ignore NAME.key is refused (SECRET_OUTPUT_IN_GIT) before anything is issued, unless --force.`
  static override examples = [
    '<%= config.bin %> <%= command.id %> alice',
    '<%= config.bin %> <%= command.id %> ci-scheduler --days 30 --out ./operator --json',
  ]
  static override args = { name: Args.string({ description: 'operator name (a-z, 0-9, . and -)', required: true }) }
  static override flags = {
    days: Flags.integer({ summary: 'Lifetime in days.', default: 90, min: 1, max: 397 }),
    out: Flags.string({
      summary: 'Directory for the key and certificate (default <state dir>/operators).',
      helpValue: 'DIR',
    }),
    force: Flags.boolean({
      summary: 'Write the key into an --out inside a Git work tree that does not ignore it (refused otherwise).',
      default: false,
    }),
    'pki-dir': pkiDirFlag(),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<OperatorCertResult> {
    const { args, flags } = await this.parse(CaOperatorCert)
    const { issueOperatorCertificate } = await import('../../lifecycle/ca/operator-cert.js')
    const env = envWithStateDir(flags['state-dir'])
    const pkiDir = pkiDirOf(flags)
    const outDir = flags.out ?? join(resolveStateDir(env), 'operators')
    const r = await this.withState({ stateDir: flags['state-dir'] }, ({ pool, actor, clock }) =>
      issueOperatorCertificate({
        pool,
        pkiDir,
        outDir,
        name: args.name,
        lifetimeDays: flags.days,
        actor,
        clock,
        ...(flags.out === undefined ? {} : { chosenOutDir: { force: flags.force } }),
      }),
    )
    this.log(`Issued operator certificate ${r.serial} for ${r.name}, valid until ${r.notAfter}`)
    this.log(`  key:         ${r.keyFile} (0600)`)
    this.log(`  certificate: ${r.certificateFile}`)
    this.log(`  gateway CA:  ${r.caBundleFile}`)
    return r
  }
}
