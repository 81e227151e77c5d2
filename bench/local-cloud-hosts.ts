// The benchmark's hosts from the local cloud (`fleetkit provider stub --boot`'s machines) instead of the test
// harness's container hosts: each created through the stub's API as an operator's server would be (Debian 12,
// the bench's user_data with the host key it pins, the operator key as the request's SSH key), reached at the
// address the API reports on the cloud's bridge, deleted through the API. Same machines underneath
// (systemd-nspawn on an overlay of a Debian rootfs); the test hosts' cached golden rootfs is its image, so
// the bench builds nothing.
import { readFile } from 'node:fs/promises'

import { type HetznerStub, startHetznerStub } from '../src/provider/hetzner-stub.js'
import { LocalCloud } from '../src/provider/local-cloud/local-cloud.js'
import { goldenImage } from '../test/hosts/index.js'
import { generateKeyPair, generateOperatorKey, knownHostsLine } from '../test/hosts/keys.js'
import { type SshTarget, sshRun } from '../test/hosts/ssh.js'
import type { OperatorKey } from '../test/hosts/types.js'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the API's JSON, read field by field
type Answer = Record<string, any>

/** What the bench uses of a host. */
export interface BenchHost {
  name: string
  address: string
  hostPublicKey: string
  operator: OperatorKey
  stop(): Promise<void>
}

export interface LocalCloudHosts {
  /** This machine's address on the cloud's bridge: the gateway's address and the operator CIDR for the hosts. */
  operatorAddress: string
  start(names: string[]): Promise<BenchHost[]>
  close(): Promise<void>
}

export async function startLocalCloudHosts(dir: string, userData: string): Promise<LocalCloudHosts> {
  const bookworm = await goldenImage('bookworm')
  const cloud = await LocalCloud.start({ prebuiltImages: { 'debian-12': bookworm.rootfs } })
  let stub: HetznerStub
  try {
    stub = await startHetznerStub({ machines: cloud, actionDurationMs: 200 })
  } catch (error) {
    await cloud.close()
    throw error
  }
  const operator = await generateOperatorKey(dir)

  async function api(method: string, path: string, body?: unknown): Promise<Answer> {
    const response = await fetch(`${stub.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${stub.token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await response.text()
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`)
    return text === '' ? {} : (JSON.parse(text) as Answer)
  }
  async function settle(actionIds: number[]): Promise<void> {
    for (const id of actionIds) {
      for (;;) {
        const { action } = await api('GET', `/actions/${id}`)
        if (action.status === 'error') throw new Error(`action ${id}: ${JSON.stringify(action.error)}`)
        if (action.status === 'success') break
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
    }
  }
  await api('POST', '/ssh_keys', { name: 'bench-operator', public_key: operator.publicKey })

  async function startOne(name: string): Promise<BenchHost> {
    const hostKey = await generateKeyPair(dir, `host-${name}`, `root@${name}`)
    const privateKey = (await readFile(hostKey.privateKeyFile, 'utf8')).trim()
    // The host key is pinned through the user_data, as fleetkit's own seeds pin theirs.
    const pinned =
      `ssh_deletekeys: true\nssh_genkeytypes: [ed25519]\nssh_keys:\n  ed25519_private: |\n` +
      `${privateKey
        .split('\n')
        .map((line) => `    ${line}`)
        .join('\n')}\n  ed25519_public: ${hostKey.publicKey}\n`
    const created = await api('POST', '/servers', {
      name,
      server_type: 'cx22',
      image: 'debian-12',
      location: 'fsn1',
      ssh_keys: ['bench-operator'],
      user_data: `${userData.trimEnd()}\n${pinned}`,
    })
    await settle([created.action.id, ...created.next_actions.map((a: { id: number }) => a.id)])
    const address = created.server.public_net.ipv4.ip as string
    await waitForCloudInit({
      address,
      port: 22,
      knownHostsLine: knownHostsLine(address, 22, hostKey.publicKey),
      operator,
      dir,
    })
    return {
      name,
      address,
      hostPublicKey: hostKey.publicKey,
      operator,
      stop: async () => settle([(await api('DELETE', `/servers/${created.server.id}`)).action.id]),
    }
  }

  return {
    operatorAddress: cloud.bridge.address,
    start: (names) => Promise.all(names.map(startOne)),
    close: () => stub.close(),
  }
}

/** As the container hosts do: ssh as root with the pinned key until cloud-init's first boot has finished. */
async function waitForCloudInit(target: SshTarget, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const probe = await sshRun(target, 'test -e /var/lib/cloud/instance/boot-finished', { timeoutMs: 10_000 })
    if (probe.code === 0) return
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  throw new Error(`${target.address}: cloud-init did not finish within ${timeoutMs / 1000} s`)
}
