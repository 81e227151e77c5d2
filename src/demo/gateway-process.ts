// The demo's gateway: `fleetkit gateway serve` in its own process on loopback (any free ports),
// on the demo's state directory (its embedded PostgreSQL and PKI) with the demo's short sweep timings.
import { FleetkitError } from '../checks/fleetkit-error.js'
import { type DemoProcess, startDemoProcess } from './processes.js'
import type { Workspace } from './workspace.js'

export interface DemoGateway {
  process: DemoProcess
  enrollUrl: string
  agentUrl: string
  /** The metrics listener: /metrics and the operator API, loopback only. */
  operatorUrl: string
}

/** Silent for 5 s: unhealthy; for 30 s (the least the sweep accepts): lost. */
export const DEMO_SWEEP = { unhealthyAfterSeconds: 5, lostAfterSeconds: 30 }

/** The `fleetkit` this process runs as (bin/run.js, or bin/dev.js from source), to start another command. */
function fleetkitCommand(): string[] {
  return [process.execPath, ...process.execArgv, process.argv[1]!]
}

export async function startDemoGateway(workspace: Workspace, signal: AbortSignal): Promise<DemoGateway> {
  const ports: Record<string, number> = {}
  let ready = false
  const [command, ...args] = fleetkitCommand()
  const env: NodeJS.ProcessEnv = { ...process.env }
  // The demo's own embedded database, never a server the operator's environment names.
  delete env.DATABASE_URL
  const gateway = await startDemoProcess(
    workspace,
    'gateway',
    command!,
    [...args, 'gateway', 'serve', '--state-dir', workspace.stateDir],
    {
      env: {
        ...env,
        FLEETKIT_PKI_DIR: workspace.pkiDir,
        FLEETKIT_ENROLL_BIND: '127.0.0.1:0',
        FLEETKIT_AGENT_BIND: '127.0.0.1:0',
        FLEETKIT_METRICS_BIND: '127.0.0.1:0',
        FLEETKIT_NODE_UNHEALTHY_AFTER: String(DEMO_SWEEP.unhealthyAfterSeconds),
        FLEETKIT_NODE_LOST_AFTER: String(DEMO_SWEEP.lostAfterSeconds),
        FLEETKIT_LOG_LEVEL: 'info',
      },
      onLine: (line) => {
        let entry: { msg?: string; listener?: string; address?: string }
        try {
          entry = JSON.parse(line) as typeof entry
        } catch {
          return
        }
        if (entry.msg === 'listening' && entry.listener && entry.address)
          ports[entry.listener] = Number(entry.address.split(':').pop())
        if (entry.msg === 'gateway_ready') ready = true
      },
    },
  )
  const deadline = Date.now() + 60_000
  while (!ready) {
    if (signal.aborted) throw signal.reason
    if (gateway.exited() || Date.now() > deadline)
      throw new FleetkitError(
        'DEMO_STEP_FAILED',
        `the gateway ${gateway.exited() ? `exited (${gateway.exited()!.code ?? gateway.exited()!.signal})` : 'was not ready within 60 s'}: ${lastLine(gateway.tail())}`,
        { actions: ['fleetkit demo --debug', 'fleetkit gateway serve --help'], data: { step: 'gateway' } },
      )
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return {
    process: gateway,
    enrollUrl: `https://127.0.0.1:${ports.enroll}`,
    agentUrl: `https://127.0.0.1:${ports.agent}`,
    operatorUrl: `http://127.0.0.1:${ports.metrics}`,
  }
}

function lastLine(text: string): string {
  return text.trim().split('\n').pop()?.slice(0, 300) ?? ''
}
