// The golden root filesystem every test host boots: built once per recipe (package list, drop-ins,
// build script) with debootstrap under .cache/test-hosts/, shared by every test process.
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

import { runHostCommandOk, streamHostCommand } from './exec.js'

const here = fileURLToPath(new URL('.', import.meta.url))
const imageDir = join(here, 'image')
const buildScript = join(imageDir, 'build-rootfs.sh')
const dropinsDir = join(imageDir, 'dropins')
/** The repository's .cache (a symlink to the main checkout's in worktrees: one build for all). */
export const cacheDir = join(here, '..', '..', '.cache', 'test-hosts')

/**
 * What the image holds. systemd/udev/kmod/dbus: a real boot; linux-image + initramfs: the VM kernel;
 * cloud-init + ifupdown + isc-dhcp-client: the NoCloud first boot; the rest is what roles and the
 * agent need offline (the hosts have no route out): curl, ca-certificates, openssl, zstd, nodejs
 * (the agent; Debian 12's is 18.x), python3-apt (Ansible's apt module), acl (become to other users).
 * python3-cffi-backend: without it the configure stage fails on python3-cryptography.
 */
export const IMAGE_PACKAGES: readonly string[] = [
  'systemd',
  'systemd-sysv',
  'dbus',
  'udev',
  'kmod',
  'openssh-server',
  'python3',
  'python3-apt',
  'nftables',
  'iproute2',
  'linux-image-amd64',
  'cloud-init',
  'xfsprogs',
  'ifupdown',
  'isc-dhcp-client',
  'sudo',
  'netbase',
  'procps',
  'python3-cffi-backend',
  'curl',
  'ca-certificates',
  'openssl',
  'zstd',
  'nodejs',
  'acl',
  'less',
]

export interface GoldenImage {
  /** The rootfs directory (read-only for everyone: hosts mount it as an overlay's lower layer). */
  rootfs: string
  /** The VM kernel and initrd inside it. */
  kernel: string
  initrd: string
  /** The recipe hash the cache is keyed by. */
  key: string
}

/** The mirror this machine's apt sources name for the distribution (not -security or third-party lists). */
export function aptMirror(sources = readAptSources()): string {
  // deb822 stanzas ("URIs:" + "Suites: bookworm ..."), then one-line "deb URL bookworm main".
  for (const stanza of sources.split(/\n\s*\n/)) {
    const uri = /^URIs:\s*(\S+)/m.exec(stanza)?.[1]
    const suites = /^Suites:\s*(.+)$/m.exec(stanza)?.[1]?.split(/\s+/) ?? []
    if (uri && suites.includes('bookworm')) return uri
  }
  const line = /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+bookworm\s/m.exec(sources)
  if (line?.[1]) return line[1]
  return 'http://deb.debian.org/debian'
}

function readAptSources(): string {
  const files = ['/etc/apt/sources.list']
  if (existsSync('/etc/apt/sources.list.d')) {
    files.push(
      ...readdirSync('/etc/apt/sources.list.d')
        .filter((f) => /\.(list|sources)$/.test(f))
        .map((f) => join('/etc/apt/sources.list.d', f)),
    )
  }
  return files
    .filter((f) => existsSync(f))
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n\n')
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const path = join(dir, entry.name)
      return entry.isDirectory() ? filesUnder(path) : [path]
    })
    .sort()
}

/** The cache key: a changed package list, drop-in or build script builds a new rootfs. */
export function recipeKey(mirror: string): string {
  const hash = createHash('sha256')
  hash.update(`packages:${IMAGE_PACKAGES.join(',')}\nmirror:${mirror}\n`)
  hash.update(readFileSync(buildScript))
  for (const file of filesUnder(dropinsDir)) {
    hash.update(`\n${relative(dropinsDir, file)}\n`)
    hash.update(readFileSync(file))
  }
  return hash.digest('hex').slice(0, 16)
}

function imageFor(rootfs: string, key: string): GoldenImage {
  const boot = join(rootfs, 'boot')
  const kernel = readdirSync(boot).find((f) => /^vmlinuz-[\w.+-]+$/.test(f))
  // The initrd of that very kernel (initramfs-tools leaves .dpkg-bak copies beside it).
  const initrd = kernel && readdirSync(boot).find((f) => f === `initrd.img-${kernel.slice('vmlinuz-'.length)}`)
  if (!kernel || !initrd)
    throw new Error(`test hosts: the rootfs ${rootfs} has no kernel or initrd under /boot; remove it to rebuild`)
  return { rootfs, kernel: join(boot, kernel), initrd: join(boot, initrd), key }
}

let building: Promise<GoldenImage> | undefined

/**
 * The golden rootfs, built on first use (about 5 minutes, progress on stderr) and reused after.
 * Concurrent test processes wait for one build (flock); a half-built directory is never used.
 */
export function goldenImage(): Promise<GoldenImage> {
  building ??= (async () => {
    const mirror = aptMirror()
    const key = recipeKey(mirror)
    const rootfs = join(cacheDir, `rootfs-${key}`)
    if (!existsSync(rootfs)) {
      await mkdir(cacheDir, { recursive: true })
      await streamHostCommand(
        'flock',
        [
          join(cacheDir, 'build.lock'),
          'bash',
          buildScript,
          rootfs,
          mirror,
          IMAGE_PACKAGES.join(','),
          dropinsDir,
          join(cacheDir, 'debs'),
        ],
        { timeoutMs: 30 * 60_000 },
      )
    }
    return imageFor(rootfs, key)
  })()
  building.catch(() => {
    building = undefined
  })
  return building
}

let baseBuilding: Promise<string> | undefined

/** The VM base disk: the rootfs as an ext4 image labelled fbroot (built once per recipe, about 10 s). */
export function vmBaseImage(): Promise<string> {
  baseBuilding ??= (async () => {
    const image = await goldenImage()
    const base = join(cacheDir, `base-${image.key}.raw`)
    if (!existsSync(base) || statSync(base).size === 0) {
      process.stderr.write('test hosts: making the VM base disk from the rootfs\n')
      const partial = `${base}.partial-${process.pid}`
      // mkfs.ext4 -d copies the tree with owners and modes; the rename under the lock publishes it whole.
      await runHostCommandOk(
        'flock',
        [
          join(cacheDir, 'build.lock'),
          'bash',
          '-c',
          'set -e; [ -s "$3" ] && exit 0; rm -f "$2"; mkfs.ext4 -q -L fbroot -d "$1" "$2" 4G; mv "$2" "$3"',
          'mkfs',
          image.rootfs,
          partial,
          base,
        ],
        { timeoutMs: 10 * 60_000 },
      )
    }
    return base
  })()
  baseBuilding.catch(() => {
    baseBuilding = undefined
  })
  return baseBuilding
}
