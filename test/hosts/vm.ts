// VM hosts: QEMU under software emulation (no KVM here) booting the golden rootfs's own kernel from
// a qcow2 overlay of the cached base disk, with a second virtio disk for data and a NoCloud seed
// disk (vfat, label cidata). About a minute to ssh; the host forwards only what the test names.
import { type ChildProcess, spawn } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { mkdtemp, readFile, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { freePort } from '../support/ports.js'
import { eventually } from '../support/eventually.js'
import { runHostCommandOk } from './exec.js'
import { generateKeyPair, generateOperatorKey, knownHostsLine } from './keys.js'
import { registerHost, unregisterHost } from './registry.js'
import { assertHostsAvailable } from './requirements.js'
import { alive, waitForExitSync } from './pids.js'
import { goldenImage, vmBaseImage } from './rootfs.js'
import { seedFiles } from './seed.js'
import { sshRun, sshRunOk } from './ssh.js'
import type { HostSeed, OperatorKey, VmHost } from './types.js'

/** The address the guest reaches this machine's forwarded ports at (QEMU user networking, guestfwd). */
export const GUEST_HOST_ADDRESS = '10.0.2.100'

export interface VmHostOptions {
  name?: string
  seed?: HostSeed
  /** Size of the second virtio disk (/dev/vdb), MiB (default 1024). */
  dataDiskMb?: number
  /** Guest connects to 10.0.2.100:guestPort and reaches 127.0.0.1:hostPort on this machine (one socat per connection). */
  guestForwards?: Array<{ guestPort: number; hostPort: number }>
  memoryMb?: number
  operator?: OperatorKey
  /** Wait for cloud-init's boot-finished before resolving (default true). */
  waitForCloudInit?: boolean
  /** How long to wait for ssh and for cloud-init (default 480 s each: about a minute on an idle 2-core machine, minutes on a busy one). */
  bootTimeoutMs?: number
}

let counter = 0

/** Starts one VM host (one at a time on a 2-core machine: two are no faster than one after another). */
export async function startVmHost(opts: VmHostOptions = {}): Promise<VmHost> {
  await assertHostsAvailable('vm')
  const image = await goldenImage()
  if (!image.kernel || !image.initrd) throw new Error(`test hosts: the VM's rootfs ${image.rootfs} has no kernel`)
  const { kernel, initrd } = image
  const base = await vmBaseImage()
  const index = ++counter
  const name = opts.name ?? `vm-${index}`
  const dir = await mkdtemp(join(tmpdir(), `fleetkit-vm-${name}-`))
  const registryName = `vm${process.pid}-${index}:${name}`
  let child: ChildProcess | undefined
  let stopped = false
  const killSync = () => {
    if (child?.pid && alive(child.pid)) {
      try {
        process.kill(child.pid, 'SIGKILL')
      } catch {
        /* ended */
      }
    }
    if (child?.pid) waitForExitSync([child.pid])
    rmSync(dir, { recursive: true, force: true, maxRetries: 3 })
  }
  registerHost({
    name: registryName,
    stop: async () => {
      killSync()
      unregisterHost(registryName)
    },
    killSync,
  })
  try {
    const operator = opts.operator ?? (await generateOperatorKey(dir))
    const hostKey = await generateKeyPair(dir, 'ssh_host_ed25519_key', `root@${name}`)
    const port = await freePort()

    const rootDisk = join(dir, 'root.qcow2')
    const dataDisk = join(dir, 'data.raw')
    const seedDisk = join(dir, 'seed.img')
    await runHostCommandOk('qemu-img', ['create', '-q', '-f', 'qcow2', '-F', 'raw', '-b', base, rootDisk])
    await runHostCommandOk('qemu-img', ['create', '-q', '-f', 'raw', dataDisk, `${opts.dataDiskMb ?? 1024}M`])
    const seed = seedFiles(name, opts.seed, {
      hostPrivateKey: await readFile(hostKey.privateKeyFile, 'utf8'),
      hostPublicKey: hostKey.publicKey,
      operatorPublicKey: operator.publicKey,
    })
    const seedDir = join(dir, 'seed')
    await runHostCommandOk('mkdir', ['-p', seedDir])
    const names: string[] = []
    for (const [file, content] of Object.entries(seed)) {
      if (content === undefined) continue
      await writeFile(join(seedDir, file), content, { mode: 0o600 })
      names.push(join(seedDir, file))
    }
    await runHostCommandOk('mkfs.vfat', ['-n', 'CIDATA', '-C', seedDisk, '4096'])
    await runHostCommandOk('mcopy', ['-i', seedDisk, ...names, '::'])

    const forwards = (opts.guestForwards ?? [])
      .map((f) => `,guestfwd=tcp:${GUEST_HOST_ADDRESS}:${f.guestPort}-cmd:socat STDIO TCP:127.0.0.1:${f.hostPort}`)
      .join('')
    const consoleLog = join(dir, 'console.log')
    const args = [
      '-name',
      name,
      '-accel',
      'tcg,thread=multi',
      '-cpu',
      'max',
      '-smp',
      '2',
      '-m',
      String(opts.memoryMb ?? 1024),
      '-display',
      'none',
      '-vga',
      'none',
      '-nodefaults',
      '-serial',
      `file:${consoleLog}`,
      '-kernel',
      kernel,
      '-initrd',
      initrd,
      '-append',
      'root=LABEL=fbroot rw console=ttyS0 net.ifnames=0 quiet systemd.show_status=0 no_timer_check',
      '-drive',
      `file=${rootDisk},if=virtio,format=qcow2,cache=unsafe`,
      '-drive',
      `file=${dataDisk},if=virtio,format=raw,cache=unsafe`,
      '-drive',
      `file=${seedDisk},if=virtio,format=raw,readonly=on`,
      // restrict=on: the guest reaches nothing but the forwards the test named.
      '-netdev',
      `user,id=net0,restrict=on,hostfwd=tcp:127.0.0.1:${port}-:22${forwards}`,
      '-device',
      'virtio-net-pci,netdev=net0',
    ]
    let stderr = ''
    child = spawn('qemu-system-x86_64', args, { stdio: ['ignore', 'ignore', 'pipe'] })
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-10_000)
    })
    const current = child
    const exited = new Promise<number | null>((resolve) => current.on('exit', (code) => resolve(code)))
    const exitReason = () =>
      current.exitCode !== null || current.signalCode !== null
        ? `qemu exited (${current.exitCode ?? current.signalCode}): ${stderr.trim()}`
        : undefined

    const host: VmHost = {
      kind: 'vm',
      name,
      address: '127.0.0.1',
      port,
      hostPublicKey: hostKey.publicKey,
      hostPrivateKeyFile: hostKey.privateKeyFile,
      knownHostsLine: knownHostsLine('127.0.0.1', port, hostKey.publicKey),
      operator,
      dataDisk: '/dev/vdb',
      dir,
      qemuPid: current.pid ?? 0,
      consoleLog,
      ssh: (command, o) => sshRun(host, command, o),
      sshOk: (command, o) => sshRunOk(host, command, o),
      async waitForCloudInit(timeoutMs = opts.bootTimeoutMs ?? 480_000) {
        await eventually(
          `${name}: cloud-init boot-finished`,
          async () =>
            (await sshRun(host, 'test -e /var/lib/cloud/instance/boot-finished', { timeoutMs: 15_000 })).code === 0,
          { timeoutMs, intervalMs: 2_000, stop: exitReason },
        )
      },
      async reboot() {
        const before = (await sshRunOk(host, 'cat /proc/sys/kernel/random/boot_id')).stdout.trim()
        await sshRun(host, 'systemctl reboot', { timeoutMs: 15_000 })
        await eventually(
          `${name}: ssh after the reboot`,
          async () => {
            const now = await sshRun(host, 'cat /proc/sys/kernel/random/boot_id', { timeoutMs: 15_000 })
            return now.code === 0 && now.stdout.trim() !== before
          },
          { timeoutMs: opts.bootTimeoutMs ?? 480_000, intervalMs: 2_000, stop: exitReason },
        )
      },
      async stop() {
        if (stopped) return
        stopped = true
        if (alive(current.pid ?? 0)) current.kill('SIGKILL')
        await exited
        rmSync(dir, { recursive: true, force: true, maxRetries: 3 })
        unregisterHost(registryName)
      },
    }
    registerHost({ name: registryName, stop: () => host.stop(), killSync })
    await eventually(
      `${name}: ssh on 127.0.0.1:${port} (the VM boots under emulation; console: ${consoleLog})`,
      async () => (await sshRun(host, 'true', { timeoutMs: 15_000 })).code === 0,
      { timeoutMs: opts.bootTimeoutMs ?? 480_000, intervalMs: 2_000, stop: exitReason },
    )
    if (opts.waitForCloudInit !== false) await host.waitForCloudInit()
    return host
  } catch (error) {
    // The console says why a VM never answered: keep its end before the folder goes.
    let console = ''
    try {
      console = readFileSync(join(dir, 'console.log'), 'utf8').replace(/\r/g, '').split('\n').slice(-15).join('\n')
    } catch {
      /* never started */
    }
    killSync()
    unregisterHost(registryName)
    if (console && error instanceof Error)
      error.message += `\n--- ${name}: the last lines of its console ---\n${console}`
    throw error
  }
}
