// Builds the golden rootfs of each release and the VM base disk ahead of the host suites, so `scripts/test` can
// run it in the background while the main suites run (the build is mostly downloads and dpkg).
// The suites wait for the same build under its flock; without root or packages this does nothing
// and the suites report what is missing.
import { missingForHosts } from './requirements.js'
import { goldenImage, vmBaseImage } from './rootfs.js'

const missing = missingForHosts()
if (missing.length > 0) {
  process.stderr.write(`test hosts: no prebuild (${missing.join(', ')})\n`)
} else {
  const started = Date.now()
  await goldenImage()
  await vmBaseImage()
  // Debian 13 after the VM's disk: the suites that boot trixie hosts run last.
  await goldenImage('trixie')
  process.stderr.write(
    `test hosts: golden rootfs (bookworm, trixie) and VM base disk ready after ${Math.round((Date.now() - started) / 1000)} s\n`,
  )
}
