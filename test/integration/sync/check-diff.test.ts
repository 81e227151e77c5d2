// Check mode's differences end to end without a host: real ansible-playbook --check --diff against
// localhost (connection local) over files in a temporary folder, run by fleetkit's phase runner with
// the fleetkit_events callback, folded into the drift report: a file's and a template's diff, a
// role's structured settings, a no_log task and a `diff: false` file hidden, a long diff cut at 200.
import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { packagePath } from '../../../src/package-root.js'
import { runPhase, speedSettings } from '../../../src/sync/ansible-phase.js'
import { formatDriftTable } from '../../../src/sync/drift-table.js'
import { nodeReport, type SyncReport } from '../../../src/sync/sync-report.js'
import { assertMatchesOutputSchema } from '../../support/cli.js'

describe('sync: check mode shows the difference (real ansible-playbook, connection local)', function () {
  this.timeout(180_000)
  let dir: string
  const files = () => join(dir, 'files')

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'fleetkit-check-diff-'))
    // The controller's own Python: the one ansible-playbook runs under.
    writeFileSync(
      join(dir, 'inventory.ini'),
      'localhost ansible_connection=local ansible_python_interpreter="{{ ansible_playbook_python }}"\n',
    )
  })

  after(() => rmSync(dir, { recursive: true, force: true }))

  it('carries the diff of a file and a template, settings, hidden tasks and the cut into the report', async () => {
    // fleetkit's own ansible.cfg and callback, the fixture's playbook.
    const ansibleDir = join(dir, 'ansible')
    mkdirSync(ansibleDir)
    symlinkSync(packagePath('ansible', 'ansible.cfg'), join(ansibleDir, 'ansible.cfg'))
    symlinkSync(packagePath('ansible', 'callback_plugins'), join(ansibleDir, 'callback_plugins'))
    symlinkSync(packagePath('test', 'fixtures', 'ansible', 'diff', 'playbooks'), join(ansibleDir, 'playbooks'))
    mkdirSync(files())
    const write = (name: string, text: string, mode = 0o644) => writeFileSync(join(files(), name), text, { mode })
    write('motd', 'Welcome\nPasswordAuthentication yes\n')
    write('app.conf', '# app.conf\nlisten = 80\nworkers = 4\n')
    write('long.txt', Array.from({ length: 300 }, (_, i) => `old ${i}`).join('\n') + '\n')
    write('secret.env', 'TOKEN=s3cr3t-old-value\n', 0o600)
    write('agent.env', 'KEY=old-s3cr3t\n', 0o600)
    write('same.txt', 'same\n')
    const extraVars = join(dir, 'vars.json')
    writeFileSync(extraVars, JSON.stringify({ diff_dir: files() }))
    const before = readFileSync(join(files(), 'motd'), 'utf8')

    const result = await runPhase({
      workDir: join(dir, 'run'),
      inventoryPath: join(dir, 'inventory.ini'),
      playbook: 'diff.yml',
      hosts: ['localhost'],
      label: 'check-1',
      check: true,
      tags: [],
      extraVarsFile: extraVars,
      speed: {
        ...speedSettings({ targets: 1, noMitogen: true, stateDir: join(dir, 'state') }),
        strategy: 'linear',
      },
      env: { ...process.env },
      ansibleDir,
    })
    assert.equal(result.exitCode, 0, result.outputTail)
    // Check mode wrote nothing.
    assert.equal(readFileSync(join(files(), 'motd'), 'utf8'), before)

    const host = result.hosts.get('localhost')!
    const byTask = new Map(host.differences.map((d) => [d.task, d]))
    assert.deepEqual(
      [...byTask.keys()],
      [
        'Write the motd',
        'Write a file not there yet',
        'Render the app configuration',
        'Write a long file',
        'Write a secret without logging it',
        'Write a file kept out of diffs',
        'Report the settings that differ',
        'Report the rules that would be applied',
      ],
    )
    assert.deepEqual(byTask.get('Report the rules that would be applied')!.lines, [
      '--- table inet fleetkit (now)',
      '+++ table inet fleetkit (wanted)',
      '@@ -1 +1 @@',
      '-tcp dport 22 accept',
      '+tcp dport 2222 accept',
    ])
    assert.deepEqual(byTask.get('Write the motd')!.lines, [
      `--- ${files()}/motd (now)`,
      `+++ ${files()}/motd (wanted)`,
      '@@ -1,2 +1,2 @@',
      ' Welcome',
      '-PasswordAuthentication yes',
      '+PasswordAuthentication no',
    ])
    // A file not there yet is named by its path, not the controller's temporary copy.
    assert.deepEqual(byTask.get('Write a file not there yet')!.lines, [
      `--- ${files()}/new.txt (now)`,
      `+++ ${files()}/new.txt (wanted)`,
      '@@ -0,0 +1 @@',
      '+new',
    ])
    const template = byTask.get('Render the app configuration')!
    assert.ok(
      template.lines.includes('-listen = 80') && template.lines.includes('+listen = 8080'),
      template.lines.join('\n'),
    )
    const long = byTask.get('Write a long file')!
    assert.equal(long.lines.length, 200)
    assert.equal(long.truncated, true)
    for (const task of ['Write a secret without logging it', 'Write a file kept out of diffs'])
      assert.deepEqual(byTask.get(task), {
        role: 'playbook',
        task,
        hidden: true,
        lines: [],
        truncated: false,
        settings: [],
      })
    assert.deepEqual(byTask.get('Report the settings that differ')!.settings, [
      { setting: 'PasswordAuthentication', current: 'yes', wanted: 'no' },
    ])
    assert.ok(!host.changes.playbook!.includes('Leave the unchanged file alone'))

    // The events file, the report and the table never hold a hidden file's values.
    const events = readFileSync(join(dir, 'run', 'events-check-1.jsonl'), 'utf8')
    const node = nodeReport(
      {
        nodeId: 'localhost',
        phase: 'fleet',
        state: 'changed',
        code: null,
        message: null,
        tasksOk: host.tasksOk,
        tasksChanged: host.tasksChanged,
        tasksFailed: host.tasksFailed,
        changes: host.changes,
        appliedRevision: null,
        agentVersion: null,
      },
      host.differences,
    )
    const report: SyncReport = {
      runId: 1,
      kind: 'drift',
      outcome: 'drifted',
      revision: null,
      planHash: 'f'.repeat(64),
      plan: {
        playbook: 'diff.yml',
        tags: [],
        definitionSha256: 'a'.repeat(64),
        rolesSha256: 'b'.repeat(64),
        targets: ['localhost'],
        canary: null,
      },
      canary: { declared: null, ran: null, skippedBecause: 'check mode', notes: [] },
      speed: { mitogen: false, forks: 1, description: '' },
      nodes: [node],
      counts: { changed: 1 },
      proofs: [],
      fingerprint: { off: null, unchanged: [], drifted: [], recorded: [] },
      enrolled: [],
      resumed: false,
    }
    assertMatchesOutputSchema('sync', { status: 0, result: report })
    const table = formatDriftTable(report)
    assert.ok(table.includes('        -PasswordAuthentication yes'), table.join('\n'))
    assert.ok(
      table.includes('        - PasswordAuthentication yes') && table.includes('        + PasswordAuthentication no'),
    )
    for (const text of [events, JSON.stringify(report), table.join('\n'), result.outputTail])
      assert.ok(!/s3cr3t/.test(text), 'a hidden value leaked')
  })
})
