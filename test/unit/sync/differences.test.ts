// What check mode shows of a difference: the fleetkit_events callback's diff (recorded from a real
// `ansible-playbook --check --diff` run of test/fixtures/ansible/diff) folded per host and task, a
// role's structured settings, a no_log task and a secret file hidden, the bound on lines; and how
// the sync lines, the drift table and the --json report carry them.
import assert from 'node:assert/strict'

import { formatDriftTable } from '../../../src/sync/drift-table.js'
import { foldHostResults, parseEventLines, taskDifference } from '../../../src/sync/host-results.js'
import {
  differenceLines,
  formatDifferences,
  nodeReport,
  outcomeError,
  type SyncNodeReport,
  type SyncReport,
} from '../../../src/sync/sync-report.js'

function report(outcome: SyncReport['outcome'], nodes: SyncNodeReport[]): SyncReport {
  return {
    runId: 7,
    kind: 'drift',
    outcome,
    revision: null,
    planHash: 'f'.repeat(64),
    plan: {
      playbook: 'site.yml',
      tags: [],
      definitionSha256: 'a'.repeat(64),
      rolesSha256: 'b'.repeat(64),
      targets: nodes.map((n) => n.node),
      canary: null,
    },
    canary: { declared: null, ran: null, skippedBecause: 'check mode', notes: [] },
    speed: { mitogen: false, forks: 5, description: '' },
    nodes,
    counts: { changed: nodes.length },
    proofs: [],
    fingerprint: { off: null, unchanged: [], drifted: [], recorded: [] },
    enrolled: [],
    resumed: false,
  }
}

// Recorded by the callback (host and roles renamed); the secret file's task ran with no_log, agent.env's with diff: false.
const RECORDED = `{"event": "task_start", "task": "Write the motd", "role": "sshd"}
{"host": "web-1", "task": "Write the motd", "role": "sshd", "changed": true, "diff": {"hidden": false, "lines": ["--- /tmp/dd/motd (now)", "+++ /tmp/dd/motd (wanted)", "@@ -1,2 +1,2 @@", " Welcome", "-PasswordAuthentication yes", "+PasswordAuthentication no"], "truncated": false}, "resources": [{"kind": "path", "name": "/tmp/dd/motd"}], "event": "ok", "at": 1796569641.068}
{"host": "web-1", "task": "Render the app configuration", "role": "firewall", "changed": true, "diff": {"hidden": false, "lines": ["--- /tmp/dd/app.conf (now)", "+++ /tmp/dd/app.conf (wanted)", "@@ -1,3 +1,3 @@", " # app.conf", "-listen = 80", "+listen = 8080", " workers = 4"], "truncated": false}, "resources": [{"kind": "path", "name": "/tmp/dd/app.conf"}], "event": "ok", "at": 1796569643.492}
{"host": "web-1", "task": "Write a secret without logging it", "role": "tailscale", "changed": true, "diff": {"hidden": true, "lines": [], "truncated": false}, "event": "ok", "at": 1796569648.562}
{"host": "web-1", "task": "Write a file kept out of diffs", "role": "agent", "changed": true, "diff": {"hidden": true, "lines": [], "truncated": false}, "resources": [{"kind": "path", "name": "/tmp/dd/agent.env"}], "event": "ok", "at": 1796569649.685}
{"host": "web-1", "task": "Report what would change", "role": "sshd", "changed": true, "diff": {"hidden": false, "lines": [], "truncated": false, "settings": [{"setting": "PasswordAuthentication", "current": "yes", "wanted": "no"}]}, "event": "ok", "at": 1796569649.777}
{"host": "web-1", "task": "Leave the unchanged file alone", "role": "sshd", "changed": false, "resources": [{"kind": "path", "name": "/tmp/dd/same.txt"}], "event": "ok", "at": 1796569651.735}
{"host": "web-2", "task": "Report what would change", "role": "sshd", "changed": true, "event": "ok", "at": 1796569652.1}
`

describe('sync differences (check mode with --diff)', () => {
  const folded = foldHostResults(parseEventLines(RECORDED).events)
  const web1 = folded.get('web-1')!

  it('folds a diff, a structured difference and a hidden task per host and task, in order', () => {
    assert.deepEqual(
      web1.differences.map((d) => [d.role, d.task, d.hidden]),
      [
        ['sshd', 'Write the motd', false],
        ['firewall', 'Render the app configuration', false],
        ['tailscale', 'Write a secret without logging it', true],
        ['agent', 'Write a file kept out of diffs', true],
        ['sshd', 'Report what would change', false],
      ],
    )
    assert.deepEqual(web1.differences[0]!.lines.slice(-2), [
      '-PasswordAuthentication yes',
      '+PasswordAuthentication no',
    ])
    assert.deepEqual(web1.differences[4]!.settings, [
      { setting: 'PasswordAuthentication', current: 'yes', wanted: 'no' },
    ])
    // A changed task without a diff still counts as a change, with nothing to show.
    assert.deepEqual(folded.get('web-2')!.changes, { sshd: ['Report what would change'] })
    assert.deepEqual(folded.get('web-2')!.differences, [])
  })

  it('a hidden task keeps no value, even one an event carried by mistake', () => {
    const d = taskDifference('agent', 'Write agent.env', {
      hidden: true,
      lines: ['-FLEETKIT_TOKEN=old', '+FLEETKIT_TOKEN=new'],
      truncated: false,
      settings: [{ setting: 'TOKEN', current: 'old', wanted: 'new' }],
    })
    assert.deepEqual(d, {
      role: 'agent',
      task: 'Write agent.env',
      hidden: true,
      lines: [],
      truncated: false,
      settings: [],
    })
    assert.deepEqual(differenceLines(d!), ['changed, diff hidden'])
    // Anything but an explicit "not hidden" is hidden.
    assert.equal(taskDifference('r', 't', { lines: ['+x'], truncated: false } as never)?.hidden, true)
  })

  it('bounds the lines at 200 a task and says it cut them', () => {
    const lines = Array.from({ length: 250 }, (_, i) => `+line ${i}`)
    const d = taskDifference('r', 't', { hidden: false, lines, truncated: false })!
    assert.equal(d.lines.length, 200)
    assert.equal(d.truncated, true)
    assert.equal(differenceLines(d).at(-1), '... truncated: more than 200 lines differ')
    const cut = taskDifference('r', 't', { hidden: false, lines: ['+a'], truncated: true })!
    assert.equal(differenceLines(cut).at(-1), '... truncated: more than 200 lines differ')
  })

  it('prints each setting as - now / + wanted, and an unset value as (unset)', () => {
    const d = taskDifference('sshd', 'Report what would change', {
      hidden: false,
      lines: [],
      truncated: false,
      settings: [
        { setting: 'PasswordAuthentication', current: 'yes', wanted: 'no' },
        { setting: 'Port', current: null, wanted: '2222' },
      ],
    })!
    assert.deepEqual(differenceLines(d), [
      '- PasswordAuthentication yes',
      '+ PasswordAuthentication no',
      '- Port (unset)',
      '+ Port 2222',
    ])
  })

  it("shows the differences under a sync node's line and under each drift row of the role", () => {
    const node = {
      nodeId: 'web-1',
      phase: 'fleet' as const,
      state: 'changed' as const,
      code: null,
      message: null,
      tasksOk: 6,
      tasksChanged: 5,
      tasksFailed: 0,
      changes: web1.changes,
      appliedRevision: null,
      agentVersion: null,
    }
    const n = nodeReport(node, web1.differences)
    const sync = formatDifferences(n)
    assert.equal(sync[0], '  sshd: Write the motd')
    assert.ok(sync.includes('      -PasswordAuthentication yes'))
    assert.ok(sync.includes('      - PasswordAuthentication yes') && sync.includes('      + PasswordAuthentication no'))
    assert.deepEqual(sync.slice(sync.indexOf('  agent: Write a file kept out of diffs'), -3), [
      '  agent: Write a file kept out of diffs',
      '      changed, diff hidden',
    ])
    const table = formatDriftTable(report('drifted', [n]))
    const sshdRow = table.findIndex((l) => /^web-1\s+sshd\s+2 task\(s\) would change/.test(l))
    assert.deepEqual(table.slice(sshdRow + 1, sshdRow + 10), [
      '    Write the motd:',
      '        --- /tmp/dd/motd (now)',
      '        +++ /tmp/dd/motd (wanted)',
      '        @@ -1,2 +1,2 @@',
      '         Welcome',
      '        -PasswordAuthentication yes',
      '        +PasswordAuthentication no',
      '    Report what would change:',
      '        - PasswordAuthentication yes',
    ])
    const tailscale = table.findIndex((l) => /^web-1\s+tailscale\s+/.test(l))
    assert.deepEqual(table.slice(tailscale + 1, tailscale + 3), [
      '    Write a secret without logging it:',
      '        changed, diff hidden',
    ])
  })

  it('carries them per node and task in --json, in the sync and drift schemas', async () => {
    const { assertMatchesOutputSchema } = await import('../../support/cli.js')
    const { errorEnvelope } = await import('../../../src/cli/error-output.js')
    const drifted = report('drifted', [
      {
        node: 'web-1',
        phase: 'fleet',
        state: 'changed',
        code: null,
        runbook: null,
        message: null,
        tasks: { ok: 6, changed: 5, failed: 0 },
        changes: web1.changes,
        differences: web1.differences,
      },
    ])
    assertMatchesOutputSchema('sync', { status: 0, result: { ...drifted, outcome: 'converged' } })
    const error = outcomeError(drifted)!
    const envelope = JSON.parse(JSON.stringify(errorEnvelope(error, error.exitCode))) as {
      data: { report: { nodes: { differences: { task: string; settings: unknown[] }[] }[] } }
    }
    assertMatchesOutputSchema('drift', envelope)
    assert.deepEqual(envelope.data.report.nodes[0]!.differences[4]!.settings, [
      { setting: 'PasswordAuthentication', current: 'yes', wanted: 'no' },
    ])
    const bad = { ...drifted, nodes: [{ ...drifted.nodes[0], differences: [{ role: 'sshd', task: 'x' }] }] }
    assert.throws(() => assertMatchesOutputSchema('sync', { status: 0, result: { ...bad, outcome: 'converged' } }))
    assert.ok(!JSON.stringify(envelope).includes('s3cr3t'))
  })
})
