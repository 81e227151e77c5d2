// Container hosts: systemd-nspawn booting an overlay of the golden rootfs (upper layer in the
// host's own folder), systemd as PID 1, a veth on the test bridge with a static address, sshd with
// a host key made before boot, cloud-init reading the test's NoCloud seed. Seconds to start.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, rmSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

import { findInit } from '../../src/provider/local-cloud/nspawn-init.js'
import { eventually } from '../support/eventually.js'
import { runHostCommand, runHostCommandOk } from './exec.js'
import { generateKeyPair, generateOperatorKey, knownHostsLine, writeKeyPair } from './keys.js'
import { BRIDGE, PREFIX_LENGTH, allocateAddress, ensureBridge, releaseAddress } from './network.js'
import { registerCleanup, registerHost, unregisterCleanup, unregisterHost } from './registry.js'
import { alive, waitForExitSync } from './pids.js'
import { goldenImage, type HostRelease } from './rootfs.js'
import { seedFiles } from './seed.js'
import { sshRun, sshRunOk } from './ssh.js'
import type { ContainerHost, HostSeed, OperatorKey } from './types.js'
import { assertHostsAvailable } from './requirements.js'

export interface ContainerHostOptions {
  /** Inventory name and hostname (default host-1, host-2, ...; unique within this process). */
  name?: string
  seed?: HostSeed
  /** A data disk: a sparse file on a loop device bound into the host (`host.dataDisk`). Size in MiB (default 512 when `true`). */
  dataDisk?: boolean | { sizeMb: number }
  /** Wait for cloud-init's boot-finished before resolving (default true). */
  waitForCloudInit?: boolean
  /** Reuse an operator key (default: one per startContainerHosts call). */
  operator?: OperatorKey
  /** The Debian release the host runs: bookworm (12, the default) or trixie (13); each has its own golden rootfs. */
  release?: HostRelease
  /**
   * The host's ed25519 key (OpenSSH private key and `ssh-ed25519 AAAA...` public line) instead of a
   * new one: for a test whose seed pins its own key (fleetkit's seeds do), so the helper's pin agrees.
   */
  hostKey?: { privateKey: string; publicKey: string }
}

let counter = 0

/** The files of `rel` (like `/etc/x`) under ROOT, with parent folders. */
async function put(root: string, rel: string, content: string, mode = 0o644): Promise<void> {
  const path = join(root, rel)
  await mkdir(dirname(path), { recursive: true })
  await writeFile(path, content, { mode })
  await chmod(path, mode)
}

/** Starts N container hosts from the golden rootfs (built on first use); `options` per host or one for all. */
export async function startContainerHosts(
  n: number,
  options: ContainerHostOptions | ((index: number) => ContainerHostOptions) = {},
): Promise<ContainerHost[]> {
  await assertHostsAvailable('container')
  await ensureBridge()
  const keysDir = await mkdtemp(join(tmpdir(), 'fleetkit-hosts-operator-'))
  const sharedOperator = await generateOperatorKey(keysDir)
  // The shared operator key goes with the last host of this set (or at process exit).
  let holders = n
  const dropKeys = () => rmSync(keysDir, { recursive: true, force: true })
  registerCleanup(keysDir, dropKeys)
  const released = () => {
    if (--holders > 0) return
    dropKeys()
    unregisterCleanup(keysDir)
  }
  const started: ContainerHost[] = []
  try {
    for (let i = 0; i < n; i++) {
      const opts = typeof options === 'function' ? options(i) : options
      const name =
        opts.name ?? (n > 1 && typeof options !== 'function' && options.name ? `${options.name}-${i + 1}` : undefined)
      const image = await goldenImage(opts.release)
      started.push(
        await startOne(image.rootfs, { ...opts, operator: opts.operator ?? sharedOperator, name, onStopped: released }),
      )
    }
    await Promise.all(
      started.map((host, i) => {
        const opts = typeof options === 'function' ? options(i) : options
        return opts.waitForCloudInit === false ? undefined : host.waitForCloudInit()
      }),
    )
  } catch (error) {
    await Promise.allSettled(started.map((h) => h.stop()))
    throw error
  }
  return started
}

async function startOne(
  rootfs: string,
  opts: ContainerHostOptions & { operator: OperatorKey; onStopped: () => void },
): Promise<ContainerHost> {
  const index = ++counter
  const name = opts.name ?? `host-${index}`
  // nspawn names the bridge-side veth vb-MACHINE (15 characters at most): short, unique on this machine.
  // `fh`, not the local cloud's `fk` (a local-cloud test counts the machines of its stub by that prefix), and two
  // random characters: a killed run's veth or propagate directory outlives it, and a PID reused after the counter
  // wrapped would otherwise meet its name ("Failed to add new veth interfaces: File exists").
  const random = randomBytes(1)[0]!.toString(36).padStart(2, '0')
  const machine = `fh${process.pid.toString(36)}${index.toString(36)}${random}`.slice(0, 12)
  const dir = await mkdtemp(join(tmpdir(), `fleetkit-host-${name}-`))
  const upper = join(dir, 'upper')
  const work = join(dir, 'work')
  const merged = join(dir, 'merged')
  await Promise.all([upper, work, merged].map((d) => mkdir(d)))
  const address = allocateAddress()
  let loopDevice: string | undefined
  let child: ChildProcess | undefined
  let nspawnPid = 0
  let initPid = 0
  let stopped = false
  let exited: Promise<number | null> = Promise.resolve(null)

  const killSync = () => {
    if (initPid && alive(initPid)) {
      try {
        process.kill(initPid, 'SIGKILL')
      } catch {
        /* ended */
      }
    }
    if (nspawnPid && alive(nspawnPid)) {
      try {
        process.kill(nspawnPid, 'SIGKILL')
      } catch {
        /* ended */
      }
    }
    // The overlay goes with the last process of the container's mount namespace: wait for them.
    waitForExitSync([initPid, nspawnPid])
    if (loopDevice) {
      try {
        execFileSync('losetup', ['-d', loopDevice], { stdio: 'ignore' })
      } catch {
        /* detached */
      }
    }
    releaseAddress(address)
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 })
  }

  try {
    const hostKey = opts.hostKey
      ? await writeKeyPair(dir, 'ssh_host_ed25519_key', opts.hostKey)
      : await generateKeyPair(dir, 'ssh_host_ed25519_key', `root@${name}`)
    const hostPrivate = await readFile(hostKey.privateKeyFile, 'utf8')

    // What the host must find at first boot, written into its own upper layer (the rootfs stays untouched).
    await put(upper, '/etc/ssh/ssh_host_ed25519_key', hostPrivate, 0o600)
    await put(upper, '/etc/ssh/ssh_host_ed25519_key.pub', `${hostKey.publicKey}\n`)
    await put(upper, '/root/.ssh/authorized_keys', `${opts.operator.publicKey}\n`, 0o600)
    await chmod(join(upper, 'root'), 0o700)
    await chmod(join(upper, 'root/.ssh'), 0o700)
    await put(
      upper,
      '/etc/network/interfaces',
      `# fleetkit test host: a static address on the test bridge (cloud-init networking is off in containers)\nsource-directory /etc/network/interfaces.d\nauto lo\niface lo inet loopback\nauto host0\niface host0 inet static\n    address ${address}/${PREFIX_LENGTH}\n`,
    )
    await put(
      upper,
      '/etc/cloud/cloud.cfg.d/99-fleetkit-test-container.cfg',
      '# fleetkit container test host: the helper configured the network and the pinned host key.\nnetwork: {config: disabled}\nssh_deletekeys: false\nssh_genkeytypes: [ed25519]\n',
    )
    const seed = seedFiles(name, opts.seed)
    for (const [file, content] of Object.entries(seed)) {
      if (content !== undefined) await put(upper, `/var/lib/cloud/seed/nocloud/${file}`, content, 0o600)
    }

    const extra: string[] = []
    if (opts.dataDisk) {
      const sizeMb = typeof opts.dataDisk === 'object' ? opts.dataDisk.sizeMb : 512
      const img = join(dir, 'data.img')
      await runHostCommandOk('truncate', ['-s', `${sizeMb}M`, img])
      loopDevice = (await runHostCommandOk('losetup', ['--find', '--show', img])).stdout.trim()
      extra.push(`--bind=${loopDevice}`)
    }

    const boot = async () => {
      // A private mount namespace holds the overlay: it goes away with nspawn, whatever ends it.
      const script =
        'mount -t overlay overlay -o "lowerdir=$1,upperdir=$2,workdir=$3" "$4" && shift 4 && exec systemd-nspawn "$@"'
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
        upper,
        work,
        merged,
        '--boot',
        '--register=no',
        '--keep-unit',
        `--machine=${machine}`,
        `--hostname=${name}`,
        '-D',
        merged,
        `--network-bridge=${BRIDGE}`,
        '--console=read-only',
        '--quiet',
        ...extra,
      ]
      // The unified cgroup hierarchy inside, as stock Debian 12 and 13 boot: this machine's hybrid (v1) layout
      // made systemd in the container fail a unit's start now and then with 219/CGROUP (3 restarts in 80 under
      // load; none in 80 unified), which CI met as fleetkit-firewall.service failing to start.
      child = spawn('unshare', args, {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, SYSTEMD_NSPAWN_UNIFIED_HIERARCHY: '1' },
      })
      nspawnPid = child.pid ?? 0
      let log = ''
      const keep = (chunk: Buffer) => {
        log = (log + chunk.toString()).slice(-20_000)
      }
      child.stdout!.on('data', keep)
      child.stderr!.on('data', keep)
      const current = child
      exited = new Promise((resolve) => current.on('exit', (code) => resolve(code)))
      initPid = await eventually(
        `${name}: the container's PID 1`,
        () => {
          if (current.exitCode !== null)
            throw new Error(
              `systemd-nspawn exited ${current.exitCode}: ${log.trim().split('\n').slice(-5).join(' | ')}`,
            )
          return findInit(nspawnPid)
        },
        { timeoutMs: 30_000, intervalMs: 50 },
      )
      await eventually(
        `${name}: ssh on ${address}`,
        async () => (await sshRun(host, 'true', { timeoutMs: 10_000 })).code === 0,
        {
          // A wait, not a limit: beside the emulated VM and another suite's container booting (the warm pool),
          // a container's first boot once took over 60 s to its sshd (the role suite's preflight host, 07:0x
          // on 2026-12-07; the same suite passed in the run before).
          timeoutMs: 150_000,
          intervalMs: 250,
          stop: () =>
            current.exitCode !== null
              ? `systemd-nspawn exited ${current.exitCode}: ${log.trim().split('\n').slice(-5).join(' | ')}`
              : undefined,
        },
      )
    }

    const host: ContainerHost = {
      kind: 'container',
      name,
      address,
      port: 22,
      hostPublicKey: hostKey.publicKey,
      hostPrivateKeyFile: hostKey.privateKeyFile,
      knownHostsLine: knownHostsLine(address, 22, hostKey.publicKey),
      operator: opts.operator,
      dataDisk: loopDevice,
      dir,
      upperDir: upper,
      get nspawnPid() {
        return nspawnPid
      },
      get initPid() {
        return initPid
      },
      ssh: (command, o) => sshRun(host, command, o),
      sshOk: (command, o) => sshRunOk(host, command, o),
      async waitForCloudInit(timeoutMs = 120_000) {
        await eventually(
          `${name}: cloud-init boot-finished`,
          async () =>
            (await sshRun(host, 'test -e /var/lib/cloud/instance/boot-finished', { timeoutMs: 10_000 })).code === 0,
          { timeoutMs, intervalMs: 500 },
        )
      },
      async reboot() {
        // systemd in a container asks nspawn to reboot by exiting it (status 133): boot again on the same upper layer.
        await sshRun(host, 'systemctl reboot', { timeoutMs: 10_000 })
        const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 60_000))])
        if (code === 'timeout') throw new Error(`${name}: did not go down within 60 s of systemctl reboot`)
        await boot()
      },
      async stop() {
        if (stopped) return
        stopped = true
        // systemd-nspawn ignores SIGTERM while the container powers off: end the container's PID 1
        // (which ends its PID namespace), then nspawn, by PID.
        if (initPid && alive(initPid)) process.kill(initPid, 'SIGKILL')
        const ended = await Promise.race([
          exited,
          new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 10_000)),
        ])
        if (ended === 'timeout' && alive(nspawnPid)) {
          process.kill(nspawnPid, 'SIGKILL')
          await exited
        }
        if (loopDevice) await runHostCommand('losetup', ['-d', loopDevice])
        releaseAddress(address)
        rmSync(dir, { recursive: true, force: true, maxRetries: 3 })
        unregisterHost(registryName)
        opts.onStopped()
      },
      killSync,
    } as ContainerHost & { killSync: () => void }
    const registryName = `${machine}:${name}`
    registerHost({ name: registryName, stop: () => host.stop(), killSync })
    await boot()
    return host
  } catch (error) {
    killSync()
    opts.onStopped()
    unregisterHost(`${machine}:${name}`)
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true })
    throw error
  }
}
