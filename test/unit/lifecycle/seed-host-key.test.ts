// HOST_KEY_PINNED's next command: --rekey, and a word on fleet.yaml that holds only where fleet.yaml
// pins the key. A node whose key only the state pins (a seed's, a provisioned server's) needs no
// hostKey in fleet.yaml: ssh reads the state's by node id (docs/operations.md, docs/seeds-and-inventory.md).
import assert from 'node:assert/strict'

import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { assertRekeyAllowed } from '../../../src/lifecycle/seed/seed-host-key.js'

const STATE_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOEF82ArN1Ov8GQYCoPMrN5fhe2GPIh9kb1ezRwyEuom'
const DECLARED_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAINpI/ek/CS5H8lkSF96i0HvlXnqBA/lyOqWa7EkXbtSQ'

function refusal(run: () => void): FleetkitError {
  let error: unknown
  assert.throws(run, (e: unknown) => ((error = e), true))
  assert.ok(error instanceof FleetkitError && error.code === 'HOST_KEY_PINNED', String(error))
  return error
}

describe('HOST_KEY_PINNED: the advice', () => {
  it('a key only the state pins (a provisioned node): --rekey, and nothing to copy into fleet.yaml', () => {
    for (const [kind, command] of [
      ['provision', 'fleetkit node provision db-1 --rekey'],
      ['agent', 'fleetkit seed db-1 --kind agent --rekey'],
      ['worker', 'fleetkit seed db-1 --kind worker --rekey'],
    ] as const) {
      const [action] = refusal(() => assertRekeyAllowed('db-1', STATE_KEY, false, kind, undefined, undefined)).actions
      assert.ok(action!.startsWith(`${command}   (`), action)
      assert.match(action!, /pinned in the state: nothing to copy into fleet\.yaml/)
      assert.doesNotMatch(action!, /put the printed hostKey/)
    }
  })

  it('a key fleet.yaml pins: --rekey, then the printed hostKey goes into fleet.yaml', () => {
    const [action] = refusal(() =>
      assertRekeyAllowed(
        'db-1',
        DECLARED_KEY,
        false,
        'agent',
        'fleetkit seed db-1 --kind agent --reissue',
        DECLARED_KEY,
      ),
    ).actions
    assert.ok(action!.startsWith('fleetkit seed db-1 --kind agent --reissue --rekey   ('), action)
    assert.match(action!, /put the printed hostKey into fleet\.yaml/)
  })

  it('no pinned key, or --rekey: no refusal', () => {
    assert.doesNotThrow(() => assertRekeyAllowed('db-1', null, false, 'agent'))
    assert.doesNotThrow(() => assertRekeyAllowed('db-1', STATE_KEY, true, 'agent'))
  })
})
