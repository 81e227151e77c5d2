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

/** The Debian releases a test host can run: 12 (bookworm, the default and the VM's) and 13 (trixie). */
export type HostRelease = 'bookworm' | 'trixie'
export const HOST_RELEASES: readonly HostRelease[] = ['bookworm', 'trixie']

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

/**
 * The package list of RELEASE: the same list, except that Debian 13 deprecates ISC's DHCP client
 * (ifupdown there uses dhcpcd-base; container hosts get static addresses anyway), and has no kernel:
 * only container hosts run it (the VM boots bookworm), and a kernel with its initramfs is the
 * slowest part of a cold build (CI builds every image from nothing).
 */
export function imagePackages(release: HostRelease = 'bookworm'): readonly string[] {
  if (release === 'bookworm') return IMAGE_PACKAGES
  return IMAGE_PACKAGES.filter((p) => p !== 'linux-image-amd64').map((p) =>
    p === 'isc-dhcp-client' ? 'dhcpcd-base' : p,
  )
}

export interface GoldenImage {
  /** The rootfs directory (read-only for everyone: hosts mount it as an overlay's lower layer). */
  rootfs: string
  /** The VM kernel and initrd inside it (bookworm's; a release without linux-image-amd64 has none). */
  kernel?: string
  initrd?: string
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

/** The cache key: a changed release, package list, drop-in or build script builds a new rootfs. */
export function recipeKey(mirror: string, release: HostRelease = 'bookworm'): string {
  const hash = createHash('sha256')
  hash.update(`packages:${imagePackages(release).join(',')}\nmirror:${mirror}\n`)
  // The default release adds nothing, so its key depends on the same words as before there was a choice.
  if (release !== 'bookworm') hash.update(`release:${release}\n`)
  hash.update(readFileSync(buildScript))
  for (const file of filesUnder(dropinsDir)) {
    hash.update(`\n${relative(dropinsDir, file)}\n`)
    hash.update(readFileSync(file))
  }
  return hash.digest('hex').slice(0, 16)
}

function imageFor(rootfs: string, key: string, release: HostRelease): GoldenImage {
  if (!imagePackages(release).includes('linux-image-amd64')) return { rootfs, key }
  const boot = join(rootfs, 'boot')
  const kernel = readdirSync(boot).find((f) => /^vmlinuz-[\w.+-]+$/.test(f))
  // The initrd of that very kernel (initramfs-tools leaves .dpkg-bak copies beside it).
  const initrd = kernel && readdirSync(boot).find((f) => f === `initrd.img-${kernel.slice('vmlinuz-'.length)}`)
  if (!kernel || !initrd)
    throw new Error(`test hosts: the rootfs ${rootfs} has no kernel or initrd under /boot; remove it to rebuild`)
  return { rootfs, kernel: join(boot, kernel), initrd: join(boot, initrd), key }
}

const building = new Map<HostRelease, Promise<GoldenImage>>()

/**
 * The golden rootfs of RELEASE, built on first use (4 to 19 minutes, progress on stderr) and reused
 * after. Concurrent test processes wait for one build (flock); a half-built directory is never used.
 * Each release has its own directory, lock and package cache: a trixie build never holds up a
 * process that only needs bookworm.
 */
export function goldenImage(release: HostRelease = 'bookworm'): Promise<GoldenImage> {
  let pending = building.get(release)
  if (pending) return pending
  pending = (async () => {
    const mirror = aptMirror()
    const key = recipeKey(mirror, release)
    const suffix = release === 'bookworm' ? '' : `-${release}`
    const rootfs = join(cacheDir, `rootfs${suffix}-${key}`)
    if (!existsSync(rootfs)) {
      await mkdir(cacheDir, { recursive: true })
      await streamHostCommand(
        'flock',
        [
          join(cacheDir, `build${suffix}.lock`),
          'bash',
          buildScript,
          rootfs,
          mirror,
          imagePackages(release).join(','),
          dropinsDir,
          join(cacheDir, `debs${suffix}`),
          release,
        ],
        { timeoutMs: 30 * 60_000 },
      )
    }
    return imageFor(rootfs, key, release)
  })()
  building.set(release, pending)
  pending.catch(() => building.delete(release))
  return pending
}

let baseBuilding: Promise<string> | undefined

/** The VM base disk: the bookworm rootfs as an ext4 image labelled fbroot (built once per recipe, about 10 s). */
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
