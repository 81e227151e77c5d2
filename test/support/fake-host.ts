// A fake host root for agent tests: /proc and /sys files in a temp directory and a
// command runner with canned answers.
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

import type { CommandResult, CommandRunner } from '../../src/agent/command-runner.js'
import type { Host } from '../../src/agent/host.js'

export async function makeFakeRoot(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'fleetkit-fake-host-'))
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true })
    await writeFile(join(root, path), content)
  }
  return root
}

export const HEALTHY_FILES: Record<string, string> = {
  '/sys/devices/system/cpu/online': '0-3,6\n',
  '/proc/meminfo': 'MemTotal:        8039144 kB\nMemFree:          123 kB\n',
  '/proc/sys/kernel/osrelease': '6.8.0-45-generic\n',
  '/proc/sys/net/bridge/bridge-nf-call-iptables': '1\n',
  '/proc/sys/net/bridge/bridge-nf-call-ip6tables': '1\n',
  '/proc/self/mounts': 'sysfs /sys sysfs rw 0 0\n/dev/sdb1 /srv/fleet\\040data xfs rw,relatime 0 0\n',
  '/srv/fleet data/.keep': '',
}

export function fakeRunner(answers: Record<string, Partial<CommandResult>>): CommandRunner & { calls: string[] } {
  const calls: string[] = []
  const run = async (command: string, args: readonly string[]): Promise<CommandResult> => {
    const line = [command, ...args].join(' ')
    calls.push(line)
    const answer = answers[line] ?? answers[command]
    if (!answer) return { exitCode: null, stdout: '', stderr: '', error: 'ENOENT' }
    return { exitCode: 0, stdout: '', stderr: '', ...answer }
  }
  return Object.assign(run, { calls })
}

export function fakeHost(root: string, answers: Record<string, Partial<CommandResult>>): Host {
  return { root, run: fakeRunner(answers) }
}
