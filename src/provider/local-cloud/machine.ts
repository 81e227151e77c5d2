// One server of the local cloud: systemd-nspawn booting an overlay of its image (upper layer in the machine's
// own folder), systemd as PID 1, a veth on the cloud's bridge with the server's address, cloud-init reading
// the request's user_data and SSH keys from a NoCloud seed. The overlay is mounted in a private mount
// namespace (`unshare --mount`) that goes with nspawn, whatever ends it. A reboot from inside (nspawn exits
// 133) boots it again; the API's power actions signal its PID 1 as a hypervisor would press buttons.
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { chmod, rm, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'

import type { LoopVolume } from './loop-volumes.js'
import { run, runOk } from './run.js'
import { findInit } from './nspawn-init.js'
import { makeDirectories } from '../../fs/make-directories.js'

export interface MachineSpec {
  serverId: number
  /** The server's name: the hostname. */
  name: string
  /** nspawn's machine name (its veth is vb-NAME: 12 characters at most). */
  machineName: string
  rootfs: string
  dir: string
  address: string
  prefixLength: number
  gateway: string
  bridge: string
  userData: Buffer
  sshKeys: string[]
}

/** systemd's signals as PID 1: SIGINT reboots (ctrl-alt-del), SIGRTMIN+4 powers off (glibc's SIGRTMIN is 34). */
const SIGNAL_REBOOT = 'SIGINT'
const SIGNAL_POWEROFF = 38
/** nspawn's exit status when the container asked to reboot. */
const REBOOT_STATUS = 133

export class Machine {
  private child: ChildProcess | undefined
  private initPid = 0
  private exited: Promise<number | null> = Promise.resolve(null)
  /** Whether the machine should be up: an exit while it should is a reboot from inside, and it boots again. */
  private wanted = false
  private log = ''
  /** Volumes to find at boot (bound in) and after (made in /dev when attached). */
  private readonly volumes = new Map<number, LoopVolume>()
  private booting: Promise<void> | undefined

  constructor(private readonly spec: MachineSpec) {}

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null
  }

  /** Writes what the first boot finds into the upper layer: the address, the NoCloud seed, the mark. */
  async prepare(): Promise<void> {
    const upper = join(this.spec.dir, 'upper')
    await Promise.all(['upper', 'work', 'merged'].map((d) => makeDirectories(join(this.spec.dir, d))))
    const { address, prefixLength, gateway, name, serverId, sshKeys } = this.spec
    await put(
      upper,
      'etc/network/interfaces',
      `# fleetkit local cloud: the server's public address on the cloud's bridge (cloud-init's network is off)\n` +
        `source-directory /etc/network/interfaces.d\nauto lo\niface lo inet loopback\nauto host0\n` +
        `iface host0 inet static\n    address ${address}/${prefixLength}\n    gateway ${gateway}\n`,
    )
    await put(
      upper,
      'etc/cloud/cloud.cfg.d/99-fleetkit-local-cloud-machine.cfg',
      '# fleetkit local cloud: the machine has a static address on the bridge.\nnetwork: {config: disabled}\n',
    )
    // The machines reach nothing but this machine, so no name resolves: a resolver on their own loopback, where
    // nothing listens, fails a lookup at once, where the host's (unreachable from the bridge) made apt-get update
    // in the agent seed wait out four DNS timeouts (90 s of every first boot). nspawn leaves it as written.
    await put(
      upper,
      'etc/resolv.conf',
      '# fleetkit local cloud: no name service reachable from here\nnameserver 127.0.0.1\n',
    )
    // preflight accepts a container carrying this mark as a stand-in for a provider's VM (no extra vars).
    await put(
      upper,
      'etc/fleetkit-local-cloud-machine',
      `# A machine of fleetkit's local cloud (fleetkit provider stub --boot): server ${serverId}, a container\n` +
        `# standing in for a provider's VM. fleetkit's preflight accepts it as one.\n`,
    )
    const metaData =
      `instance-id: i-${serverId}\nlocal-hostname: ${name}\n` +
      (sshKeys.length > 0 ? `public-keys:\n${sshKeys.map((k) => `  - ${JSON.stringify(k.trim())}\n`).join('')}` : '')
    await put(upper, 'var/lib/cloud/seed/nocloud/meta-data', metaData, 0o600)
    await put(upper, 'var/lib/cloud/seed/nocloud/user-data', this.spec.userData, 0o600)
  }

  /** Boots the machine; resolves when its PID 1 runs (as a cloud's start action does, before sshd answers). */
  start(): Promise<void> {
    if (this.running) return this.booting ?? Promise.resolve()
    this.wanted = true
    this.booting = this.boot()
    return this.booting
  }

  private async boot(): Promise<void> {
    const { dir, rootfs, machineName, name, bridge } = this.spec
    const script =
      'mount -t overlay overlay -o "lowerdir=$1,upperdir=$2,workdir=$3" "$4" && shift 4 && exec systemd-nspawn "$@"'
    const binds = [...this.volumes.values()].map((v) => `--bind=${v.device}`)
    const args = [
      '--mount',
      '--propagation',
      'private',
      '--',
      'sh',
      '-c',
      script,
      'nspawn-overlay',
      rootfs,
      join(dir, 'upper'),
      join(dir, 'work'),
      join(dir, 'merged'),
      '--boot',
      '--register=no',
      '--keep-unit',
      '--resolv-conf=off',
      `--machine=${machineName}`,
      `--hostname=${name}`,
      '-D',
      join(dir, 'merged'),
      `--network-bridge=${bridge}`,
      '--console=read-only',
      '--quiet',
      ...binds,
    ]
    // The unified cgroup hierarchy inside, as stock Debian 12 and 13 boot (under a hybrid layout a unit's
    // start failed now and then with 219/CGROUP: test/hosts/README.md).
    const child = spawn('unshare', args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, SYSTEMD_NSPAWN_UNIFIED_HIERARCHY: '1' },
    })
    this.child = child
    this.initPid = 0
    const keep = (chunk: Buffer) => (this.log = (this.log + chunk.toString()).slice(-20_000))
    child.stdout.on('data', keep)
    child.stderr.on('data', keep)
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)))
    void this.exited.then((code) => {
      if (this.child !== child) return
      // systemd inside asked for a reboot (or ended unasked): a real server comes back when it should be up.
      if (this.wanted && code === REBOOT_STATUS) this.booting = this.boot().catch(() => undefined)
    })
    const deadline = Date.now() + 30_000
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`systemd-nspawn exited ${child.exitCode ?? child.signalCode}: ${this.lastWords()}`)
      }
      const init = findInit(child.pid ?? 0)
      if (init) {
        this.initPid = init
        for (const volume of this.volumes.values()) await this.linkVolume(volume, 'by-id')
        return
      }
      await sleep(50)
    }
    throw new Error(`machine ${name}: no PID 1 within 30 s: ${this.lastWords()}`)
  }

  /** Hard power off (the API's poweroff): PID 1 killed, then nspawn. */
  async powerOff(): Promise<void> {
    this.wanted = false
    await this.booting?.catch(() => undefined)
    await this.kill()
  }

  /** ACPI shutdown: systemd powers off; a hard power off after 60 s, as the API's shutdown does not force. */
  async shutdown(): Promise<void> {
    this.wanted = false
    await this.booting?.catch(() => undefined)
    if (!this.running) return
    this.signalInit(SIGNAL_POWEROFF)
    if ((await this.waitForExit(60_000)) === 'timeout') await this.kill()
  }

  /** ACPI reboot: systemd reboots, nspawn exits 133, the machine boots again; resolves when it has. */
  async reboot(): Promise<void> {
    await this.booting?.catch(() => undefined)
    if (!this.running) return this.start()
    const before = this.child
    this.signalInit(SIGNAL_REBOOT)
    if ((await this.waitForExit(60_000)) === 'timeout') {
      await this.kill()
      return this.start()
    }
    // The exit handler booted it again (status 133); anything else ended it: boot it as reset would.
    if (this.child === before) return this.start()
    await this.booting
  }

  /** Hard reset: killed and booted again. */
  async reset(): Promise<void> {
    await this.powerOff()
    await this.start()
  }

  /** Makes VOLUME's device (and the API's /dev/disk/by-id name for it) appear in the machine. */
  async attach(volume: LoopVolume): Promise<void> {
    this.volumes.set(volume.id, volume)
    if (this.running && this.initPid) await this.linkVolume(volume, 'node')
  }

  async detach(volumeId: number): Promise<void> {
    const volume = this.volumes.get(volumeId)
    if (!volume) return
    this.volumes.delete(volumeId)
    if (this.running && this.initPid) {
      await run('nsenter', ['-t', String(this.initPid), '-m', '--', 'rm', '-f', volume.device, byIdPath(volume.id)])
    }
  }

  /** Powers off and removes the machine's folder (upper layer, seed). */
  async destroy(): Promise<void> {
    await this.powerOff()
    await rm(this.spec.dir, { recursive: true, force: true, maxRetries: 3 })
  }

  /** At process exit (no awaiting left): SIGKILL to PID 1 and nspawn, then a short wait for them to end. */
  killSync(): void {
    this.wanted = false
    const pids = [this.initPid, this.child?.pid ?? 0].filter((pid) => pid > 0)
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        /* ended */
      }
    }
    const until = Date.now() + 5_000
    while (pids.some((pid) => existsSync(`/proc/${pid}`)) && Date.now() < until) {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50)
    }
  }

  /** The device node and its by-id link inside the machine; at boot nspawn bound the node in already. */
  private async linkVolume(volume: LoopVolume, what: 'node' | 'by-id'): Promise<void> {
    const node = what === 'node' ? `[ -b "$1" ] || mknod "$1" b ${volume.major} ${volume.minor}; chmod 0660 "$1"; ` : ''
    const script = `${node}mkdir -p /dev/disk/by-id && ln -sfn "$1" "$2"`
    await runOk('nsenter', [
      '-t',
      String(this.initPid),
      '-m',
      '--',
      'sh',
      '-c',
      script,
      'link',
      volume.device,
      byIdPath(volume.id),
    ])
  }

  private signalInit(signal: NodeJS.Signals | number): void {
    try {
      if (this.initPid) process.kill(this.initPid, signal)
    } catch {
      /* it ended */
    }
  }

  private async waitForExit(timeoutMs: number): Promise<number | null | 'timeout'> {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), timeoutMs)))
    try {
      return await Promise.race([this.exited, timeout])
    } finally {
      clearTimeout(timer)
    }
  }

  /** SIGKILL to PID 1 (nspawn ignores SIGTERM while a guest powers off), then to nspawn if it lingers. */
  private async kill(): Promise<void> {
    if (!this.running) return
    this.signalInit('SIGKILL')
    if ((await this.waitForExit(10_000)) === 'timeout') {
      this.child?.kill('SIGKILL')
      await this.exited
    }
  }

  private lastWords(): string {
    return this.log.trim().split('\n').slice(-5).join(' | ')
  }
}

/** The name the API reports as the volume's linux_device. */
function byIdPath(volumeId: number): string {
  return `/dev/disk/by-id/scsi-0HC_Volume_${volumeId}`
}

async function put(root: string, rel: string, content: string | Buffer, mode = 0o644): Promise<void> {
  const path = join(root, rel)
  await makeDirectories(dirname(path))
  await writeFile(path, content, { mode })
  await chmod(path, mode)
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
