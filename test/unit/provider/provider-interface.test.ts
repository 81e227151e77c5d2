// The Provider interface (src/provider/provider.ts): HetznerClient implements it (the compiler checks
// `implements Provider`), and the code that provisions and retires nodes takes the interface, so no
// module outside src/provider names the client class.
import assert from 'node:assert/strict'

import { packagePath } from '../../../src/package-root.js'
import { HetznerClient } from '../../../src/provider/hetzner.js'
import type { Provider } from '../../../src/provider/provider.js'
import { moduleGraph } from '../../support/import-graph.js'

describe('provider: the Provider interface', () => {
  it('no module outside src/provider imports the Hetzner client class: lifecycle, cli and demo take Provider', () => {
    const graph = moduleGraph(packagePath('src'))
    const importers = [...graph.modules]
      .filter(([module]) => !module.startsWith('provider/'))
      .filter(([, imports]) => imports.some((i) => i.target === 'provider/hetzner.ts'))
      .map(([module]) => module)
    assert.deepEqual(importers, [])
    const users = [...graph.modules]
      .filter(([, imports]) => imports.some((i) => i.target === 'provider/provider.ts'))
      .map(([module]) => module)
    for (const module of [
      'lifecycle/provision/node-provision.ts',
      'lifecycle/provision/provision-create.ts',
      'lifecycle/provision/provision-plan.ts',
      'lifecycle/provision/provision-volume.ts',
      'lifecycle/node/provider-delete.ts',
      'lifecycle/node/volume-release.ts',
    ])
      assert.ok(users.includes(module), `${module} takes the Provider interface`)
  })

  it('a HetznerClient is a Provider', () => {
    const client: Provider = new HetznerClient({ env: { HETZNER_API_TOKEN: 'unused' } })
    assert.equal(typeof client.createServer, 'function')
  })
})
