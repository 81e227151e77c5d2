// What the local cloud's Debian images hold and where they come from: the releases it boots (by the API's
// image name), the packages (a stock minbase Debian with systemd, sshd and cloud-init, plus what fleetkit's seeds
// and roles install, since the machines have no route out), the drop-ins, and the mirror this machine's apt
// sources name. The cache key covers all of it: a changed recipe builds a new image.
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

/** The API's image name -> the Debian suite it is built from. */
export const LOCAL_CLOUD_RELEASES: Readonly<Record<string, string>> = {
  'debian-12': 'bookworm',
  'debian-13': 'trixie',
}

/** The same for both releases (DHCP clients differ between them, and the machines have static addresses). */
export const IMAGE_PACKAGES: readonly string[] = [
  'systemd',
  'systemd-sysv',
  'dbus',
  'udev',
  'kmod',
  'openssh-server',
  'python3',
  'python3-apt',
  'python3-cffi-backend', // without it the configure stage fails on python3-cryptography
  'cloud-init',
  'ifupdown',
  'iproute2',
  'netbase',
  'nftables',
  'xfsprogs',
  'sudo',
  'procps',
  'less',
  'acl',
  // What fleetkit's agent seed installs with apt, preinstalled: a machine of the local cloud has no route out.
  'curl',
  'ca-certificates',
  'openssl',
  'zstd',
  'nodejs',
]

/** Files laid over the debootstrapped tree, as Hetzner's images configure cloud-init and root's login. */
export const IMAGE_DROPINS: Readonly<Record<string, string>> = {
  'etc/cloud/cloud.cfg.d/90-fleetkit-local-cloud.cfg': `# fleetkit local cloud: user_data and meta-data come as a NoCloud seed (the stub writes it per machine).
datasource_list: [NoCloud, None]
# Without it cloud-init ends in error (no locales package in a minbase image).
locale: C.UTF-8
manage_etc_hosts: localhost
ssh_genkeytypes: [ed25519, ecdsa]
# As on Hetzner's images: the request's SSH keys go to root, who logs in with keys only. No default user
# (not \`users: []\`, which cloud-init's schema refuses: every boot warned "Invalid cloud-config provided").
system_info:
  default_user: null
disable_root: false
ssh_pwauth: false
`,
  'etc/systemd/journald.conf.d/50-fleetkit-local-cloud.conf': `# A local cloud's machines are disposable: keep the journal in memory.
[Journal]
Storage=volatile
`,
}

/** The mirror this machine's apt sources name for Debian (deb822 or one-line), else deb.debian.org. */
export function debianMirror(sources = readAptSources()): string {
  for (const stanza of sources.split(/\n\s*\n/)) {
    const uri = /^URIs:\s*(\S+)/m.exec(stanza)?.[1]
    const suites = /^Suites:\s*(.+)$/m.exec(stanza)?.[1]?.split(/\s+/) ?? []
    if (uri && suites.some((s) => /^(bookworm|trixie)$/.test(s))) return uri
  }
  const line = /^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(?:bookworm|trixie)\s/m.exec(sources)
  return line?.[1] ?? 'http://deb.debian.org/debian'
}

function readAptSources(): string {
  const dir = '/etc/apt/sources.list.d'
  const files = ['/etc/apt/sources.list']
  if (existsSync(dir))
    files.push(
      ...readdirSync(dir)
        .filter((f) => /\.(list|sources)$/.test(f))
        .map((f) => join(dir, f)),
    )
  return files
    .filter((f) => existsSync(f))
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n\n')
}

/** The cache key of SUITE's image: its packages, drop-ins, mirror and build steps' version. */
export function imageKey(suite: string, mirror: string): string {
  const hash = createHash('sha256')
  hash.update(`v1\nsuite:${suite}\nmirror:${mirror}\npackages:${IMAGE_PACKAGES.join(',')}\n`)
  for (const [path, content] of Object.entries(IMAGE_DROPINS)) hash.update(`${path}\n${content}\n`)
  return hash.digest('hex').slice(0, 16)
}
