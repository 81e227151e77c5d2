// `fleetkit validate --ansible`: the rendered inventory must load in ansible-inventory, and every
// playbook must pass --syntax-check. One process checks them all; only a failed batch is bisected.
// An abort (Ctrl-C) ends the ansible processes and removes the temporary directory before it rejects.
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'

import { FleetkitError } from '../checks/fleetkit-error.js'
import type { Env } from '../config/state-dir.js'
import type { Definition } from '../definition/types.js'
import { packagePath } from '../package-root.js'
import { type InventoryStateNode, renderInventory } from '../render/inventory.js'
import { CommandNotFoundError, runProcess } from './process-runner.js'

const ANSIBLE_CHECK_ID = 'definition:playbooks'

interface AnsibleFinding {
  code: 'ANSIBLE_PLAYBOOK_INVALID' | 'ANSIBLE_INVENTORY_INVALID'
  check: typeof ANSIBLE_CHECK_ID
  /** The playbook (relative to the package root when it is fleetkit's own) or the inventory. */
  path: string
  /** The first error line ansible printed. */
  message: string
}

export interface AnsibleCheckOptions {
  definition: Definition
  hostPolicy: unknown
  /** Defaults to fleetkit's own ansible/playbooks. */
  playbookDir?: string
  stateNodes?: readonly InventoryStateNode[]
  /** Environment for the ansible processes (PATH decides which ansible runs). */
  env?: Env
  /** Aborting ends the running ansible processes and removes the temporary directory, then rejects with the reason. */
  signal?: AbortSignal
  /** Told when a step begins (for a progress line). */
  progress?: (message: string) => void
}

export interface AnsibleCheckResult {
  findings: AnsibleFinding[]
  playbooks: string[]
  /** ansible-playbook processes run: 1 when every playbook is valid. */
  syntaxCheckRuns: number
}

interface RunResult {
  ok: boolean
  output: string
  stdout: string
}

async function run(
  command: string,
  args: string[],
  env: Env,
  cwd: string,
  signal: AbortSignal | undefined,
): Promise<RunResult> {
  try {
    const result = await runProcess(command, args, { env, cwd, signal, timeoutMs: 300_000 })
    return { ok: result.ok, output: `${result.stderr}\n${result.stdout}`, stdout: result.stdout }
  } catch (error) {
    if (!(error instanceof CommandNotFoundError)) throw error
    throw new FleetkitError('ANSIBLE_MISSING', error.message, {
      actions: ['apt-get install ansible-core (Debian/Ubuntu), or pip install ansible-core'],
      data: { command },
    })
  }
}

/** The first line of ansible's error, without the "ERROR! " prefix and colours. */
function firstAnsibleError(output: string): string {
  const lines = output
    // eslint-disable-next-line no-control-regex -- strips ANSI colour codes
    .replace(/\x1b\[[0-9;]*m/g, '')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '')
  const error =
    lines.find((l) => l.startsWith('ERROR!')) ??
    lines.find((l) => /error|failed/i.test(l)) ??
    lines[0] ??
    'failed without output'
  return error.replace(/^ERROR!\s*/, '').slice(0, 400)
}

async function listPlaybooks(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true })
  return entries
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
    .map((e) => join(dir, e.name))
    .sort()
}

/** A syntax check needs no credentials: the database URL and token-like variables stay here. */
const SECRET_VARIABLE = /^DATABASE_URL$|^PGPASSWORD$|TOKEN|SECRET|PASSW|CREDENTIAL|PRIVATE_KEY/i

function withoutSecrets(env: Env): Env {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !SECRET_VARIABLE.test(name)))
}

export async function checkAnsible(options: AnsibleCheckOptions): Promise<AnsibleCheckResult> {
  const playbookDir = options.playbookDir ?? packagePath('ansible', 'playbooks')
  const config = join(playbookDir, '..', 'ansible.cfg')
  const env: Env = {
    ...withoutSecrets(options.env ?? process.env),
    ANSIBLE_NOCOLOR: '1',
    ANSIBLE_RETRY_FILES_ENABLED: 'false',
    // A file no plugin can parse is an error, not a warning and an empty inventory.
    ANSIBLE_INVENTORY_UNPARSED_FAILED: 'true',
    ANSIBLE_INVENTORY_ENABLED: 'yaml',
    ...(existsSync(config) ? { ANSIBLE_CONFIG: config } : {}),
  }
  const { signal } = options
  const progress = options.progress ?? (() => {})
  signal?.throwIfAborted()
  const work = await mkdtemp(join(tmpdir(), 'fleetkit-ansible-'))
  try {
    progress('rendering the inventory')
    const inventoryPath = join(work, 'inventory.yml')
    const rendered = renderInventory({
      definition: options.definition,
      stateNodes: options.stateNodes ?? [],
      hostPolicy: options.hostPolicy,
      knownHostsPath: join(work, 'known_hosts'),
    })
    await writeFile(inventoryPath, rendered.yaml)
    await writeFile(join(work, 'known_hosts'), rendered.knownHosts)

    const findings: AnsibleFinding[] = []
    progress('ansible-inventory --list: loading the rendered inventory')
    const inventory = await run('ansible-inventory', ['-i', inventoryPath, '--list'], env, work, signal)
    if (!inventory.ok) {
      findings.push({
        code: 'ANSIBLE_INVENTORY_INVALID',
        check: ANSIBLE_CHECK_ID,
        path: 'inventory.yml',
        message: firstAnsibleError(inventory.output),
      })
    } else {
      const missing = missingHosts(inventory.stdout, rendered.hosts)
      if (missing.length > 0) {
        findings.push({
          code: 'ANSIBLE_INVENTORY_INVALID',
          check: ANSIBLE_CHECK_ID,
          path: 'inventory.yml',
          message: `ansible-inventory does not list ${missing.length} rendered host(s): ${missing.slice(0, 5).join(', ')}`,
        })
      }
    }

    const playbooks = await listPlaybooks(playbookDir)
    let runs = 0
    const syntaxCheck = (list: string[]) => {
      runs += 1
      return run('ansible-playbook', ['--syntax-check', '-i', inventoryPath, ...list], env, work, signal)
    }
    // Bisect a failed batch: a half that passes holds no broken playbook, so k broken
    // playbooks out of n cost about k * log2(n) extra processes instead of n.
    const broken = async (list: string[], failed?: RunResult): Promise<{ path: string; output: string }[]> => {
      const result = failed ?? (await syntaxCheck(list))
      if (result.ok) return []
      if (list.length === 1) return [{ path: list[0]!, output: result.output }]
      const middle = Math.ceil(list.length / 2)
      const halves = await Promise.all([broken(list.slice(0, middle)), broken(list.slice(middle))])
      const found = halves.flat()
      // Both halves pass only when playbooks break each other; then the batch is the finding.
      return found.length > 0 ? found : [{ path: list.join(' '), output: result.output }]
    }
    if (playbooks.length > 0) {
      progress(`ansible-playbook --syntax-check: ${playbooks.length} playbook${playbooks.length === 1 ? '' : 's'}`)
      const batch = await syntaxCheck(playbooks)
      if (!batch.ok) {
        progress('ansible-playbook --syntax-check: finding the broken playbooks')
        for (const b of await broken(playbooks, batch)) {
          findings.push({
            code: 'ANSIBLE_PLAYBOOK_INVALID',
            check: ANSIBLE_CHECK_ID,
            path: displayPath(b.path),
            message: firstAnsibleError(b.output),
          })
        }
      }
    }
    return { findings, playbooks: playbooks.map(displayPath), syntaxCheckRuns: runs }
  } finally {
    await rm(work, { recursive: true, force: true })
  }
}

function displayPath(path: string): string {
  const root = packagePath()
  return path.startsWith(`${root}/`)
    ? path.slice(root.length + 1)
    : path.includes(' ')
      ? path
      : join(basename(join(path, '..')), basename(path))
}

function missingHosts(listJson: string, hosts: readonly string[]): string[] {
  let listed: Set<string>
  try {
    const parsed = JSON.parse(listJson) as { _meta?: { hostvars?: Record<string, unknown> } }
    listed = new Set(Object.keys(parsed._meta?.hostvars ?? {}))
  } catch {
    return [...hosts]
  }
  return hosts.filter((h) => !listed.has(h))
}

export interface AnsibleSummary {
  inventoryHosts: number
  playbooks: string[]
  syntaxCheckRuns: number
}

/**
 * What `fleetkit validate --ansible` adds: the checks above over the declared nodes (no state
 * database, so CI can run it), throwing one error that lists every finding.
 */
export async function assertAnsibleValid(
  definition: Definition,
  hostPolicy: unknown,
  env: Env = process.env,
  playbookDir?: string,
  control: Pick<AnsibleCheckOptions, 'signal' | 'progress'> = {},
): Promise<AnsibleSummary> {
  const result = await checkAnsible({ definition, hostPolicy, env, playbookDir, ...control })
  if (result.findings.length > 0) {
    const playbooks = result.findings.filter((f) => f.code === 'ANSIBLE_PLAYBOOK_INVALID')
    const message =
      `${result.findings.length} Ansible finding(s): ${playbooks.length} playbook(s) fail --syntax-check` +
      (playbooks.length < result.findings.length ? ', and ansible-inventory cannot read the rendered inventory' : '')
    const options = {
      actions: ['fix each file named above, then run fleetkit validate --ansible again'],
      detailLines: result.findings.map((f) => `${f.code} ${f.check} ${f.path}: ${f.message}`),
      data: { findings: result.findings },
    }
    if (playbooks.length > 0) throw new FleetkitError('ANSIBLE_PLAYBOOK_INVALID', message, options)
    throw new FleetkitError('ANSIBLE_INVENTORY_INVALID', message, options)
  }
  return {
    inventoryHosts: definition.nodes.length,
    playbooks: result.playbooks,
    syntaxCheckRuns: result.syntaxCheckRuns,
  }
}
