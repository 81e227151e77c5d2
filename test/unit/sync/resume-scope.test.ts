import assert from 'node:assert/strict'

import { storedScope } from '../../../src/sync/resume-scope.js'

describe('sync: the --limit and --tags a resumed run reuses', () => {
  it('reads them from the plan stored with the run', () => {
    assert.deepEqual(storedScope({ limit: ['b-1', 'a-1'], tags: ['firewall'], limited: true }), {
      limit: ['a-1', 'b-1'],
      tags: ['firewall'],
    })
    assert.deepEqual(storedScope({ limit: null, tags: [], limited: false }), { limit: undefined, tags: [] })
  })

  it('a run stored before plans kept the --limit: its targets and skipped nodes are what --limit selected', () => {
    const plan = { limited: true, tags: [], targets: ['build-2'], skipped: [{ id: 'build-1', reason: 'parked' }] }
    assert.deepEqual(storedScope(plan), { limit: ['build-1', 'build-2'], tags: [] })
    assert.deepEqual(storedScope({ limited: false, tags: ['sshd'], targets: ['x'] }), {
      limit: undefined,
      tags: ['sshd'],
    })
  })
})
