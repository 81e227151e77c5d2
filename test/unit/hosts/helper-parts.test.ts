// The pure parts of the test-host helper: the apt mirror it builds from, the recipe key, the
// PLAY RECAP parser, the missing-dependency message, the seed files and known_hosts lines.
import assert from 'node:assert/strict'

import { parseRecap } from '../../hosts/ansible.js'
import { knownHostsLine } from '../../hosts/keys.js'
import { missingForHosts } from '../../hosts/requirements.js'
import { aptMirror, recipeKey } from '../../hosts/rootfs.js'
import { MINIMAL_USER_DATA, seedFiles } from '../../hosts/seed.js'

describe('test hosts: helper parts', () => {
  it('builds from the mirror the apt sources name for bookworm, not security or third-party lists', () => {
    const deb822 =
      'Types: deb\nURIs: https://deb.nodesource.com/node_20.x\nSuites: nodistro\n\nTypes: deb\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\n\nTypes: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n'
    assert.equal(aptMirror(deb822), 'http://mirror.example/debian')
    assert.equal(aptMirror('deb [arch=amd64] http://old.example/debian bookworm main\n'), 'http://old.example/debian')
    assert.equal(aptMirror(''), 'http://deb.debian.org/debian')
  })

  it('keys the cached rootfs by the recipe (a different mirror is a different image)', () => {
    assert.equal(recipeKey('http://a/debian'), recipeKey('http://a/debian'))
    assert.notEqual(recipeKey('http://a/debian'), recipeKey('http://b/debian'))
    assert.match(recipeKey('http://a/debian'), /^[0-9a-f]{16}$/)
  })

  it('reads the PLAY RECAP per host', () => {
    const out =
      'PLAY [all]\n...\nPLAY RECAP *********\nc1                         : ok=3    changed=1    unreachable=0    failed=0    skipped=2    rescued=0    ignored=0\nc2 : ok=0 changed=0 unreachable=1 failed=0 skipped=0 rescued=0 ignored=0\n'
    assert.deepEqual(parseRecap(out), {
      c1: { ok: 3, changed: 1, unreachable: 0, failed: 0, skipped: 2, rescued: 0, ignored: 0 },
      c2: { ok: 0, changed: 0, unreachable: 1, failed: 0, skipped: 0, rescued: 0, ignored: 0 },
    })
    assert.deepEqual(parseRecap('ERROR! the playbook could not be found'), {})
  })

  it('names root and the packages that are missing, with the command that installs them', () => {
    const problems = missingForHosts(['container', 'vm'], { uid: 1000, path: '/nonexistent' })
    assert.match(problems[0] ?? '', /need root/)
    assert.match(problems[1] ?? '', /missing packages: .*systemd-container.*qemu-system-x86/)
    assert.match(problems[1] ?? '', /scripts\/install-test-deps/)
    assert.doesNotMatch(missingForHosts(['container'], { uid: 1000, path: '/nonexistent' })[1] ?? '', /qemu/)
  })

  it("writes the seed: the test's user-data, meta-data naming the host, vendor-data with the pinned keys (VMs)", () => {
    const plain = seedFiles('h1', undefined)
    assert.equal(plain['user-data'], MINIMAL_USER_DATA)
    assert.match(plain['meta-data'], /instance-id: iid-h1\nlocal-hostname: h1\n/)
    assert.equal(plain['vendor-data'], undefined)
    const vm = seedFiles(
      'h2',
      { userData: '#!/bin/bash\ntrue\n' },
      { hostPrivateKey: 'PRIV\n', hostPublicKey: 'ssh-ed25519 AAA h', operatorPublicKey: 'ssh-ed25519 BBB op' },
    )
    assert.equal(vm['user-data'], '#!/bin/bash\ntrue\n')
    assert.match(vm['vendor-data'] ?? '', /^#cloud-config\n/)
    assert.match(vm['vendor-data'] ?? '', /ed25519_public: ssh-ed25519 AAA h/)
    assert.match(vm['vendor-data'] ?? '', /ssh_authorized_keys:\n {2}- ssh-ed25519 BBB op/)
  })

  it('writes known_hosts lines as OpenSSH looks them up (a non-22 port in brackets)', () => {
    assert.equal(knownHostsLine('10.231.2.2', 22, 'ssh-ed25519 AAAA root@h'), '10.231.2.2 ssh-ed25519 AAAA')
    assert.equal(knownHostsLine('127.0.0.1', 2222, 'ssh-ed25519 AAAA root@h'), '[127.0.0.1]:2222 ssh-ed25519 AAAA')
  })
})
