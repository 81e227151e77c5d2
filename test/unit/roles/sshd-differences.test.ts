// The sshd role's comparison (filter_plugins/sshd_effective.py) run by Python itself: what `sshd -T`
// prints against the role's expected settings, as the sentences apply.yml refuses with and as the
// structured settings check mode reports ({setting, current, wanted}, sshd_config's spelling).
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'

import { packagePath } from '../../../src/package-root.js'

const run = promisify(execFile)

const EXPECTED = {
  port: ['2222'],
  passwordauthentication: 'no',
  kbdinteractiveauthentication: 'no',
  pubkeyauthentication: 'yes',
  permitrootlogin: 'no',
}

async function compare(sshdT: string): Promise<{ sentences: string[]; settings: Record<string, unknown>[] }> {
  const script = `
import json, sys
sys.path.insert(0, sys.argv[1])
from sshd_effective import FilterModule
f = FilterModule().filters()
text, expected = sys.argv[2], json.loads(sys.argv[3])
print(json.dumps({'sentences': f['fleetkit_sshd_differences'](text, expected),
                  'settings': f['fleetkit_sshd_setting_differences'](text, expected)}))
`
  const dir = packagePath('ansible', 'roles', 'sshd', 'filter_plugins')
  const { stdout } = await run('python3', ['-c', script, dir, sshdT, JSON.stringify(EXPECTED)])
  return JSON.parse(stdout) as { sentences: string[]; settings: Record<string, unknown>[] }
}

describe('roles: sshd compares sshd -T with the policy', () => {
  it('finds nothing when sshd runs with the policy', async () => {
    const same = await compare(
      'port 2222\npubkeyauthentication yes\npasswordauthentication no\nkbdinteractiveauthentication no\npermitrootlogin no\nx11forwarding no\n',
    )
    assert.deepEqual(same, { sentences: [], settings: [] })
  })

  it('names each setting with its value now and the one wanted; an extra listener and an unset value too', async () => {
    const found = await compare(
      'port 22\nport 2222\npubkeyauthentication yes\npasswordauthentication yes\npermitrootlogin without-password\n',
    )
    assert.deepEqual(found.sentences, [
      'sshd listens on port 22, 2222, not 2222',
      'sshd runs with passwordauthentication yes, not no',
      'sshd runs with kbdinteractiveauthentication (unset), not no',
      'sshd runs with permitrootlogin without-password, not no',
    ])
    assert.deepEqual(found.settings, [
      { setting: 'Port', current: '22, 2222', wanted: '2222' },
      { setting: 'PasswordAuthentication', current: 'yes', wanted: 'no' },
      { setting: 'KbdInteractiveAuthentication', current: null, wanted: 'no' },
      { setting: 'PermitRootLogin', current: 'without-password', wanted: 'no' },
    ])
  })
})
