// `fleetkit provider stub`: the local Hetzner Cloud API stub (src/provider/hetzner-stub.ts), run by
// hand until Ctrl-C, for demos and for trying the client without a project or a bill.
import { Flags } from '@oclif/core'

import { FleetkitCommand } from '../../cli/fleetkit-command.js'

export interface StubStartup {
  /** The API root to give the client (HETZNER_API_URL, --api-url). */
  url: string
  /** @minimum 1 */
  port: number
  /** The variable to put the token in. */
  tokenEnv: string
  /** The one token this stub accepts: a stub's, worthless anywhere else. */
  token: string
}

export default class ProviderStub extends FleetkitCommand<StubStartup> {
  static override summary = 'Run a local stub of the Hetzner Cloud API until Ctrl-C, and print its URL and token.'
  static override description = `The stub answers what fleetkit uses of the API (servers, server types, locations, images,
SSH keys, firewalls, placement groups, actions that finish after 2 s) with the public field names, RateLimit
headers and error bodies. It listens on 127.0.0.1 only and keeps everything in memory. With --json it prints
one line, the startup document, then on Ctrl-C the COMMAND_INTERRUPTED envelope (exit 130).`
  static override examples = [
    '<%= config.bin %> <%= command.id %> --port 8480',
    '<%= config.bin %> <%= command.id %> --json',
  ]
  static override flags = {
    port: Flags.integer({
      summary: 'The loopback port to listen on (0: any free port).',
      env: 'FLEETKIT_PROVIDER_STUB_PORT',
      default: 0,
      min: 0,
      max: 65535,
    }),
  }

  // A running server's output is read line by line: its startup line and its end.
  protected override jsonLines(): boolean {
    return true
  }

  async run(): Promise<StubStartup> {
    const { flags } = await this.parse(ProviderStub)
    const { startHetznerStub } = await import('../../provider/hetzner-stub.js')
    // Not withOperator: a server that runs until it is stopped, with no steps to report and no actor or
    // clock to hand on; it needs only the interruption.
    const signal = this.interruptible()
    const stub = await startHetznerStub({ port: flags.port })
    try {
      const startup: StubStartup = { url: stub.url, port: stub.port, tokenEnv: 'HETZNER_API_TOKEN', token: stub.token }
      // Printed now, as the success envelope, since the command only ends when it is stopped.
      if (this.jsonEnabled()) process.stdout.write(`${JSON.stringify({ status: 0, result: startup })}\n`)
      this.log(`Hetzner Cloud API stub on ${stub.url} (Ctrl-C stops it). To use it:`)
      this.log(`  export HETZNER_API_URL=${stub.url}`)
      this.log(`  export HETZNER_API_TOKEN=${stub.token}`)
      if (!signal.aborted) {
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))
      }
      // It ends only when Ctrl-C or SIGTERM aborted it: the command ends as interrupted (130/143).
      throw signal.reason
    } finally {
      await stub.close()
    }
  }
}
