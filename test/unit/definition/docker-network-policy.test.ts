import assert from 'node:assert/strict'

import { dockerNetworkPolicySound, subnetsNeeded } from '../../../src/definition/rules/docker-network-policy.js'
import type { Definition, DockerNetworkPolicy } from '../../../src/definition/types.js'
import { ruleContext, validDefinition } from '../../support/definition-fixture.js'

// valid.yaml: build base 10.210.0.0/16, /24 networks, 4 runners x 2 + 2 reserve, bridge 10.209.0.1/24.
function withPolicy(change: Partial<DockerNetworkPolicy>, pool = 'build'): Definition {
  const d = validDefinition()
  const current = d.pools[pool]!.dockerNetworkPolicy ?? {
    base: '10.220.0.0/16',
    prefix: 24,
    maxRunners: 1,
    networksPerRunner: 1,
    reserveSubnets: 0,
  }
  d.pools[pool]!.dockerNetworkPolicy = { ...current, ...change }
  return d
}
const codes = (d: Definition) => dockerNetworkPolicySound(ruleContext(d)).map((e) => [e.code, e.path])

describe('rule: docker network policy arithmetic', () => {
  it('accepts the fixture policy and one pool without a policy', () => {
    assert.deepEqual(codes(validDefinition()), [])
  })

  describe('bases and prefixes (DOCKER_NETWORK_POLICY_INVALID)', () => {
    it('refuses a base that is not IPv4, and one with host bits', () => {
      assert.deepEqual(codes(withPolicy({ base: 'fd00::/64' })), [
        ['DOCKER_NETWORK_POLICY_INVALID', '/pools/build/dockerNetworkPolicy/base'],
      ])
      assert.deepEqual(codes(withPolicy({ base: '10.210.0.300/16' })), [
        ['DOCKER_NETWORK_POLICY_INVALID', '/pools/build/dockerNetworkPolicy/base'],
      ])
      const [hostBits] = dockerNetworkPolicySound(ruleContext(withPolicy({ base: '10.210.3.0/16' })))
      assert.equal(hostBits!.expected, '10.210.0.0/16')
    })
    it('refuses a prefix broader than the base, and one longer than /29', () => {
      assert.deepEqual(codes(withPolicy({ prefix: 15 })), [
        ['DOCKER_NETWORK_POLICY_INVALID', '/pools/build/dockerNetworkPolicy/prefix'],
      ])
      assert.deepEqual(codes(withPolicy({ prefix: 30 })), [
        ['DOCKER_NETWORK_POLICY_INVALID', '/pools/build/dockerNetworkPolicy/prefix'],
      ])
    })
    it('accepts the prefix equal to the base (if the count allows) and /29', () => {
      assert.deepEqual(
        codes(
          withPolicy({
            base: '10.210.0.0/29',
            prefix: 29,
            maxRunners: 0 as number,
            networksPerRunner: 1,
            reserveSubnets: 0,
          }),
        ),
        [],
      )
      assert.deepEqual(codes(withPolicy({ prefix: 29 })), [])
    })
    it('refuses more than 64 pools with a policy', () => {
      const d = validDefinition()
      delete d.pools.build!.dockerNetworkPolicy!.defaultBridgeCidr
      for (let i = 0; i < 65; i++) {
        d.pools[`p${i}`] = {
          role: 'build',
          capacityBudget: { cpu: 1, memoryMiB: 1, diskGiB: 1 },
          dockerNetworkPolicy: {
            base: `10.${100 + i}.0.0/16`,
            prefix: 24,
            maxRunners: 1,
            networksPerRunner: 1,
            reserveSubnets: 0,
          },
        }
      }
      delete d.pools.build
      assert.deepEqual(codes(d), [['DOCKER_NETWORK_POLICY_INVALID', '/pools']])
      delete d.pools.p64
      assert.deepEqual(codes(d), [])
    })
  })

  describe('subnet count (DOCKER_NETWORK_POLICY_TOO_SMALL)', () => {
    it('needs maxRunners * networksPerRunner + reserveSubnets + 1 subnets for active and drained nodes', () => {
      // /20 cut into /24: 16 subnets. 4 x 3 + 3 + 1 = 16 fits; one more reserve does not.
      assert.deepEqual(codes(withPolicy({ base: '10.210.0.0/20', networksPerRunner: 3, reserveSubnets: 3 })), [])
      const errors = dockerNetworkPolicySound(
        ruleContext(withPolicy({ base: '10.210.0.0/20', networksPerRunner: 3, reserveSubnets: 4 })),
      )
      assert.deepEqual(
        errors.map((e) => [e.code, e.path, e.actual, e.expected]),
        [['DOCKER_NETWORK_POLICY_TOO_SMALL', '/pools/build/dockerNetworkPolicy', 16, 'at least 17 /24 subnets']],
      )
    })
    it('needs only reserveSubnets + 1 when every node of the pool is disabled', () => {
      const d = withPolicy({ base: '10.210.0.0/22', reserveSubnets: 3 }) // 4 subnets; 4 x 2 + 3 + 1 = 12 needed while active
      assert.deepEqual(
        codes(d).map(([c]) => c),
        ['DOCKER_NETWORK_POLICY_TOO_SMALL'],
      )
      d.nodes[0]!.state = 'disabled'
      assert.equal(subnetsNeeded('build', d.pools.build!.dockerNetworkPolicy!, d), 4)
      assert.deepEqual(codes(d), [])
      d.nodes[0]!.state = 'drained'
      assert.equal(subnetsNeeded('build', d.pools.build!.dockerNetworkPolicy!, d), 12)
    })
  })

  describe('overlaps (DOCKER_NETWORK_POLICY_OVERLAP)', () => {
    it('refuses overlapping bases across pools and accepts adjacent ones', () => {
      assert.deepEqual(codes(withPolicy({ base: '10.211.0.0/16' }, 'database')), [])
      assert.deepEqual(codes(withPolicy({ base: '10.210.255.0/24', prefix: 26 }, 'database')), [
        ['DOCKER_NETWORK_POLICY_OVERLAP', '/pools/database/dockerNetworkPolicy/base'],
      ])
      // A /8 holds build's base and build's bridge as well.
      assert.deepEqual(codes(withPolicy({ base: '10.0.0.0/8', prefix: 16 }, 'database')), [
        ['DOCKER_NETWORK_POLICY_OVERLAP', '/pools/database/dockerNetworkPolicy/base'],
        ['DOCKER_NETWORK_POLICY_OVERLAP', '/pools/build/dockerNetworkPolicy/defaultBridgeCidr'],
      ])
    })
    it('refuses a default bridge inside any pool base', () => {
      assert.deepEqual(codes(withPolicy({ defaultBridgeCidr: '10.210.9.1/24' })), [
        ['DOCKER_NETWORK_POLICY_OVERLAP', '/pools/build/dockerNetworkPolicy/defaultBridgeCidr'],
      ])
      const d = withPolicy({ base: '10.209.0.0/16' }, 'database')
      assert.deepEqual(codes(d), [
        ['DOCKER_NETWORK_POLICY_OVERLAP', '/pools/build/dockerNetworkPolicy/defaultBridgeCidr'],
      ])
    })
  })

  describe('the default bridge', () => {
    it('must be a usable gateway: not the network base, not the broadcast (DOCKER_NETWORK_POLICY_INVALID)', () => {
      assert.deepEqual(codes(withPolicy({ defaultBridgeCidr: '10.209.0.0/24' })), [
        ['DOCKER_NETWORK_POLICY_INVALID', '/pools/build/dockerNetworkPolicy/defaultBridgeCidr'],
      ])
      assert.deepEqual(codes(withPolicy({ defaultBridgeCidr: '10.209.0.255/24' })), [
        ['DOCKER_NETWORK_POLICY_INVALID', '/pools/build/dockerNetworkPolicy/defaultBridgeCidr'],
      ])
      assert.deepEqual(codes(withPolicy({ defaultBridgeCidr: '10.209.0.254/24' })), [])
      assert.deepEqual(codes(withPolicy({ defaultBridgeCidr: '10.209.0.1' })), [
        ['DOCKER_NETWORK_POLICY_INVALID', '/pools/build/dockerNetworkPolicy/defaultBridgeCidr'],
      ])
    })
    it('must leave maxRunners + reserveSubnets addresses after network, broadcast and gateway (DOCKER_NETWORK_POLICY_TOO_SMALL)', () => {
      // /29: 8 - 3 = 5 left; 4 runners + 1 reserve = 5 fits, + 2 reserve = 6 does not.
      assert.deepEqual(codes(withPolicy({ defaultBridgeCidr: '10.209.0.1/29', reserveSubnets: 1 })), [])
      const [e] = dockerNetworkPolicySound(
        ruleContext(withPolicy({ defaultBridgeCidr: '10.209.0.1/29', reserveSubnets: 2 })),
      )
      assert.deepEqual(
        [e!.code, e!.path, e!.actual],
        ['DOCKER_NETWORK_POLICY_TOO_SMALL', '/pools/build/dockerNetworkPolicy/defaultBridgeCidr', 5],
      )
    })
  })
})
