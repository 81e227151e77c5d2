// The fleetkit_fingerprint module (ansible/playbooks/library) run by real Ansible on this machine:
// a file's digest follows its content and mode, a missing thing is "absent", packages and users
// are read from the system, an unknown kind is named, and the overall digest follows every item.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

import { packagePath } from '../../../src/package-root.js'

const run = promisify(execFile)

/** `pathFirst`: a directory put first on PATH (a fake `tailscale`). */
async function fingerprint(
  resources: { kind: string; name: string }[],
  pathFirst?: string,
): Promise<{ digest: string; items: Record<string, string> }> {
  const path = pathFirst ? `${pathFirst}:${process.env.PATH ?? ''}` : process.env.PATH
  const { stdout } = await run(
    'ansible',
    [
      'localhost',
      '-c',
      'local',
      '-i',
      'localhost,',
      '-M',
      packagePath('ansible', 'playbooks', 'library'),
      '-m',
      'fleetkit_fingerprint',
      '-a',
      JSON.stringify({ resources }),
    ],
    {
      env: {
        ...process.env,
        PATH: path,
        ANSIBLE_LOAD_CALLBACK_PLUGINS: '1',
        ANSIBLE_STDOUT_CALLBACK: 'json',
        ANSIBLE_NOCOLOR: '1',
      },
    },
  )
  const result = JSON.parse(stdout).plays[0].tasks[0].hosts.localhost
  assert.equal(result.changed, false)
  return { digest: result.digest, items: result.items }
}

describe('the fleetkit_fingerprint module', function () {
  this.timeout(60_000)
  let dir: string
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fleetkit-fingerprint-'))
  })
  after(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('digests files by content, mode and owner; reads packages, users and groups; names what is absent or unknown', async () => {
    const file = join(dir, 'agent.env')
    await writeFile(file, 'A=1\n', { mode: 0o644 })
    const resources = [
      { kind: 'path', name: file },
      { kind: 'path', name: dir },
      { kind: 'path', name: join(dir, 'missing') },
      { kind: 'package', name: 'curl' },
      { kind: 'package', name: 'fleetkit-no-such-package' },
      { kind: 'user', name: 'root' },
      { kind: 'group', name: 'fleetkit-no-such-group' },
      { kind: 'sysctl', name: 'kernel.ostype' },
      { kind: 'host', name: 'facts' },
      { kind: 'bogus', name: 'x' },
    ]
    const first = await fingerprint(resources)
    assert.match(first.digest, /^[0-9a-f]{64}$/)
    assert.match(first.items[`path:${file}`]!, /^100000:644:\d+:\d+:[0-9a-f]{64}$/)
    assert.match(first.items[`path:${dir}`]!, /^40000:700:\d+:\d+$/)
    assert.equal(first.items[`path:${join(dir, 'missing')}`], 'absent')
    assert.match(first.items['package:curl']!, /^ii:\S+$/)
    assert.equal(first.items['package:fleetkit-no-such-package'], 'absent')
    assert.equal(first.items['user:root'], '0:0:/root:' + first.items['user:root']!.split(':')[3])
    assert.equal(first.items['group:fleetkit-no-such-group'], 'absent')
    assert.equal(first.items['sysctl:kernel.ostype'], 'Linux')
    assert.match(first.items['host:facts']!, /^[0-9a-f]{64}:\w+:\d+:\d+ MiB:\d+$/)
    assert.equal(first.items['bogus:x'], 'unknown-kind')
    assert.deepEqual(await fingerprint(resources), first, 'reading twice changes nothing')

    await writeFile(file, 'A=2\n')
    const edited = await fingerprint(resources)
    assert.notEqual(edited.items[`path:${file}`], first.items[`path:${file}`])
    assert.notEqual(edited.digest, first.digest)
    await writeFile(file, 'A=1\n')
    await chmod(file, 0o600)
    const chmodded = await fingerprint(resources)
    assert.match(chmodded.items[`path:${file}`]!, /^100000:600:/)
    assert.notEqual(chmodded.digest, first.digest)
  })

  it('the host part keeps still across a reboot (MemTotal moves by kB) and moves with a resize', async () => {
    const program = `
import json, sys
sys.path.insert(0, sys.argv[1])
import fleetkit_fingerprint as f
meminfo = lambda kib: 'MemFree:          123 kB\\nMemTotal:       %d kB\\n' % kib
print(json.dumps([f.host_facts(b'VERSION_ID="24.04"', 'x86_64', 2, meminfo(kib), 25275355136)
                  for kib in json.loads(sys.argv[2])]))
`
    // The probe's VM before and after a reboot (4007108 and 4007116 kB), then 4 GiB more and 8 GiB of a smaller server.
    const { stdout } = await run('python3', [
      '-c',
      program,
      packagePath('ansible', 'playbooks', 'library'),
      JSON.stringify([4007108, 4007116, 4007108 + 4 * 1024 * 1024, 2007108]),
    ])
    const [before, rebooted, grown, shrunk] = JSON.parse(stdout) as string[]
    assert.equal(rebooted, before)
    assert.match(before!, /:x86_64:2:3904 MiB:25275355136$/)
    assert.notEqual(grown, before)
    assert.notEqual(shrunk, before)
  })

  it('reads whether the host is on the tailnet: absent without tailscale, else its backend state', async () => {
    const tailscale = [{ kind: 'tailscale', name: 'backend' }]
    const bin = join(dir, 'bin')
    await run('mkdir', ['-p', bin])
    const fake = (state: string) =>
      writeFile(join(bin, 'tailscale'), `#!/bin/sh\necho '{"BackendState":"${state}","Self":{}}'\n`, { mode: 0o755 })
    // Only this machine's tailscale-less PATH: the reader says absent.
    if (
      !(await run('sh', ['-c', 'command -v tailscale']).then(
        () => true,
        () => false,
      ))
    ) {
      assert.equal((await fingerprint(tailscale)).items['tailscale:backend'], 'absent')
    }
    await fake('Running')
    assert.equal((await fingerprint(tailscale, bin)).items['tailscale:backend'], 'Running')
    await fake('NeedsLogin')
    assert.equal((await fingerprint(tailscale, bin)).items['tailscale:backend'], 'NeedsLogin')
  })
})
