// The test hosts' network on this machine: one bridge (fkhosts0) with the operator address, an
// address per host allocated across test processes, and a "stranger" namespace on the same
// bridge with another address, so firewall tests probe a host from both sides.
import { execFileSync } from 'node:child_process'
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'

import { runHostCommand, runHostCommandOk } from './exec.js'
import { registerCleanup, unregisterCleanup } from './registry.js'
import type { ProbeFrom, ProbeResult } from './types.js'

export const BRIDGE = 'fkhosts0'
/** The address this machine has on the bridge: ssh and Ansible connect from it (the operator CIDR is OPERATOR_ADDRESS/32). */
export const OPERATOR_ADDRESS = '10.231.0.1'
export const PREFIX_LENGTH = 16
const allocations = '/run/fleetkit-test-hosts/addresses'

let bridgeReady: Promise<void> | undefined

/** Creates the bridge and the operator address once per machine (concurrent processes may race: EEXIST is fine). */
export function ensureBridge(): Promise<void> {
  bridgeReady ??= (async () => {
    const link = await runHostCommand('ip', ['link', 'show', BRIDGE])
    if (link.code !== 0) {
      const added = await runHostCommand('ip', ['link', 'add', BRIDGE, 'type', 'bridge'])
      if (added.code !== 0 && !/exists/i.test(added.stderr))
        throw new Error(`test hosts: cannot create bridge ${BRIDGE}: ${added.stderr.trim()}`)
    }
    const addr = await runHostCommand('ip', ['addr', 'add', `${OPERATOR_ADDRESS}/${PREFIX_LENGTH}`, 'dev', BRIDGE])
    if (addr.code !== 0 && !/exists|already assigned/i.test(addr.stderr))
      throw new Error(`test hosts: cannot address bridge ${BRIDGE}: ${addr.stderr.trim()}`)
    await runHostCommandOk('ip', ['link', 'set', BRIDGE, 'up'])
  })()
  bridgeReady.catch(() => {
    bridgeReady = undefined
  })
  return bridgeReady
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * An address on the bridge no other live test process holds: a file per address under /run created
 * exclusively, holding the owner's PID; an address whose owner died is taken over.
 */
export function allocateAddress(owner = process.pid): string {
  mkdirSync(allocations, { recursive: true })
  for (let n = 2 * 256 + 2; n < 250 * 256; n++) {
    if (n % 256 === 0 || n % 256 === 255) continue
    const address = `10.231.${Math.floor(n / 256)}.${n % 256}`
    const file = join(allocations, address)
    try {
      const fd = openSync(file, 'wx')
      writeSync(fd, `${owner}\n`)
      closeSync(fd)
      forgetNeighbour(address)
      return address
    } catch {
      const holder = Number.parseInt(readFileSync(file, 'utf8'), 10)
      if (!Number.isNaN(holder) && !alive(holder)) {
        rmSync(file, { force: true })
        n--
      }
    }
  }
  throw new Error('test hosts: no free address on the test bridge')
}

/**
 * Drops what this machine and every stranger namespace cached for ADDRESS: a host that took the
 * address over has another MAC, and a stale ARP entry sends the first seconds of traffic to the
 * old one (a 2 s probe from a long-lived stranger then times out as if a firewall dropped it).
 */
function forgetNeighbour(address: string): void {
  const flush = (...prefix: string[]) => {
    try {
      execFileSync('ip', [...prefix, 'neigh', 'flush', 'to', address], { stdio: 'ignore' })
    } catch {
      /* nothing cached */
    }
  }
  flush()
  let namespaces: string[] = []
  try {
    namespaces = readdirSync('/run/netns').filter((name) => name.startsWith('fkstranger-'))
  } catch {
    /* no namespaces */
  }
  for (const netns of namespaces) flush('-n', netns)
}

export function releaseAddress(address: string): void {
  rmSync(join(allocations, address), { force: true })
}

/** Addresses this process holds (for the diagnostics of the helper's own tests). */
export function heldAddresses(owner = process.pid): string[] {
  try {
    return readdirSync(allocations).filter(
      (a) => Number.parseInt(readFileSync(join(allocations, a), 'utf8'), 10) === owner,
    )
  } catch {
    return []
  }
}

interface Stranger {
  netns: string
  address: string
  hostVeth: string
}
let stranger: Promise<Stranger> | undefined

/** The stranger: a network namespace of this process on the bridge with its own address (not the operator's). */
export function strangerNamespace(): Promise<Stranger> {
  stranger ??= (async () => {
    await ensureBridge()
    const id = process.pid.toString(36)
    const netns = `fkstranger-${id}`
    const hostVeth = `fks${id}`.slice(0, 15)
    const address = allocateAddress()
    const cleanupSync = () => {
      try {
        execFileSync('ip', ['netns', 'del', netns], { stdio: 'ignore' })
      } catch {
        /* gone already */
      }
      try {
        execFileSync('ip', ['link', 'del', hostVeth], { stdio: 'ignore' })
      } catch {
        /* went with the namespace */
      }
      releaseAddress(address)
    }
    registerCleanup('stranger', cleanupSync)
    await runHostCommandOk('ip', ['netns', 'add', netns])
    await runHostCommandOk('ip', ['link', 'add', hostVeth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns])
    await runHostCommandOk('ip', ['link', 'set', hostVeth, 'master', BRIDGE, 'up'])
    await runHostCommandOk('ip', ['-n', netns, 'addr', 'add', `${address}/${PREFIX_LENGTH}`, 'dev', 'eth0'])
    await runHostCommandOk('ip', ['-n', netns, 'link', 'set', 'eth0', 'up'])
    await runHostCommandOk('ip', ['-n', netns, 'link', 'set', 'lo', 'up'])
    return { netns, address, hostVeth }
  })()
  stranger.catch(() => {
    stranger = undefined
  })
  return stranger
}

/** The stranger's address (starts its namespace on first use). */
export async function strangerAddress(): Promise<string> {
  return (await strangerNamespace()).address
}

export async function stopStrangerNamespace(): Promise<void> {
  if (!stranger) return
  const s = await stranger.catch(() => undefined)
  stranger = undefined
  if (!s) return
  await runHostCommand('ip', ['netns', 'del', s.netns])
  await runHostCommand('ip', ['link', 'del', s.hostVeth])
  releaseAddress(s.address)
  unregisterCleanup('stranger')
}

/** One TCP connect from ADDRESS (bound) in this process: open, refused (RST or ICMP reject) or timeout (dropped). */
function probeHere(
  address: string,
  port: number,
  localAddress: string | undefined,
  timeoutMs: number,
): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const socket = connect({ host: address, port, localAddress, timeout: timeoutMs })
    const done = (result: ProbeResult) => {
      socket.destroy()
      resolve(result)
    }
    socket.once('connect', () => done('open'))
    socket.once('timeout', () => done('timeout'))
    socket.once('error', (error: NodeJS.ErrnoException) => {
      // nft `reject` answers with a RST (ECONNREFUSED) or an ICMP error (EHOSTUNREACH, ...): both are "refused".
      done(error.code === 'ETIMEDOUT' ? 'timeout' : 'refused')
    })
  })
}

const PROBE_SCRIPT = `
const net = require('node:net')
const [host, port, timeout] = process.argv.slice(1)
const s = net.connect({ host, port: Number(port), timeout: Number(timeout) })
const done = (r) => { process.stdout.write(r); s.destroy(); process.exit(0) }
s.once('connect', () => done('open'))
s.once('timeout', () => done('timeout'))
s.once('error', (e) => done(e.code === 'ETIMEDOUT' ? 'timeout' : 'refused'))
`

/**
 * Opens a TCP connection to ADDRESS:PORT from the operator address (this machine, on the bridge) or
 * from the stranger namespace. A dropped SYN is 'timeout' after `timeoutMs` (default 2 s).
 */
export async function probeTcp(
  address: string,
  port: number,
  from: ProbeFrom = 'operator',
  timeoutMs = 2_000,
): Promise<ProbeResult> {
  if (from === 'operator') {
    await ensureBridge()
    return probeHere(address, port, OPERATOR_ADDRESS, timeoutMs)
  }
  const { netns } = await strangerNamespace()
  const result = await runHostCommandOk(
    'ip',
    ['netns', 'exec', netns, process.execPath, '-e', PROBE_SCRIPT, address, String(port), String(timeoutMs)],
    { timeoutMs: timeoutMs + 10_000 },
  )
  const answer = result.stdout.trim()
  if (answer !== 'open' && answer !== 'refused' && answer !== 'timeout')
    throw new Error(`test hosts: probe from the stranger said ${JSON.stringify(answer)}`)
  return answer
}
