// One demo node from provisioning to a running agent: `node provision` through the stub, the server
// "boots" (its recorded user_data's enrollment script runs in the node's private root with the stub
// commands first on PATH, installing the signed release and enrolling the real agent), the roles'
// machine state is laid down, and `fleetkit-agent run` starts as the agent unit would.
import { readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { gunzipSync } from 'node:zlib'

import type { StatePool } from '../store/transaction.js'
import { parse } from 'yaml'

import { systemClock } from '../config/clock.js'
import { systemRng } from '../config/rng.js'
import type { HostPolicy } from '../definition/host-policy.js'
import type { Definition } from '../definition/types.js'
import { provisionNode } from '../lifecycle/provision/node-provision.js'
import type { ProvisionResult } from '../lifecycle/provision/provision-result.js'
import type { SeedFiles } from '../lifecycle/seed/seed-files.js'
import type { Provider } from '../provider/provider.js'
import type { HetznerStub } from '../provider/hetzner-stub.js'
import { AGENT_SEED_SCRIPT_PATH } from '../render/agent-seed.js'
import { CALLS_LOG_ENV, prepareMachineRoot } from './machine.js'
import { type DemoProcess, startDemoProcess } from './processes.js'
import { stepFailed } from './waits.js'
import type { Workspace } from './workspace.js'
import { makeDirectories } from '../fs/make-directories.js'

export interface NodeSandbox {
  nodeId: string
  dir: string
  root: string
  callsLog: string
}

export interface ProvisionContext {
  pool: StatePool
  definition: Definition
  files: SeedFiles
  client: Provider
  policy: HostPolicy
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export async function nodeSandbox(workspace: Workspace, nodeId: string): Promise<NodeSandbox> {
  const dir = join(workspace.dir, 'nodes', nodeId)
  const root = join(dir, 'root')
  await makeDirectories(root)
  const callsLog = join(dir, 'calls.log')
  await writeFile(callsLog, '')
  return { nodeId, dir, root, callsLog }
}

/** `node provision NODE` until the server runs (awaiting_enrollment), or, with resume, until it enrolled. */
export function provision(ctx: ProvisionContext, nodeId: string, resume: boolean): Promise<ProvisionResult> {
  return provisionNode({
    ...ctx,
    nodeId,
    request: {},
    resume,
    waitMs: resume ? 60_000 : 0,
    pollMs: 200,
    clock: systemClock,
    rng: systemRng,
    sleep,
  })
}

/** PATH for a node: the stub commands first, then this Node.js (the agent's `#!/usr/bin/env node`), then the system's. */
function nodePath(binDir: string): string {
  return [binDir, dirname(process.execPath), process.env.PATH ?? '/usr/bin:/bin'].join(':')
}

/** The enrollment script of the user_data the provider was given for the node (what cloud-init runs). */
export function seedScriptOf(stub: HetznerStub, nodeId: string): string {
  const create = stub.requests.find(
    (r) => r.method === 'POST' && r.path === '/servers' && (r.body as { name?: string }).name === nodeId,
  )
  if (!create) throw stepFailed(`the server of ${nodeId}`, 'the provider never received its create request')
  const userData = gunzipSync(Buffer.from((create.body as { user_data: string }).user_data, 'base64')).toString('utf8')
  const doc = parse(userData) as { write_files?: { path: string; content: string }[] }
  const script = doc.write_files?.find((f) => f.path === AGENT_SEED_SCRIPT_PATH)
  if (!script) throw stepFailed(`the seed of ${nodeId}`, `its user_data has no ${AGENT_SEED_SCRIPT_PATH}`)
  return script.content
}

/** Runs the node's seed script in its sandbox root: the first boot. Resolves with its stdout's last line. */
export async function bootNode(
  workspace: Workspace,
  sandbox: NodeSandbox,
  script: string,
  binDir: string,
  signal: AbortSignal,
): Promise<void> {
  const path = join(sandbox.dir, 'agent-seed.sh')
  await writeFile(path, script, { mode: 0o700 })
  const seed = await startDemoProcess(workspace, `seed-${sandbox.nodeId}`, 'bash', [path], {
    env: {
      ...process.env,
      PATH: nodePath(binDir),
      FLEETKIT_SEED_ROOT: sandbox.root,
      [CALLS_LOG_ENV]: sandbox.callsLog,
    },
    cwd: sandbox.dir,
  })
  const stop = () => void seed.stop(1000)
  signal.addEventListener('abort', stop, { once: true })
  try {
    const ended = await seed.ended
    if (signal.aborted) throw signal.reason
    if (ended.code !== 0)
      throw stepFailed(`the seed of ${sandbox.nodeId}`, `it exited ${ended.code ?? ended.signal}`, seed)
  } finally {
    signal.removeEventListener('abort', stop)
  }
}

/** The data mount the seed wrote into agent.env ('' for none). */
async function seededDataMount(sandbox: NodeSandbox): Promise<string> {
  const env = await readFile(join(sandbox.root, 'etc/fleetkit/agent.env'), 'utf8')
  return /^FLEETKIT_DATA_MOUNT=(.*)$/m.exec(env)?.[1]?.trim() ?? ''
}

/**
 * What the first sync's roles leave (br_netfilter, the data volume, the firewall table), then
 * `fleetkit-agent run` as the unit's ExecStart, with the sandbox's paths and the demo's quick intervals.
 */
export async function startAgent(workspace: Workspace, sandbox: NodeSandbox, binDir: string): Promise<DemoProcess> {
  await prepareMachineRoot(sandbox.root, await seededDataMount(sandbox))
  const root = sandbox.root
  return startDemoProcess(workspace, `agent-${sandbox.nodeId}`, join(root, 'usr/local/bin/fleetkit-agent'), ['run'], {
    env: {
      PATH: nodePath(binDir),
      [CALLS_LOG_ENV]: sandbox.callsLog,
      FLEETKIT_AGENT_CONFIG: join(root, 'etc/fleetkit/agent.env'),
      FLEETKIT_GATEWAY_CA_FILE: join(root, 'etc/fleetkit/gateway-ca.pem'),
      FLEETKIT_ENROLLMENT_SECRET_FILE: join(root, 'var/lib/fleetkit/enrollment-secret'),
      FLEETKIT_AGENT_PKI_DIR: join(root, 'var/lib/fleetkit/pki'),
      FLEETKIT_HOST_ROOT: root,
      FLEETKIT_AGENT_HEARTBEAT_SECONDS: '1',
      FLEETKIT_AGENT_RENEW_CHECK_SECONDS: '2',
      FLEETKIT_AGENT_BACKOFF_MAX_SECONDS: '2',
      FLEETKIT_AGENT_MIN_FREE_GB: '1',
      FLEETKIT_LOG_LEVEL: 'info',
    },
    cwd: sandbox.dir,
  })
}
