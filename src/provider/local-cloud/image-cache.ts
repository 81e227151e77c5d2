// The local cloud's images: one Debian root filesystem per release, built by debootstrap from the mirror
// this machine's apt sources name into the cache folder (FLEETKIT_LOCAL_CLOUD_CACHE, default
// /var/cache/fleetkit/local-cloud), once, and reused by every machine as an overlay's read-only lower layer.
// A build goes into `NAME.partial-PID` and is renamed when complete (a killed build is never used), under a
// lock file holding the builder's PID so two stubs build once (a dead builder's lock is taken over).
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { chmod, mkdir, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'

import { FleetkitError } from '../../checks/fleetkit-error.js'
import { debianMirror, IMAGE_DROPINS, IMAGE_PACKAGES, imageKey, LOCAL_CLOUD_RELEASES } from './image-recipe.js'
import { run, runOk, runStreaming } from './run.js'
import { makeDirectories } from '../../fs/make-directories.js'

export const DEFAULT_IMAGE_CACHE = '/var/cache/fleetkit/local-cloud'

export function imageCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.FLEETKIT_LOCAL_CLOUD_CACHE?.trim() || DEFAULT_IMAGE_CACHE
}

export interface ImageCacheOptions {
  cacheDir: string
  /** Progress lines (a build takes minutes). */
  log?: (line: string) => void
  /** Ready root filesystems by image name, used instead of building (a test's cached golden rootfs). */
  prebuilt?: Readonly<Record<string, string>>
  /** Ends a build (debootstrap killed, the partial tree removed): the stub was stopped. */
  signal?: AbortSignal
  /** Waits between looks at another builder's lock (default 2 s). */
  pollMs?: number
}

/** The root filesystem of an image name (`debian-12`), built on first use; concurrent calls share one build. */
export class ImageCache {
  private readonly pending = new Map<string, Promise<string>>()

  constructor(private readonly options: ImageCacheOptions) {}

  rootfs(imageName: string): Promise<string> {
    const prebuilt = this.options.prebuilt?.[imageName]
    if (prebuilt) return Promise.resolve(prebuilt)
    let pending = this.pending.get(imageName)
    if (!pending) {
      pending = this.build(imageName)
      this.pending.set(imageName, pending)
      pending.catch(() => this.pending.delete(imageName))
    }
    return pending
  }

  private async build(imageName: string): Promise<string> {
    const suite = LOCAL_CLOUD_RELEASES[imageName]
    if (!suite) throw new Error(`the local cloud has no image ${imageName}`)
    const mirror = debianMirror()
    const rootfs = join(this.options.cacheDir, `${imageName}-${imageKey(suite, mirror)}`)
    if (existsSync(rootfs)) return rootfs
    await makeDirectories(this.options.cacheDir, 0o755)
    const lock = `${rootfs}.lock`
    await this.acquire(lock)
    try {
      // Another stub may have finished it while this one waited.
      if (existsSync(rootfs)) return rootfs
      await this.debootstrap(suite, mirror, rootfs)
      return rootfs
    } catch (error) {
      throw new FleetkitError(
        'PROVIDER_STUB_IMAGE_BUILD_FAILED',
        `the local cloud could not build its ${imageName} image from ${mirror}: ${(error as Error).message}`,
        { actions: ['fleetkit provider stub --boot   (again: a build restarts from nothing)'], cause: error },
      )
    } finally {
      rmSync(lock, { force: true })
    }
  }

  private async debootstrap(suite: string, mirror: string, rootfs: string): Promise<void> {
    const log = this.options.log ?? (() => undefined)
    const partial = `${rootfs}.partial-${process.pid}`
    // What a killed build left (this one holds the lock now).
    const prefix = `${basename(rootfs)}.partial-`
    for (const old of await readdir(this.options.cacheDir)) {
      if (old.startsWith(prefix)) await removeTree(join(this.options.cacheDir, old))
    }
    await mkdir(partial)
    try {
      log(`local cloud: building the ${suite} image with debootstrap from ${mirror} (minutes, once)`)
      const debs = join(this.options.cacheDir, `debs-${suite}`)
      await makeDirectories(debs)
      const args = ['--variant=minbase', `--cache-dir=${debs}`, `--include=${IMAGE_PACKAGES.join(',')}`]
      // debootstrap prints a line per package and stage: each stage once, then every 50th package.
      const seen = new Map<string, number>()
      const onLine = (line: string) => {
        const stage = /^[IWE]: (\S+)/.exec(line)?.[1]
        if (!stage) return
        const n = (seen.get(stage) ?? 0) + 1
        seen.set(stage, n)
        if (n === 1 || n % 50 === 0 || !line.startsWith('I:')) log(`local cloud: debootstrap ${line}`)
      }
      await runStreaming('debootstrap', [...args, suite, partial, mirror], onLine, this.options.signal)
      for (const [path, content] of Object.entries(IMAGE_DROPINS)) {
        await makeDirectories(dirname(join(partial, path)))
        await writeFile(join(partial, path), content, { mode: 0o644 })
        await chmod(join(partial, path), 0o644)
      }
      await this.makeStock(partial)
      await rename(partial, rootfs)
      log(`local cloud: the ${suite} image is ready: ${rootfs}`)
    } finally {
      await removeTree(partial)
    }
  }

  /** What a stock cloud image is: no identity of its own, no host keys, no background apt, root's password locked. */
  private async makeStock(root: string): Promise<void> {
    await writeFile(join(root, 'etc/machine-id'), '')
    await rm(join(root, 'var/lib/dbus/machine-id'), { force: true })
    for (const file of await readdir(join(root, 'etc/ssh'))) {
      if (file.startsWith('ssh_host_')) await rm(join(root, 'etc/ssh', file))
    }
    for (const unit of ['apt-daily.timer', 'apt-daily-upgrade.timer', 'e2scrub_all.timer', 'e2scrub_reap.service']) {
      const link = join(root, 'etc/systemd/system', unit)
      await rm(link, { force: true })
      await symlink('/dev/null', link)
    }
    await runOk('chroot', [root, 'passwd', '-l', 'root'])
    await writeFile(join(root, 'etc/hostname'), 'localhost\n')
    await writeFile(join(root, 'etc/fstab'), '')
    for (const file of await readdir(join(root, 'var/cache/apt/archives'))) {
      if (file.endsWith('.deb')) await rm(join(root, 'var/cache/apt/archives', file))
    }
  }

  /** Takes LOCK (a file holding the owner's PID), waiting while a live process holds it. */
  private async acquire(lock: string): Promise<void> {
    let told = false
    for (;;) {
      try {
        const fd = openSync(lock, 'wx')
        writeSync(fd, `${process.pid}\n`)
        closeSync(fd)
        return
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      }
      const holder = Number.parseInt(readFileSync(lock, 'utf8'), 10)
      if (Number.isNaN(holder) || !alive(holder)) {
        rmSync(lock, { force: true })
        continue
      }
      if (!told) this.options.log?.(`local cloud: waiting for process ${holder}, which builds this image`)
      told = true
      await new Promise((resolve) => setTimeout(resolve, this.options.pollMs ?? 2000))
    }
  }
}

/**
 * Removes a (partial) image tree. debootstrap mounts /proc and /sys in it, and binds /dev where it cannot
 * make device nodes: a build killed mid-way leaves them mounted, and a plain recursive delete would walk
 * into them (this machine's /dev). Unmount what is under it first, then delete on its own filesystem only.
 */
async function removeTree(path: string): Promise<void> {
  if (!existsSync(path)) return
  const mounts = readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[1]?.replace(/\\040/g, ' '))
    .filter((point): point is string => point !== undefined && point.startsWith(`${path}/`))
    .sort((a, b) => b.length - a.length)
  for (const point of mounts) await run('umount', ['--lazy', point])
  await runOk('rm', ['-rf', '--one-file-system', path])
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
