// The no-change fingerprint probe over node-ssh: the fleetkit_fingerprint module's own Python, piped to
// python3 on the host through a pinned session, one exec per host (no ansible-playbook, no fork per host).
import { readFileSync } from 'node:fs'

import { parse } from 'yaml'

import type { Env } from '../config/state-dir.js'
import { packagePath } from '../package-root.js'
import type { ManagedResource } from '../store/sync/node-fingerprints.js'
import type { HostFingerprint } from './host-results.js'
import { openPinned, type SshTarget } from './ssh-client.js'

const MODULE = packagePath('ansible', 'playbooks', 'library', 'fleetkit_fingerprint.py')
const PLAYBOOK = packagePath('ansible', 'playbooks', 'fingerprint.yml')
const MAIN_CALL = /\nif __name__ == '__main__':\n {4}main\(\)\s*$/

let cached: { source: string; always: ManagedResource[] } | undefined

/** The module's source and the resources fingerprint.yml always adds: one definition for both probes. */
function probeParts(): { source: string; always: ManagedResource[] } {
  if (cached) return cached
  const source = readFileSync(MODULE, 'utf8')
  if (!MAIN_CALL.test(source)) throw new Error(`${MODULE} no longer ends with its main() call`)
  const play = (
    parse(readFileSync(PLAYBOOK, 'utf8')) as { vars: { fleetkit_fingerprint_always: ManagedResource[] } }[]
  )[0]!
  cached = { source, always: play.vars.fleetkit_fingerprint_always }
  return cached
}

/**
 * The Python program that prints the fingerprint of `resources` (plus the always-read ones) as one JSON
 * line. With `install` (the probe after a converge) it also leaves that list on the host for the drift
 * check (fleetkit-drift-check.timer) and runs the check once, so the agent's next heartbeat carries it.
 */
export function fingerprintProgram(resources: readonly ManagedResource[], options: { install?: boolean } = {}): string {
  const { source, always } = probeParts()
  // A JSON string is a valid Python string literal: the resources never become code.
  const literal = JSON.stringify(JSON.stringify([...always, ...resources]))
  const install = options.install === true ? ', install=True' : ''
  return source.replace(MAIN_CALL, `\ndirect(json.loads(${literal})${install})\n`)
}

/** Reads one host's fingerprint; undefined when it could not be read (the node then runs in full). */
export async function probeOverSsh(
  target: SshTarget,
  resources: readonly ManagedResource[],
  env: Env,
  options: { install?: boolean } = {},
): Promise<HostFingerprint | undefined> {
  let session
  try {
    session = await openPinned(target, env)
  } catch {
    // A refused or silent host is not read: the full run reports it with its code.
    return undefined
  }
  try {
    const result = await session.exec(`${session.asRoot}python3 -`, fingerprintProgram(resources, options))
    if (result.code !== 0) return undefined
    const parsed = JSON.parse(result.stdout.trim().split('\n').pop() ?? '') as HostFingerprint
    return /^[0-9a-f]{64}$/.test(parsed.digest) && typeof parsed.items === 'object' ? parsed : undefined
  } catch {
    return undefined
  } finally {
    session.close()
  }
}
