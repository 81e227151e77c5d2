// `fleetkit provider stub`: the local Hetzner Cloud API stub (src/provider/hetzner-stub.ts), run by
// hand until Ctrl-C, for demos and for trying the client without a project or a bill; with --boot a local
// cloud (src/provider/local-cloud/) whose servers are real systemd-nspawn machines.
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
  /** With --boot: the bridge the servers' addresses are on, and this machine's address there (bind a gateway to it). */
  bridge?: { name: string; address: string }
}

export default class ProviderStub extends FleetkitCommand<StubStartup> {
  static override summary = 'Run a local stub of the Hetzner Cloud API until Ctrl-C, and print its URL and token.'
  static override description = `The stub answers what fleetkit uses of the API (servers, server types, locations, images,
SSH keys, firewalls, placement groups, actions that finish after 2 s) with the public field names, RateLimit
headers and error bodies. It listens on 127.0.0.1 only and keeps everything in memory. With --json it prints
one line, the startup document, then on Ctrl-C the COMMAND_INTERRUPTED envelope (exit 130).

With --boot (root) each server created boots as a systemd-nspawn machine from a Debian 12 or 13 image that
debootstrap builds once into FLEETKIT_LOCAL_CLOUD_CACHE (default /var/cache/fleetkit/local-cloud), with its user_data
as a NoCloud seed and its public_net.ipv4 on the bridge fkcloud0 (10.232.0.1/16); power actions and delete act on the
machine, a volume is a loop device it sees. Ctrl-C or SIGTERM stops every machine and removes the loop devices
and the bridge. docs/provider.md says what it needs.`
  static override examples = [
    '<%= config.bin %> <%= command.id %> --port 8480',
    '<%= config.bin %> <%= command.id %> --json',
    'sudo <%= config.bin %> <%= command.id %> --boot',
  ]
  static override flags = {
    port: Flags.integer({
      summary: 'The loopback port to listen on (0: any free port).',
      env: 'FLEETKIT_PROVIDER_STUB_PORT',
      default: 0,
      min: 0,
      max: 65535,
    }),
    boot: Flags.boolean({
      summary: 'Boot each server as a real systemd-nspawn machine on a bridge of its own (root; docs/provider.md).',
      default: false,
    }),
  }

  // A running server's output is read line by line: its startup line and its end.
  protected override jsonLines(): boolean {
    return true
  }

  // With --boot, Ctrl-C stops machines and detaches loop devices before the process ends.
  protected override interruptGraceMs(): number {
    return 90_000
  }

  async run(): Promise<StubStartup> {
    const { flags } = await this.parse(ProviderStub)
    const { startHetznerStub } = await import('../../provider/hetzner-stub.js')
    // Not withOperator: a server that runs until it is stopped, with no steps to report and no actor or
    // clock to hand on; it needs only the interruption.
    const signal = this.interruptible()
    const cloud = flags.boot ? await this.startLocalCloud(signal) : undefined
    let stub
    try {
      stub = await startHetznerStub({ port: flags.port, ...(cloud ? { machines: cloud } : {}) })
    } catch (error) {
      await cloud?.close()
      throw error
    }
    try {
      const startup: StubStartup = {
        url: stub.url,
        port: stub.port,
        tokenEnv: 'HETZNER_API_TOKEN',
        token: stub.token,
        ...(cloud ? { bridge: { name: cloud.bridge.name, address: cloud.bridge.address } } : {}),
      }
      // Printed now, as the success envelope, since the command only ends when it is stopped.
      if (this.jsonEnabled()) process.stdout.write(`${JSON.stringify({ status: 0, result: startup })}\n`)
      this.log(`Hetzner Cloud API stub on ${stub.url} (Ctrl-C stops it). To use it:`)
      this.log(`  export HETZNER_API_URL=${stub.url}`)
      this.log(`  export HETZNER_API_TOKEN=${stub.token}`)
      if (cloud) {
        this.log(
          `Servers boot as machines on the bridge ${cloud.bridge.name}; this machine is ${cloud.bridge.address} there.`,
        )
      }
      if (!signal.aborted) {
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }))
      }
      // It ends only when Ctrl-C or SIGTERM aborted it: the command ends as interrupted (130/143).
      throw signal.reason
    } finally {
      // Closes the local cloud too: machines stopped, loop devices detached, the bridge removed.
      await stub.close()
    }
  }

  /** The machines behind the API: checks root and tools, makes the bridge, builds Debian 12's image if not cached. */
  private async startLocalCloud(signal: AbortSignal) {
    const { LocalCloud } = await import('../../provider/local-cloud/local-cloud.js')
    const cloud = await LocalCloud.start({ log: (line) => this.logToStderr(line), signal })
    try {
      await cloud.prepareImage('debian-12')
    } catch (error) {
      await cloud.close()
      throw signal.aborted ? signal.reason : error
    }
    return cloud
  }
}
