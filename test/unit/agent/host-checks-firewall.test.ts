// host:firewall compares the loaded inet fleetkit table with the one the firewall role last converged
// (applied.nft): listed by nft as root, else read from the snapshot a root timer writes, whose age
// counts. A fake host root holds both files; their times are set against an injected clock.
import assert from 'node:assert/strict'
import { rm, utimes } from 'node:fs/promises'
import { join } from 'node:path'

import {
  FIREWALL_APPLIED_PATH,
  FIREWALL_SNAPSHOT_PATH,
  FIREWALL_SNAPSHOT_STALE_MS,
  checkFirewall,
} from '../../../src/agent/host-checks.js'
import type { HostFile } from '../../../src/agent/host.js'
import { fakeRunner, makeFakeRoot } from '../../support/fake-host.js'

const now = new Date('2026-03-01T12:00:00Z')

const APPLIED = `table inet fleetkit {
\tchain input {
\t\ttype filter hook input priority filter; policy drop;
\t\tiif "lo" accept
\t\tct state established,related accept
\t\ticmp type { destination-unreachable, time-exceeded, parameter-problem } accept
\t\ttcp dport 22 accept comment "SSH"
\t}
}
`
const ADDED = APPLIED.replace('\t\ttcp dport 22', '\t\ttcp dport 9999 accept\n\t\ttcp dport 22')
const listed = (stdout: string) => ({ 'nft list table inet fleetkit': { stdout } })
const denied = {
  'nft list table inet fleetkit': { exitCode: 1, stderr: 'Error: Operation not permitted\n' },
  'systemctl is-active fleetkit-firewall.service': { stdout: 'active\n' },
}

describe('agent host checks: host:firewall against the converged table', () => {
  const roots: string[] = []
  after(async () => {
    for (const root of roots) await rm(root, { recursive: true, force: true })
  })

  /** A fake host with these files, each written `ageMs` before `now`. */
  async function host(files: Record<string, string>, answers: object, ageMs = 10_000) {
    const root = await makeFakeRoot(files)
    roots.push(root)
    const written = new Date(now.getTime() - ageMs)
    for (const path of Object.keys(files)) await utimes(join(root, path), written, written)
    return {
      host: { root, run: fakeRunner(answers as Record<string, object>) },
      firewallUnit: 'fleetkit-firewall.service',
      now,
    }
  }

  describe('as root (nft lists the table)', () => {
    it('passes when the loaded table is the converged one, however nft indents or orders a set', async () => {
      const reordered = APPLIED.replace(
        'destination-unreachable, time-exceeded',
        'time-exceeded, destination-unreachable',
      )
      const result = await checkFirewall(await host({ [FIREWALL_APPLIED_PATH]: APPLIED }, listed(reordered)))
      assert.equal(result.status, 'pass', result.detail)
      assert.match(result.detail, /as nft lists it\) is the one last converged \(9 lines\)/)
    })

    it('fails FIREWALL_RULES_DRIFTED naming the count and the first differing line', async () => {
      const result = await checkFirewall(await host({ [FIREWALL_APPLIED_PATH]: APPLIED }, listed(ADDED)))
      assert.deepEqual([result.status, result.code], ['fail', 'FIREWALL_RULES_DRIFTED'])
      assert.match(result.detail, /differs from the one last converged in 1 line; first: \+ tcp dport 9999 accept$/)
      const removed = APPLIED.replace('\t\tct state established,related accept\n', '')
      const gone = await checkFirewall(await host({ [FIREWALL_APPLIED_PATH]: APPLIED }, listed(removed)))
      assert.match(gone.detail, /in 1 line; first: - ct state established,related accept$/)
    })

    it('counts a moved rule as two lines: order decides what nft does', async () => {
      const moved = APPLIED.replace(
        '\t\tiif "lo" accept\n\t\tct state established,related accept',
        '\t\tct state established,related accept\n\t\tiif "lo" accept',
      )
      const result = await checkFirewall(await host({ [FIREWALL_APPLIED_PATH]: APPLIED }, listed(moved)))
      assert.equal(result.code, 'FIREWALL_RULES_DRIFTED')
      assert.match(result.detail, / in 2 lines; first: /)
    })

    it('passes a loaded table that was never converged (no applied.nft), saying so', async () => {
      const result = await checkFirewall(await host({}, listed(ADDED)))
      assert.equal(result.status, 'pass', result.detail)
      assert.match(result.detail, /is loaded; not yet converged \(no \/var\/lib\/fleetkit\/firewall\/applied\.nft\)/)
    })

    it('fails FIREWALL_TABLE_MISSING when the table is not loaded, whatever was converged', async () => {
      const missing = { 'nft list table inet fleetkit': { exitCode: 1, stderr: 'Error: No such file or directory\n' } }
      const result = await checkFirewall(await host({ [FIREWALL_APPLIED_PATH]: APPLIED }, missing))
      assert.deepEqual([result.status, result.code], ['fail', 'FIREWALL_TABLE_MISSING'])
    })

    it('does not read the snapshot when it can list the table itself', async () => {
      const stale = FIREWALL_SNAPSHOT_STALE_MS * 10
      const files = { [FIREWALL_APPLIED_PATH]: APPLIED, [FIREWALL_SNAPSHOT_PATH]: ADDED }
      const result = await checkFirewall(await host(files, listed(APPLIED), stale))
      assert.equal(result.status, 'pass', result.detail)
    })
  })

  describe('unprivileged (nft is not permitted: the snapshot answers)', () => {
    it('passes when a fresh snapshot is the converged table', async () => {
      const files = { [FIREWALL_APPLIED_PATH]: APPLIED, [FIREWALL_SNAPSHOT_PATH]: APPLIED }
      const result = await checkFirewall(await host(files, denied, 40_000))
      assert.equal(result.status, 'pass', result.detail)
      assert.match(result.detail, /\(snapshot of 40 s ago\) is the one last converged/)
    })

    it('fails FIREWALL_RULES_DRIFTED on a snapshot with a rule added by hand', async () => {
      const files = { [FIREWALL_APPLIED_PATH]: APPLIED, [FIREWALL_SNAPSHOT_PATH]: ADDED }
      const result = await checkFirewall(await host(files, denied))
      assert.deepEqual([result.status, result.code], ['fail', 'FIREWALL_RULES_DRIFTED'])
      assert.match(result.detail, /snapshot of 10 s ago\) differs .* in 1 line; first: \+ tcp dport 9999 accept$/)
    })

    it('fails FIREWALL_SNAPSHOT_STALE stating the age of a snapshot past the limit, even an equal one', async () => {
      const files = { [FIREWALL_APPLIED_PATH]: APPLIED, [FIREWALL_SNAPSHOT_PATH]: APPLIED }
      const result = await checkFirewall(await host(files, denied, 7 * 60_000))
      assert.deepEqual([result.status, result.code], ['fail', 'FIREWALL_SNAPSHOT_STALE'])
      assert.match(result.detail, /live\.nft, is 7 min old \(written every 30 s, limit 120 s\): .*timer stopped/)
      const edge = await checkFirewall(await host(files, denied, FIREWALL_SNAPSHOT_STALE_MS))
      assert.equal(edge.status, 'pass', edge.detail)
    })

    it('fails FIREWALL_SNAPSHOT_STALE when there is no snapshot to read', async () => {
      const result = await checkFirewall(await host({ [FIREWALL_APPLIED_PATH]: APPLIED }, denied))
      assert.equal(result.code, 'FIREWALL_SNAPSHOT_STALE')
      assert.match(result.detail, /cannot be read \(ENOENT\): fleetkit-firewall-snapshot\.timer has not run/)
    })

    it('fails FIREWALL_TABLE_MISSING when the snapshot recorded that nft could not list the table', async () => {
      const failed = '# nft list table inet fleetkit failed: Error: No such file or directory\n'
      const files = { [FIREWALL_APPLIED_PATH]: APPLIED, [FIREWALL_SNAPSHOT_PATH]: failed }
      const result = await checkFirewall(await host(files, denied))
      assert.equal(result.code, 'FIREWALL_TABLE_MISSING')
      assert.match(result.detail, /not loaded \(snapshot of 10 s ago, nft: Error: No such file or directory\)/)
    })

    it('keeps the unit fallback before the first converge, saying not yet converged', async () => {
      const up = await checkFirewall(await host({ [FIREWALL_SNAPSHOT_PATH]: ADDED }, denied))
      assert.equal(up.status, 'pass', up.detail)
      assert.match(up.detail, /fleetkit-firewall\.service, which loads the table, is active; not yet converged/)
      const down = await checkFirewall(
        await host(
          {},
          { ...denied, 'systemctl is-active fleetkit-firewall.service': { exitCode: 3, stdout: 'failed\n' } },
        ),
      )
      assert.equal(down.code, 'FIREWALL_TABLE_MISSING')
    })

    it('warns, not compares, when applied.nft exists but cannot be read', async () => {
      const files: Record<string, HostFile> = {
        [FIREWALL_APPLIED_PATH]: { error: 'EACCES' },
        [FIREWALL_SNAPSHOT_PATH]: { content: ADDED, modified: now },
      }
      const context = await host({}, denied)
      const result = await checkFirewall({
        ...context,
        host: { ...context.host, readFile: async (path) => files[path] ?? { error: 'ENOENT' } },
      })
      assert.equal(result.status, 'warn', result.detail)
      assert.match(result.detail, /applied\.nft cannot be read \(EACCES\): not compared with the converged table/)
    })
  })
})
