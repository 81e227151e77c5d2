import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import {
  absolutePathValue,
  base64Value,
  httpsUrlValue,
  nodeIdValue,
  pemCertificatesValue,
  posixUserValue,
  secretHexValue,
  sshPublicKeyValue,
  sudoRuleValue,
  versionValue,
} from '../../../src/render/values.js'
import { runProcessOk } from '../../support/process.js'

const INJECTIONS = ['$(id)', '`id`', "'", '"', '\n', ';', ' ', '|', '&', '<', '>', '\\', '$HOME', '*', '%']

function refused(fn: () => unknown, field: string, secret?: string): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof FleetkitError)
    assert.equal(error.code, 'SEED_VALUE_INVALID')
    assert.equal((error.data as { field: string }).field, field)
    if (secret !== undefined) {
      assert.ok(!error.message.includes(secret), 'the refused value is not echoed')
      assert.ok(!JSON.stringify(error.data).includes(secret))
    }
    return true
  })
}

let certPem = ''
let keyPem = ''
before(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fleetkit-values-'))
  try {
    await runProcessOk('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-subj',
      '/CN=t',
      '-days',
      '1',
      '-keyout',
      join(dir, 'k.pem'),
      '-out',
      join(dir, 'c.pem'),
    ])
    certPem = readFileSync(join(dir, 'c.pem'), 'utf8')
    keyPem = readFileSync(join(dir, 'k.pem'), 'utf8')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

describe('render values', () => {
  it('accepts node ids and UUIDs, refuses anything else', () => {
    assert.equal(nodeIdValue('id', 'build-1'), 'build-1')
    assert.equal(nodeIdValue('id', '7c9e6679-7425-40de-944b-e07fc1f90ae7'), '7c9e6679-7425-40de-944b-e07fc1f90ae7')
    for (const bad of ['Build-1', '1build', '', 'a'.repeat(64), ...INJECTIONS.map((i) => `node${i}1`)])
      refused(() => nodeIdValue('id', bad), 'id')
    refused(() => nodeIdValue('id', 42), 'id')
  })

  it('accepts a 64-hex secret and never echoes a refused one', () => {
    const secret = 'ab'.repeat(32)
    assert.equal(secretHexValue('secret', secret), secret)
    for (const bad of [
      secret.toUpperCase(),
      secret.slice(2),
      `${secret}00`,
      `${secret.slice(0, 62)}$(`,
      `${secret.slice(0, 63)}\n`,
    ]) {
      refused(() => secretHexValue('secret', bad), 'secret', bad)
    }
  })

  it('accepts plain https URLs', () => {
    for (const ok of [
      'https://gateway.example.net:8443',
      'https://releases.example.net/fleetkit-agent',
      'https://127.0.0.1:8444/',
      'https://a.b/c_d~e/f.g',
    ]) {
      assert.equal(httpsUrlValue('url', ok), ok)
    }
  })

  it('refuses URLs with shell metacharacters, spaces, quotes, newlines, credentials, queries or other schemes', () => {
    const bad = [
      'http://gateway.example.net',
      'ftp://x.example',
      'https://',
      'https://user:pw@x.example',
      'https://x.example/?a=b',
      'https://x.example/#f',
      'https://x.example:99999',
      'https://x.example/../etc',
      'https://x.example/a b',
      'https://x.example/$(reboot)',
      'https://x.example/`id`',
      "https://x.example/'",
      'https://x.example/"',
      'https://x.example/\nrm -rf /',
      'https://x.example/;reboot',
      'https://x.example/%0a',
      ...INJECTIONS.map((i) => `https://x.example/a${i}b`),
      ...INJECTIONS.map((i) => `https://x${i}.example`),
    ]
    for (const url of bad) refused(() => httpsUrlValue('gateway.url', url), 'gateway.url')
  })

  it('accepts release versions and refuses injections and spaces', () => {
    for (const ok of ['0.1.0', '1.22.333', '1.0.0-rc.1', '2.0.0-beta-2']) assert.equal(versionValue('v', ok), ok)
    for (const bad of [
      '1.0',
      'v1.0.0',
      '1.0.0+build',
      '1.0.0 ',
      ' 1.0.0',
      '1.0.0-',
      ...INJECTIONS.map((i) => `1.0.0-a${i}`),
    ])
      refused(() => versionValue('v', bad), 'v')
  })

  it('checks base64 and its decoded length', () => {
    const key = Buffer.alloc(32, 7).toString('base64')
    assert.equal(base64Value('k', key, 32), key)
    assert.equal(base64Value('k', 'YWJj'), 'YWJj')
    for (const bad of ['', 'YWJ', 'YW=j', 'YWJj\n', '$(id)', Buffer.alloc(31).toString('base64')])
      refused(() => base64Value('k', bad, 32), 'k')
  })

  it('accepts PEM certificates only, never a private key or other text', () => {
    assert.equal(pemCertificatesValue('ca', certPem), certPem)
    assert.equal(pemCertificatesValue('ca', certPem + certPem), certPem + certPem)
    assert.equal(pemCertificatesValue('ca', certPem.replace(/\n/g, '\r\n')), certPem)
    refused(() => pemCertificatesValue('ca', keyPem), 'ca', keyPem)
    refused(() => pemCertificatesValue('ca', certPem + keyPem), 'ca')
    refused(() => pemCertificatesValue('ca', `${certPem}$(reboot)\n`), 'ca')
    refused(() => pemCertificatesValue('ca', `# comment\n${certPem}`), 'ca')
    refused(
      () => pemCertificatesValue('ca', certPem.replace(/[A-Za-z]{8}\n/, 'AAAAAAAA\n').replace('MII', 'XXX')),
      'ca',
    )
    refused(() => pemCertificatesValue('ca', ''), 'ca')
  })

  it('checks user names, paths, SSH keys and sudo rules', () => {
    assert.equal(posixUserValue('user', 'fleetkit'), 'fleetkit')
    refused(() => posixUserValue('user', 'root'), 'user')
    assert.equal(posixUserValue('user', 'root', { allowRoot: true }), 'root')
    for (const bad of ['Ops', '1ops', 'a b', 'ops;id', 'ops$(id)']) refused(() => posixUserValue('user', bad), 'user')
    assert.equal(absolutePathValue('p', '/srv/fleetkit'), '/srv/fleetkit')
    for (const bad of ['srv', '/srv/../etc', '/srv fleetkit', '/srv/$(id)', '/srv/`id`', '/srv;x'])
      refused(() => absolutePathValue('p', bad), 'p')
    const key = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPdRl3VEfS8Ir661qc0rFEACHmzWcHU6RE3gIZhMM3sS alice@example.net'
    assert.equal(sshPublicKeyValue('k', key), key)
    refused(() => sshPublicKeyValue('k', key.replace('ssh-ed25519', 'ssh-rsa')), 'k')
    refused(() => sshPublicKeyValue('k', `${key}\nssh-ed25519 AAAA`), 'k')
    refused(() => sshPublicKeyValue('k', `${key} $(id)`), 'k')
    refused(() => sshPublicKeyValue('k', `command="id" ${key}`), 'k')
    assert.equal(sudoRuleValue('s', 'ALL=(ALL) NOPASSWD:ALL'), 'ALL=(ALL) NOPASSWD:ALL')
    assert.equal(sudoRuleValue('s', 'ALL=(ALL:ALL) ALL'), 'ALL=(ALL:ALL) ALL')
    for (const bad of [
      'ALL=(ALL) NOPASSWD:ALL\nops ALL=(ALL) ALL',
      'ALL=(root) /bin/sh',
      'ALL=(ALL) NOPASSWD: ALL, !/bin/su',
    ])
      refused(() => sudoRuleValue('s', bad), 's')
  })
})
