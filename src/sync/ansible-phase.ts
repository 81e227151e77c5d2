// Runs one phase of a sync (the canary, or the rest of the fleet): one ansible-playbook over the
// rendered inventory with --limit, fleetkit's speed settings, and per-host events read live.
import { existsSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { cpus } from 'node:os'
import { join } from 'node:path'

import { FleetkitError } from '../checks/fleetkit-error.js'
import type { Env } from '../config/state-dir.js'
import { packagePath } from '../package-root.js'
import { type AnsibleEvent, foldHostResults, type HostResult, parseEventLines } from './host-results.js'
import { CommandNotFoundError, runProcess } from './process-runner.js'
import { makeDirectories } from '../fs/make-directories.js'

const MITOGEN_DIR = '/usr/lib/python3/dist-packages/ansible_mitogen'

export interface SpeedSettings {
  mitogen: boolean
  /** free: each host runs its tasks in order without waiting for the others at every task. */
  strategy: 'free' | 'linear'
  forks: number
  pipelining: true
  controlPersist: string
  factCache: string
}

export interface PhaseOptions {
  /** The folder of this run's files (inventory, known_hosts, events, control sockets). */
  workDir: string
  inventoryPath: string
  playbook: string
  hosts: readonly string[]
  /** A label for the events file: canary-1, fleet-2 ... */
  label: string
  check: boolean
  tags: readonly string[]
  extraVarsFile?: string
  speed: SpeedSettings
  env: Env
  signal?: AbortSignal
  onSpawn?: (pid: number) => void
  onEvent?: (event: AnsibleEvent) => void
  /** How often the events file is read while ansible runs. */
  pollMs?: number
  ansibleDir?: string
}

export interface PhaseResult {
  exitCode: number | null
  hosts: Map<string, HostResult>
  /** The tail of ansible's own output, for a failure that is not per host. */
  outputTail: string
}

/**
 * Mitogen when Debian's ansible-mitogen is installed, unless the command turned it off (--no-mitogen).
 * The free strategy unless the command asks for linear: no role orders work across hosts (no run_once,
 * delegate_to or hostvars of another host), so a host need not wait for the slowest at every task.
 */
export function speedSettings(options: {
  targets: number
  noMitogen: boolean
  strategy?: 'free' | 'linear'
  stateDir: string
  mitogenDir?: string
  cores?: number
}): SpeedSettings {
  return {
    mitogen: !options.noMitogen && existsSync(options.mitogenDir ?? MITOGEN_DIR),
    strategy: options.strategy ?? 'free',
    forks: forksFor(options.targets, options.cores ?? cpus().length),
    pipelining: true,
    controlPersist: '120s',
    factCache: join(options.stateDir, 'ansible', 'facts'),
  }
}

/**
 * Workers at once: every task costs the controller a forked worker and its templating (0.1 to 0.15 s of
 * CPU), so past a few per core more forks only queue on the controller's cores; at least Ansible's 5, never
 * more than the hosts (docs/performance.md, "Fleet-scale first converge").
 */
export function forksFor(targets: number, cores: number): number {
  return Math.max(1, Math.min(targets, Math.max(5, cores * 4), 100))
}

function strategyName(s: Pick<SpeedSettings, 'mitogen' | 'strategy'>): string {
  return s.mitogen ? `mitogen_${s.strategy}` : s.strategy
}

export function describeSpeed(s: SpeedSettings): string {
  return `strategy ${strategyName(s)} (${s.mitogen ? 'ansible-mitogen' : 'ssh'}), forks ${s.forks}, pipelining on, SSH ControlPersist ${s.controlPersist}, fact cache ${s.factCache}`
}

/** Variables a playbook must not see: the state's URL and provider tokens. */
const SECRET_VARIABLE = /^DATABASE_URL$|^PGPASSWORD$|^HETZNER|_TOKEN$|^FLEETKIT_SYNC_/

function ansibleEnv(
  options: Pick<PhaseOptions, 'env' | 'speed' | 'workDir' | 'ansibleDir'> & { eventsFile: string },
): Env {
  const dir = options.ansibleDir ?? packagePath('ansible')
  const base = Object.fromEntries(Object.entries(options.env).filter(([name]) => !SECRET_VARIABLE.test(name)))
  const { speed } = options
  return {
    ...base,
    ANSIBLE_CONFIG: join(dir, 'ansible.cfg'),
    ANSIBLE_NOCOLOR: '1',
    ANSIBLE_FORCE_COLOR: '0',
    ANSIBLE_RETRY_FILES_ENABLED: 'false',
    ANSIBLE_CALLBACK_PLUGINS: join(dir, 'callback_plugins'),
    ANSIBLE_CALLBACKS_ENABLED: 'fleetkit_events',
    FLEETKIT_EVENTS_FILE: options.eventsFile,
    ANSIBLE_PIPELINING: 'True',
    ANSIBLE_SSH_PIPELINING: 'True',
    ANSIBLE_SSH_ARGS: `-o ControlMaster=auto -o ControlPersist=${speed.controlPersist} -o ServerAliveInterval=15`,
    // A short folder: ssh's control socket path must fit in 108 bytes.
    ANSIBLE_SSH_CONTROL_PATH_DIR: join(options.workDir, 'cp'),
    ANSIBLE_LOCAL_TEMP: join(options.workDir, 'tmp'),
    ANSIBLE_FORKS: String(speed.forks),
    ANSIBLE_GATHERING: 'smart',
    ANSIBLE_CACHE_PLUGIN: 'jsonfile',
    ANSIBLE_CACHE_PLUGIN_CONNECTION: speed.factCache,
    ANSIBLE_CACHE_PLUGIN_TIMEOUT: '86400',
    ANSIBLE_STRATEGY: strategyName(speed),
    ...(speed.mitogen ? { ANSIBLE_STRATEGY_PLUGINS: join(MITOGEN_DIR, 'plugins', 'strategy') } : {}),
  }
}

/** Reads what the callback appended since the last read: progress while ansible runs. */
function eventTail(path: string, onEvents: (events: AnsibleEvent[]) => void) {
  let offset = 0
  let rest = ''
  let reading: Promise<void> = Promise.resolve()
  const readMore = async () => {
    if (!existsSync(path)) return
    const file = await open(path, 'r')
    try {
      const buffer = Buffer.alloc(64 * 1024)
      for (;;) {
        const { bytesRead } = await file.read(buffer, 0, buffer.length, offset)
        if (bytesRead === 0) break
        offset += bytesRead
        const parsed = parseEventLines(rest + buffer.subarray(0, bytesRead).toString('utf8'))
        rest = parsed.rest
        if (parsed.events.length > 0) onEvents(parsed.events)
      }
    } finally {
      await file.close()
    }
  }
  return {
    poll: () => {
      reading = reading.then(readMore, readMore)
      return reading
    },
  }
}

export async function runPhase(options: PhaseOptions): Promise<PhaseResult> {
  await makeDirectories(join(options.workDir, 'cp'))
  await makeDirectories(join(options.workDir, 'tmp'))
  await makeDirectories(options.speed.factCache)
  const eventsFile = join(options.workDir, `events-${options.label}.jsonl`)
  const dir = options.ansibleDir ?? packagePath('ansible')
  const args = [
    '-i',
    options.inventoryPath,
    join(dir, 'playbooks', options.playbook),
    '--limit',
    options.hosts.join(','),
  ]
  if (options.check) args.push('--check', '--diff')
  if (options.tags.length > 0) args.push('--tags', options.tags.join(','))
  if (options.extraVarsFile) args.push('--extra-vars', `@${options.extraVarsFile}`)

  const events: AnsibleEvent[] = []
  const tail = eventTail(eventsFile, (batch) => {
    events.push(...batch)
    for (const e of batch) options.onEvent?.(e)
  })
  const timer = setInterval(() => void tail.poll().catch(() => undefined), options.pollMs ?? 250)
  let result
  try {
    result = await runProcess('ansible-playbook', args, {
      env: ansibleEnv({ ...options, eventsFile, ansibleDir: dir }),
      cwd: options.workDir,
      signal: options.signal,
      timeoutMs: 60 * 60_000,
      onSpawn: options.onSpawn,
    })
  } catch (error) {
    if (error instanceof CommandNotFoundError) {
      throw new FleetkitError('ANSIBLE_MISSING', error.message, {
        actions: ['apt-get install ansible-core (Debian/Ubuntu), or pip install ansible-core'],
        data: { command: 'ansible-playbook' },
      })
    }
    throw error
  } finally {
    clearInterval(timer)
  }
  await tail.poll()
  const output = `${result.stdout}\n${result.stderr}`.trim().split('\n')
  return { exitCode: result.exitCode, hosts: foldHostResults(events), outputTail: output.slice(-15).join('\n') }
}
