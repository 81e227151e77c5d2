// Builds the golden rootfs of each release and the VM base disk ahead of the host suites, so `scripts/test` can
// run it in the background while the main suites run (the build is mostly downloads and dpkg).
// `prebuild.ts vm` builds what the VM suite needs (the bookworm rootfs and the VM base disk), `prebuild.ts trixie`
// the Debian 13 rootfs the container suites also boot; no argument builds all three. The suites wait for the same
// build under its flock; without root or packages this does nothing and the suites report what is missing.
import { missingForHosts } from './requirements.js'
import { goldenImage, vmBaseImage } from './rootfs.js'

const part = process.argv[2] ?? 'all'
const missing = missingForHosts()
if (!['vm', 'trixie', 'all'].includes(part)) {
  process.stderr.write(`test hosts: prebuild takes vm, trixie or nothing, not ${part}\n`)
  process.exitCode = 2
} else if (missing.length > 0) {
  process.stderr.write(`test hosts: no prebuild (${missing.join(', ')})\n`)
} else {
  const started = Date.now()
  if (part !== 'trixie') {
    await goldenImage()
    await vmBaseImage()
  }
  if (part !== 'vm') await goldenImage('trixie')
  const built = {
    vm: 'golden bookworm rootfs and VM base disk',
    trixie: 'golden trixie rootfs',
    all: 'golden rootfs (bookworm, trixie) and VM base disk',
  }[part]
  process.stderr.write(`test hosts: ${built} ready after ${Math.round((Date.now() - started) / 1000)} s\n`)
}
