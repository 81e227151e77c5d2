// Running commands on a test host over real ssh: the operator key, the host key pinned through a
// known_hosts file of its own (StrictHostKeyChecking=yes), no agent, no user configuration.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'

import { ProcessFailed, runProcess } from '../support/process.js'
import type { ProcessResult } from './exec.js'

export interface SshTarget {
  address: string
  port: number
  knownHostsLine: string
  operator: { privateKeyFile: string }
  dir: string
}

/** The ssh options every connection to a test host uses (also Ansible's, through the inventory). */
export function sshOptions(target: Pick<SshTarget, 'operator'>, knownHostsFile: string): string[] {
  return [
    '-F',
    'none',
    '-i',
    target.operator.privateKeyFile,
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    'IdentityAgent=none',
    '-o',
    'StrictHostKeyChecking=yes',
    '-o',
    `UserKnownHostsFile=${knownHostsFile}`,
    '-o',
    'GlobalKnownHostsFile=/dev/null',
    '-o',
    'HostKeyAlgorithms=ssh-ed25519',
    '-o',
    'BatchMode=yes',
    '-o',
    'ConnectTimeout=5',
    '-o',
    'LogLevel=ERROR',
    '-o',
    'ServerAliveInterval=5',
    '-o',
    'ServerAliveCountMax=3',
  ]
}

export function hostKnownHostsFile(target: SshTarget): string {
  const file = join(target.dir, 'known_hosts')
  writeFileSync(file, `${target.knownHostsLine}\n`)
  return file
}

export function sshArgs(target: SshTarget, command: string): string[] {
  return [
    ...sshOptions(target, hostKnownHostsFile(target)),
    '-p',
    String(target.port),
    `root@${target.address}`,
    '--',
    command,
  ]
}

export function sshRun(
  target: SshTarget,
  command: string,
  options: { input?: string; timeoutMs?: number } = {},
): Promise<ProcessResult> {
  return runProcess('ssh', sshArgs(target, command), { input: options.input, timeoutMs: options.timeoutMs ?? 120_000 })
}

export async function sshRunOk(
  target: SshTarget,
  command: string,
  options: { input?: string; timeoutMs?: number } = {},
): Promise<ProcessResult> {
  const result = await sshRun(target, command, options)
  if (result.code !== 0) throw new ProcessFailed('ssh', [`root@${target.address}`, command], result)
  return result
}
