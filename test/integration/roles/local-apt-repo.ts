// The distribution's own packages for a test host that has no route out: apt on this machine
// downloads them for the host's release and architecture, resolved against the host's own dpkg
// status (so exactly what it lacks), and the host gets them as its only apt source, a file:
// repository in a folder of its own. A role then installs them through apt as on any host; only the
// mirror is local. Downloads are kept in .cache/test-hosts/apt-<codename>-<arch> for the next run.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { packagePath } from '../../../src/package-root.js'
import type { TestHost } from '../../hosts/index.js'
import { aptMirror } from '../../hosts/rootfs.js'
import { sshArgs } from '../../hosts/ssh.js'
import { runProcess, runProcessOk } from '../../support/process.js'

/** Where the repository lives on the host. */
export const HOST_REPO = '/srv/fleetkit-test-apt'

export async function serveDistributionPackages(host: TestHost, packages: string[]): Promise<void> {
  const facts = (await host.sshOk('. /etc/os-release && echo "$VERSION_CODENAME" && dpkg --print-architecture')).stdout
  const [codename, arch] = facts.trim().split('\n') as [string, string]
  const cache = packagePath('.cache', 'test-hosts', `apt-${codename}-${arch}`)
  const archives = join(cache, 'cache', 'archives')
  await mkdir(join(archives, 'partial'), { recursive: true })
  await mkdir(join(cache, 'state', 'lists', 'partial'), { recursive: true })
  const work = await mkdtemp(join(tmpdir(), 'fleetkit-apt-'))
  try {
    await mkdir(join(work, 'empty'))
    await writeFile(
      join(work, 'sources.list'),
      `deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${aptMirror()} ${codename} main\n`,
    )
    await writeFile(join(work, 'status'), (await host.sshOk('cat /var/lib/dpkg/status')).stdout)
    // A private apt: this machine's own configuration, lists, cache and status are never touched.
    const apt = [
      ...['-o', `Dir::State=${join(cache, 'state')}`, '-o', `Dir::State::status=${join(work, 'status')}`],
      ...['-o', `Dir::State::extended_states=${join(work, 'extended_states')}`],
      ...['-o', `Dir::Cache=${join(cache, 'cache')}`, '-o', `Dir::Etc::SourceList=${join(work, 'sources.list')}`],
      ...[
        '-o',
        `Dir::Etc::SourceParts=${join(work, 'empty')}`,
        '-o',
        `Dir::Etc::PreferencesParts=${join(work, 'empty')}`,
      ],
      ...['-o', `APT::Architecture=${arch}`, '-o', 'APT::Architectures::=', '-o', 'Debug::NoLocking=1'],
      ...['-o', 'APT::Sandbox::User=root', '-q'],
    ]
    await runProcessOk('apt-get', [...apt, 'update'], { timeoutMs: 300_000 })
    await runProcessOk(
      'apt-get',
      [...apt, 'install', '-y', '--download-only', '--no-install-recommends', ...packages],
      {
        timeoutMs: 600_000,
      },
    )
    const index = await runProcessOk('dpkg-scanpackages', ['--multiversion', '.', '/dev/null'], { cwd: archives })
    await writeFile(join(archives, 'Packages'), index.stdout)
    const tar = await runProcessOk('tar', ['-C', archives, '-cf', '-', '--exclude=./partial', '--exclude=./lock', '.'])
    const copy = await runProcess('ssh', sshArgs(host, `mkdir -p ${HOST_REPO} && tar -C ${HOST_REPO} -xf -`), {
      input: tar.stdoutBytes,
      timeoutMs: 300_000,
    })
    if (copy.code !== 0) throw new Error(`copying the packages to ${host.name} failed: ${copy.stderr}`)
  } finally {
    await rm(work, { recursive: true, force: true })
  }
  // The local folder is the host's only source; its lists say so before any role runs.
  await host.sshOk(
    [
      'rm -f /etc/apt/sources.list /etc/apt/sources.list.d/*',
      `echo 'deb [trusted=yes] file:${HOST_REPO} ./' > /etc/apt/sources.list.d/fleetkit-test.list`,
      'apt-get -q update',
    ].join(' && '),
    { timeoutMs: 300_000 },
  )
}
