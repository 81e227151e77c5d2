// `fleetkit provider check`: the Hetzner Cloud token and API URL answer (src/provider/provider-check.ts).
import { Flags } from '@oclif/core'

import { stateDirFlag } from '../../cli/flags.js'
import { FleetkitCommand } from '../../cli/fleetkit-command.js'
import type { ProviderCheckResult } from '../../provider/provider-check.js'

export default class ProviderCheck extends FleetkitCommand<ProviderCheckResult> {
  static override summary =
    'Check that the Hetzner Cloud API answers with the token: list its locations and server types.'
  static override description = `Reads the token from the environment variable --token-env names (HETZNER_API_TOKEN by
default; a definition's tokenEnv), never from the command line. Two read requests of the project's hourly budget.
--api-url points it at the local stub (fleetkit provider stub prints the URL and a token). The project's
request budget is shared through the state (DATABASE_URL, or the embedded PostgreSQL) with every other
fleetkit process; the check reports what is left of it.`
  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    'HETZNER_API_TOKEN=stub-... <%= config.bin %> <%= command.id %> --api-url http://127.0.0.1:8480/v1 --json',
  ]
  static override flags = {
    'token-env': Flags.string({
      summary: 'The environment variable that holds the API token (its name, not the token).',
      env: 'FLEETKIT_PROVIDER_TOKEN_ENV',
      default: 'HETZNER_API_TOKEN',
      helpValue: 'NAME',
    }),
    'api-url': Flags.string({
      summary: 'The API root (the local stub for tests and demos).',
      env: 'HETZNER_API_URL',
      default: 'https://api.hetzner.cloud/v1',
      helpValue: 'URL',
    }),
    'state-dir': stateDirFlag(),
  }

  async run(): Promise<ProviderCheckResult> {
    const { flags } = await this.parse(ProviderCheck)
    const { checkProvider, formatProviderCheck } = await import('../../provider/provider-check.js')
    const { apiTokenFromEnv } = await import('../../provider/api-token.js')
    // Before the state opens: a missing token fails at once.
    const token = apiTokenFromEnv(process.env, flags['token-env'])
    const result = await this.withState({ stateDir: flags['state-dir'] }, ({ pool, progress }) => {
      progress(`asking ${flags['api-url']}`)
      return checkProvider({ token, tokenEnv: flags['token-env'], baseUrl: flags['api-url'], pool })
    })
    for (const line of formatProviderCheck(result)) this.log(line)
    return result
  }
}
