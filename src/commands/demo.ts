// `fleetkit demo`: the whole of fleetkit on this machine in about a minute (src/demo/run-demo.ts):
// this file parses the flags, prints the steps and, with --keep, waits for Ctrl-C.
import { Flags } from '@oclif/core'

import { FleetkitCommand } from '../cli/fleetkit-command.js'
import type { DemoResult, KeepInfo } from '../demo/types.js'

export default class Demo extends FleetkitCommand<DemoResult> {
  static override summary =
    'Run the whole of fleetkit on this machine in about a minute: provision, enroll, check, admit, drain, lose a node, rotate the CA.'
  static override description = `Everything is private and temporary: an embedded PostgreSQL and a CA in a new directory under the
system temp directory, the gateway on loopback, the local Hetzner Cloud API stub, a release signed with a fresh key.
It provisions a node per pool of examples/fleet.yaml; each node's seed runs in a private root directory (apt-get,
systemctl, modprobe, nft and the other commands that need a real machine are logged stubs) and installs and enrolls
a real fleetkit-agent process. Then: host checks (a leased checks job), admit, drain and undrain, one node silenced
until the sweep marks it lost and reclaims its capacity, and a CA rotation while the agents keep working. After each
step it prints node list and the new events. At the end (also on Ctrl-C, and a killed run's leftovers at the next
run) every process it started is stopped and its directory removed. Needs \`npm run build\` (the agent bundle).`
  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --keep',
    '<%= config.bin %> <%= command.id %> --json',
  ]
  static override flags = {
    keep: Flags.boolean({
      summary: 'At the end, keep the fleet running (and print how to look at it) until Ctrl-C.',
      default: false,
    }),
  }

  // Stopping the agents, the gateway and the embedded PostgreSQL can take longer than a command's usual 10 s.
  protected override interruptGraceMs(): number {
    return 45_000
  }

  async run(): Promise<DemoResult> {
    const { flags } = await this.parse(Demo)
    const { runDemo } = await import('../demo/run-demo.js')
    const { DEMO_STEPS } = await import('../demo/steps.js')
    const { createPrinter } = await import('../demo/printing.js')
    // Not withOperator or withState: the demo starts its own state, gateway and agents in a directory
    // of its own, and prints its own steps (demo/printing.ts); it needs only the interruption.
    const signal = this.interruptible()
    // Under --json the steps go to stderr: stdout holds the one summary document.
    const write = this.jsonEnabled()
      ? (line: string) => process.stderr.write(`${line}\n`)
      : (line: string) => this.log(line)
    const printer = createPrinter(write, DEMO_STEPS)
    const result = await runDemo({
      printer,
      signal,
      ...(flags.keep ? { keep: (info: KeepInfo) => this.keepRunning(info, write, signal) } : {}),
    })
    write('')
    write('Done: every process the demo started is stopped and its directory removed.')
    write('Next: docs/getting-started.md (from the demo to a first real fleet).')
    return result
  }

  private keepRunning(info: KeepInfo, write: (line: string) => void, signal: AbortSignal): Promise<void> {
    write('')
    write('The demo fleet keeps running until Ctrl-C. In another terminal:')
    write(`  export FLEETKIT_STATE_DIR=${info.stateDir}   # and unset DATABASE_URL`)
    write('  fleetkit node list')
    write('  fleetkit events --follow')
    write(`  fleetkit node show <node>   # the definition: ${info.definition}`)
    write(`  ${info.operatorUrl}/v1/operator/status   # the status page, in a browser on this machine`)
    write(`  curl ${info.operatorUrl}/metrics   # the gateway's operator listener (loopback)`)
    return new Promise((resolve) => {
      if (signal.aborted) return resolve()
      signal.addEventListener('abort', () => resolve(), { once: true })
    })
  }
}
