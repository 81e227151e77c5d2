import assert from 'node:assert/strict'

import { findSecrets, secretErrors } from '../../../src/definition/rules/secrets.js'
import { detectSecret, scanTextForSecrets } from '../../../src/definition/secret-patterns.js'
import { validateDefinitionText } from '../../../src/definition/validate-text.js'
import { fixtureText, validDefinition } from '../../support/definition-fixture.js'

// Fake secrets built at run time, shaped like the real thing.
const FAKE = {
  pem: ['-----BEGIN RSA PRIVATE KEY-----', 'MIIEowIBAAKCAQEAfakefakefake', '-----END RSA PRIVATE KEY-----'].join('\n'),
  ec: '-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIfake\n-----END EC PRIVATE KEY-----',
  openssh: '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU=\n-----END OPENSSH PRIVATE KEY-----',
  github: 'ghp_' + 'a1B2c3D4e5'.repeat(4),
  githubOauth: 'gho_' + 'Z9y8X7w6V5'.repeat(4),
  hetzner: 'hZ' + '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'.slice(0, 62),
  aws: 'AKIA' + 'ABCDEFGHIJKLMNOP',
  jwt: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJmbGVldGtpdCJ9.c2lnbmF0dXJlLWZha2U',
  slack: 'xoxb-' + '1234567890-abcdefghij',
  url: 'postgres://fleetkit:hunter2secret@db.internal:5432/fleetkit',
  env: 'LOG_LEVEL=debug\nREGION=fsn1\n',
  envSecret: 'HETZNER_API_TOKEN=abc123',
}

describe('rule: no secrets in the definition (DEFINITION_SECRET_FOUND)', () => {
  it('recognises each kind', () => {
    assert.equal(detectSecret(FAKE.pem), 'pem-private-key')
    assert.equal(detectSecret(FAKE.ec), 'pem-private-key')
    assert.equal(detectSecret(FAKE.openssh), 'openssh-private-key')
    assert.equal(detectSecret('b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ'), 'openssh-private-key')
    assert.equal(detectSecret(FAKE.github), 'github-token')
    assert.equal(detectSecret(FAKE.githubOauth), 'github-token')
    assert.equal(FAKE.hetzner.length, 64)
    assert.equal(detectSecret(FAKE.hetzner), 'hetzner-token')
    assert.equal(detectSecret(FAKE.aws), 'aws-access-key')
    assert.equal(detectSecret(FAKE.jwt), 'jwt')
    assert.equal(detectSecret(FAKE.slack), 'slack-token')
    assert.equal(detectSecret(FAKE.url), 'url-credentials')
    assert.equal(detectSecret(FAKE.env), 'env-payload')
    assert.equal(detectSecret(FAKE.envSecret), 'env-payload')
  })

  it('does not take public keys, the release key, names, URLs or versions for secrets', () => {
    const d = validDefinition()
    const rsa =
      'ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC' +
      'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ01'.repeat(4) +
      ' ops'
    d.operators.sshKeys.push(rsa)
    for (const value of [
      d.release.publicKey,
      d.nodes[0]!.hostKey!,
      rsa,
      'https://releases.fleet.internal/agent',
      'HETZNER_API_TOKEN',
      '1.2.3',
      'ubuntu-24.04',
      'LOG_LEVEL=debug',
    ]) {
      assert.equal(detectSecret(value), undefined, value)
    }
    assert.deepEqual(findSecrets(d), [])
  })

  it('finds secrets in any value or key, by path, and reports only path and kind', () => {
    const data = {
      release: { caFile: FAKE.pem },
      pools: { build: { image: FAKE.github } },
      nodes: [{ id: 'a', notes: [FAKE.aws] }],
      [FAKE.slack]: 1,
    }
    const findings = findSecrets(data)
    assert.deepEqual(
      findings.map((f) => [f.path, f.kind]),
      [
        ['/[redacted]', 'slack-token'],
        ['/nodes/0/notes/0', 'aws-access-key'],
        ['/pools/build/image', 'github-token'],
        ['/release/caFile', 'pem-private-key'],
      ],
    )
    const out = JSON.stringify(secretErrors(findings))
    for (const secret of [FAKE.pem, FAKE.github, FAKE.aws, FAKE.slack, 'MIIEowIBAAKCAQEA'])
      assert.ok(!out.includes(secret))
    assert.ok(
      secretErrors(findings).every((e) => e.code === 'DEFINITION_SECRET_FOUND' && e.check === 'definition:semantics'),
    )
  })

  it('never shows the secret in schema errors about the same value or key', () => {
    const text = fixtureText('valid.yaml')
      .replace('  version: 1.2.3', `  version: ${FAKE.jwt}`)
      .replace('fleet: fixture', `fleet: fixture\n${FAKE.slack}: oops`)
    const out = JSON.stringify(validateDefinitionText(text, 'x.yaml').errors)
    assert.match(out, /DEFINITION_SECRET_FOUND/)
    assert.match(out, /DEFINITION_FIELD_UNKNOWN/)
    assert.ok(!out.includes(FAKE.jwt) && !out.includes(FAKE.slack), out)
  })

  it('finds credentials in a URL with any scheme, and none where a part is missing', () => {
    for (const url of ['postgresql+asyncpg://u:p@h/db', 'see HTTPS://user:pw@host', 'redis://a:x@h'])
      assert.equal(detectSecret(url), 'url-credentials', url)
    for (const url of ['https://user@host/x', 'https://host/u:p@x', '://u:p@h', '1x://u:p@h'])
      assert.notEqual(detectSecret(url), 'url-credentials', url)
  })

  // The URL detector scanned from every word start to the end of the text: 'a.' 20,000 times took 2.6 s, so
  // these 100,000 about a minute, in a value and again in each raw line of a file that does not parse.
  // Linear, it is milliseconds; the timeout is generous for a loaded machine.
  it('scans a long value and a long unparsed line in linear time', function () {
    this.timeout(20_000)
    const long = 'a.'.repeat(100_000)
    assert.equal(detectSecret(long), undefined)
    assert.equal(detectSecret(`${long}x://u:p@h`), 'url-credentials')
    assert.deepEqual(scanTextForSecrets(`fleet: x\nbad: [${long}\n`), [])
  })

  it('scans text that does not parse, by line, reporting a key block once', () => {
    const text = `fleet: x\nkey: |\n${FAKE.openssh}\n  bad: [\ntoken: ${FAKE.github}\n`
    assert.deepEqual(scanTextForSecrets(text), [
      { line: 3, kind: 'openssh-private-key' },
      { line: 7, kind: 'github-token' },
    ])
  })
})
