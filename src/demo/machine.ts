// What a real machine gives a node that the demo's loopback host cannot: a private root directory
// per node with the kernel and mount state the Ansible roles would leave (br_netfilter's sysctls, the
// data volume mounted as xfs), and small stub commands first on PATH for what needs root on a real
// host (apt-get, systemctl, modprobe, sysctl, nft, useradd, chown, runuser). Each stub logs its call.
import { readFile, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { makeDirectories } from '../fs/make-directories.js'

/** The variable the stubs log their calls to (one file per node). */
export const CALLS_LOG_ENV = 'FLEETKIT_DEMO_CALLS'

const logged = (name: string, body = '') =>
  `#!/bin/bash\n# fleetkit demo stub: ${name} needs a real machine; the call is logged, nothing runs.\necho "${name} $*" >>"\${${CALLS_LOG_ENV}:-/dev/null}"\n${body}exit 0\n`

const STUBS: Record<string, string> = {
  'apt-get': logged('apt-get'),
  modprobe: logged('modprobe'),
  sysctl: logged('sysctl'),
  useradd: logged('useradd'),
  chown: logged('chown'),
  // The demo runs the unit's ExecStart itself: the unit is active and enabled.
  systemctl: logged('systemctl', 'case "$1" in is-active) echo active ;; is-enabled) echo enabled ;; esac\n'),
  // The firewall role's table, as `nft list table inet fleetkit` shows a loaded one.
  nft: logged('nft', 'if [ "$*" = "list table inet fleetkit" ]; then echo "table inet fleetkit {"; echo "}"; fi\n'),
  // The simulated machine has no fleetkit-agent account until useradd (stubbed) makes one.
  id: `#!/bin/bash\nif [ "$1" = -u ] && [ "$2" = fleetkit-agent ]; then exit 1; fi\nexec /usr/bin/id "$@"\n`,
  getent: `#!/bin/bash\nif [ "$2" = fleetkit-agent ]; then exit 2; fi\nexec /usr/bin/getent "$@"\n`,
  // runuser -u USER -- CMD...: logged, then CMD runs as this user (the demo creates no account).
  runuser: `#!/bin/bash\necho "runuser $*" >>"\${${CALLS_LOG_ENV}:-/dev/null}"\nwhile [ "$1" != -- ]; do shift; done\nshift\nexec "$@"\n`,
}

export async function writeStubCommands(binDir: string): Promise<string[]> {
  await makeDirectories(binDir)
  for (const [name, body] of Object.entries(STUBS)) await writeFile(join(binDir, name), body, { mode: 0o755 })
  return Object.keys(STUBS)
}

/** Files of this machine the agent's host facts read, copied into a node's root (CPU, memory, kernel). */
const FACT_FILES = ['/proc/meminfo', '/sys/devices/system/cpu/online', '/proc/sys/kernel/osrelease']

/**
 * The kernel and mount state a converged host has, under `root`: the bridge sysctls at 1, the data
 * volume (if the node declares one) listed in /proc/self/mounts as xfs, and this machine's facts.
 */
export async function prepareMachineRoot(root: string, dataMount: string): Promise<void> {
  const files: Record<string, string> = {
    '/proc/sys/net/bridge/bridge-nf-call-iptables': '1\n',
    '/proc/sys/net/bridge/bridge-nf-call-ip6tables': '1\n',
    '/proc/self/mounts': `sysfs /sys sysfs rw 0 0\n${dataMount ? `/dev/sdb ${dataMount.replaceAll(' ', '\\040')} xfs rw,relatime 0 0\n` : ''}`,
  }
  for (const path of FACT_FILES) {
    const content = await readFile(path, 'utf8').catch(() => undefined)
    if (content !== undefined) files[path] = content
  }
  for (const [path, content] of Object.entries(files)) {
    await makeDirectories(dirname(join(root, path)))
    await writeFile(join(root, path), content)
  }
  if (dataMount) await makeDirectories(join(root, dataMount))
}
