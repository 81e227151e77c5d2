// What every role suite does on a real test host: a playbook of preflight plus the roles under
// test, and the dev-sec sequence check -> converge -> idempotence, asserted from the PLAY RECAP.
import assert from 'node:assert/strict'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { stringify } from 'yaml'

import {
  type ContainerHost,
  type ContainerHostOptions,
  type Inventory,
  type PlaybookOptions,
  type PlaybookResult,
  assertHostsAvailable,
  runPlaybook,
  startContainerHosts,
  writeInventory,
} from '../../hosts/index.js'
import { WarmPool } from '../../hosts/warm-pool.js'

/**
 * What only a test harness passes: the hosts are containers (no kernel of their own; their release
 * is a production one), and the harness looks at them as root with its key (`host.ssh`), which the
 * sshd role would otherwise turn off.
 */
export const TEST_HARNESS_VARS = { preflight_allow_container: true, sshd_permit_root_login: 'prohibit-password' }

/**
 * runPlaybook with Debian's ansible-mitogen: one Python per host for the whole run instead of one
 * per task, which on a loaded 2-core machine is the difference between seconds and minutes a run.
 */
export function runRoles(options: PlaybookOptions): Promise<PlaybookResult> {
  return runPlaybook({ mitogen: true, ...options })
}

/** Writes DIR/NAME.yml: one play over every host with preflight first, then ROLES in order. */
export async function writeRolePlaybook(dir: string, name: string, roles: string[]): Promise<string> {
  const path = join(dir, `${name}.yml`)
  const play = {
    name: `Converge ${roles.join(', ')}`,
    hosts: 'all',
    become: true,
    gather_facts: false,
    roles: ['preflight', ...roles].map((role) => ({ role })),
  }
  await writeFile(path, stringify([play]))
  return path
}

/** The last lines of a run, for an assertion message. */
export function tail(run: PlaybookResult, lines = 40): string {
  return `${run.stdout}\n${run.stderr}`.split('\n').slice(-lines).join('\n')
}

export interface SequenceResult {
  check: PlaybookResult
  converge: PlaybookResult
  again: PlaybookResult
}

/**
 * check (neither fails nor, as `verifyUntouched` proves, changes the host) -> converge -> a second
 * run with changed=0. `verifyUntouched` runs between the check and the converge.
 */
export async function checkConvergeIdempotent(options: {
  inventory: Inventory
  playbook: string
  hosts: string[]
  extraVars?: Record<string, unknown>
  verifyUntouched?: () => Promise<void>
}): Promise<SequenceResult> {
  const base = {
    inventory: options.inventory,
    playbook: options.playbook,
    extraVars: { ...TEST_HARNESS_VARS, ...options.extraVars },
  }
  const check = await runRoles({ ...base, check: true, diff: true })
  assert.equal(check.code, 0, `--check failed:\n${tail(check)}`)
  for (const host of options.hosts) assert.equal(check.recap[host]?.failed, 0, tail(check))
  await options.verifyUntouched?.()
  const converge = await runRoles(base)
  assert.equal(converge.code, 0, `converge failed:\n${tail(converge)}`)
  const again = await runRoles(base)
  assert.equal(again.code, 0, `second run failed:\n${tail(again)}`)
  for (const host of options.hosts)
    assert.equal(again.recap[host]?.changed, 0, `second run changed something on ${host}:\n${tail(again, 80)}`)
  return { check, converge, again }
}

/** What a role suite works on: one container host, its pinned inventory and a playbook of the roles. */
export interface RoleHost {
  host: ContainerHost
  dir: string
  inventory: Inventory
  playbook: string
}

/**
 * The role suites' hosts, each booted while the suite before it works (test/hosts/warm-pool.ts): one
 * per process, so every suite that uses roleHostFixture shares it.
 */
const rolePool = new WarmPool(async (options: ContainerHostOptions) => (await startContainerHosts(1, options))[0]!)

/**
 * Registers before/after hooks in the calling describe block: one fresh container host named
 * NAME (booted with OPTIONS: a seed, a release, its host key) with a playbook of preflight plus ROLES, stopped and removed after the block. The host is
 * declared when the file loads and boots while the suite before this one works (`rolePool`).
 */
export function roleHostFixture(
  name: string,
  roles: string[],
  options: Omit<ContainerHostOptions, 'name'> = {},
): RoleHost {
  const fixture = {} as RoleHost
  const ticket = rolePool.declare({ ...options, name })
  before(async () => {
    await assertHostsAvailable('container')
    fixture.dir = await mkdtemp(join(tmpdir(), `fleetkit-role-${name}-`))
    fixture.host = await rolePool.take(ticket)
    fixture.inventory = await writeInventory([fixture.host], join(fixture.dir, 'inventory'))
    fixture.playbook = await writeRolePlaybook(fixture.dir, roles[0] ?? name, roles)
  })
  after(async () => {
    await fixture.host?.stop()
    if (fixture.dir) await rm(fixture.dir, { recursive: true, force: true })
  })
  return fixture
}
