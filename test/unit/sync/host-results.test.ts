// The fleetkit_events lines folded per host and judged: a changed host key, a dead-man rollback,
// a role's own failure code, an unreachable host, changed and converged.
import assert from 'node:assert/strict'

import { readFileSync } from 'node:fs'

import { parse } from 'yaml'

import {
  foldHostResults,
  judgeHost,
  leadingCode,
  parseEventLines,
  PLAY_END_TASK,
  playEndedOn,
} from '../../../src/sync/host-results.js'
import { packagePath } from '../../../src/package-root.js'
import { formatDriftTable } from '../../../src/sync/drift-table.js'
import { outcomeError, type SyncReport } from '../../../src/sync/sync-report.js'

const line = (o: object) => `${JSON.stringify(o)}\n`

describe('sync host results', () => {
  it("knows a host's end of play from site.yml's own post task, which runs under every --tags", () => {
    const plays = parse(readFileSync(packagePath('ansible', 'playbooks', 'site.yml'), 'utf8')) as {
      post_tasks?: { name: string; tags?: string[] }[]
    }[]
    const last = plays[0]!.post_tasks?.at(-1)
    assert.equal(last?.name, PLAY_END_TASK)
    assert.deepEqual(last?.tags, ['always'])
    assert.equal(playEndedOn({ event: 'ok', host: 'web-1', task: PLAY_END_TASK }), 'web-1')
    assert.equal(playEndedOn({ event: 'skipped', host: 'web-1', task: PLAY_END_TASK }), null)
    assert.equal(playEndedOn({ event: 'ok', host: 'web-1', task: 'Install the agent unit' }), null)
    assert.equal(playEndedOn({ event: 'task_start', task: PLAY_END_TASK }), null)
  })

  it('keeps a torn last line for the next read and skips lines that are not JSON', () => {
    const first = parseEventLines(line({ event: 'ok', host: 'a' }) + 'warning: not json\n{"event":"ok","ho')
    assert.equal(first.events.length, 1)
    assert.equal(first.rest, '{"event":"ok","ho')
    const second = parseEventLines(`${first.rest}st":"b"}\n`)
    assert.deepEqual(second.events, [{ event: 'ok', host: 'b' }])
  })

  it('counts tasks and the changed ones per role; an ignored failure is not a failure', () => {
    const results = foldHostResults([
      { event: 'ok', host: 'a', role: 'firewall', task: 'Render the candidate rules', changed: true },
      { event: 'ok', host: 'a', role: 'firewall', task: 'Read the live table', changed: false },
      { event: 'failed', host: 'a', role: 'agent', task: 'Probe', ignored: true, msg: 'x' },
      { event: 'ok', host: 'b', role: 'preflight', task: 'Check', changed: false },
    ])
    assert.deepEqual(results.get('a')?.changes, { firewall: ['Render the candidate rules'] })
    assert.equal(results.get('a')?.tasksFailed, 0)
    assert.deepEqual(judgeHost(results.get('a')), { state: 'changed', code: null, message: null })
    assert.deepEqual(judgeHost(results.get('b')), { state: 'converged', code: null, message: null })
  })

  it('a changed host key is SSH_HOST_KEY_MISMATCH, not unreachable', () => {
    const results = foldHostResults([
      {
        event: 'unreachable',
        host: 'c',
        msg: 'Failed to connect to the host via ssh: @@@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @@@\nHost key verification failed.',
      },
    ])
    assert.deepEqual(judgeHost(results.get('c')), {
      state: 'failed',
      code: 'SSH_HOST_KEY_MISMATCH',
      message: 'the host answered with a key other than the pinned one; not logged in',
    })
  })

  it("mitogen's wording of a refused host key is SSH_HOST_KEY_MISMATCH too", () => {
    const results = foldHostResults([
      {
        event: 'unreachable',
        host: 'c',
        msg: 'EOF on stream; last 100 lines received:\nHost key checking is enabled, and SSH reported an unrecognized or mismatching host key.',
      },
    ])
    assert.equal(judgeHost(results.get('c')).code, 'SSH_HOST_KEY_MISMATCH')
  })

  it('a host that does not answer is unreachable', () => {
    const results = foldHostResults([
      {
        event: 'unreachable',
        host: 'd',
        msg: 'Failed to connect to the host via ssh: ssh: connect to host 10.0.0.9 port 22: No route to host',
      },
    ])
    assert.equal(judgeHost(results.get('d')).state, 'unreachable')
  })

  it('a host that refuses the login is unreachable, and says the key is what to look at', () => {
    for (const msg of [
      'Failed to connect to the host via ssh: admin@10.0.0.9: Permission denied (publickey).',
      'SSH authentication is incorrect',
    ]) {
      const judged = judgeHost(foldHostResults([{ event: 'unreachable', host: 'f', msg }]).get('f'))
      assert.equal(judged.state, 'unreachable')
      assert.match(judged.message ?? '', /^the host refused the SSH login \(use a key of operators\.sshKeys/)
    }
    const silent = judgeHost(foldHostResults([{ event: 'unreachable', host: 'g', msg: 'No route to host' }]).get('g'))
    assert.doesNotMatch(silent.message ?? '', /refused the SSH login/)
  })

  it('the dead-man switch rollback is rolled_back with FIREWALL_CONFIRM_TIMEOUT, never failed', () => {
    const results = foldHostResults([
      {
        event: 'failed',
        host: 'e',
        role: 'firewall',
        task: 'Confirm',
        msg: 'FIREWALL_CONFIRM_TIMEOUT: no new SSH connection within 60 s; the host restored the previous rules',
      },
    ])
    const judged = judgeHost(results.get('e'))
    assert.equal(judged.state, 'rolled_back')
    assert.equal(judged.code, 'FIREWALL_CONFIRM_TIMEOUT')
    assert.match(judged.message!, /^firewall: Confirm: FIREWALL_CONFIRM_TIMEOUT/)
  })

  it('a rollback the host was unreachable for is rolled_back, not unreachable (a canary must not be handed on)', () => {
    const results = foldHostResults([
      { event: 'ok', host: 'e', role: 'firewall', task: 'Apply', changed: true },
      {
        event: 'failed',
        host: 'e',
        role: 'firewall',
        task: 'Confirm',
        msg: 'FIREWALL_CONFIRM_TIMEOUT: no new SSH connection within 60 s; the host restored the previous rules',
      },
      { event: 'unreachable', host: 'e', msg: 'Connection timed out' },
    ])
    const judged = judgeHost(results.get('e'))
    assert.deepEqual([judged.state, judged.code], ['rolled_back', 'FIREWALL_CONFIRM_TIMEOUT'])
  })

  it('a host lost after a task changed it is unreachable and lost mid-run; one never changed is not', () => {
    const lost = judgeHost(
      foldHostResults([
        { event: 'ok', host: 'h', role: 'firewall', task: 'Apply', changed: true },
        { event: 'unreachable', host: 'h', msg: 'ssh: connect to host 10.0.0.9 port 22: Connection timed out' },
      ]).get('h'),
    )
    assert.equal(lost.state, 'unreachable')
    assert.equal(lost.lostMidRun, true)
    assert.match(
      lost.message ?? '',
      /lost its SSH connection after 1 task\(s\) changed it: the change may have cut it off/,
    )
    // A task that changed nothing (set_fact runs on the controller) proves no connection was made.
    const local = judgeHost(
      foldHostResults([
        { event: 'ok', host: 'j', task: 'Pick the variables' },
        { event: 'unreachable', host: 'j', msg: 'No route to host' },
      ]).get('j'),
    )
    assert.equal(local.lostMidRun, undefined)
    const offline = judgeHost(foldHostResults([{ event: 'unreachable', host: 'i', msg: 'No route to host' }]).get('i'))
    assert.equal(offline.lostMidRun, undefined)
  })

  it('lists each managed resource once per host, in the order first reported, and keeps the fingerprint', () => {
    const results = foldHostResults([
      {
        event: 'ok',
        host: 'a',
        resources: [
          { kind: 'path', name: '/etc/fleetkit' },
          { kind: 'unit', name: 'x.service' },
        ],
      },
      {
        event: 'ok',
        host: 'a',
        resources: [
          { kind: 'path', name: '/etc/fleetkit' },
          { kind: 'package', name: 'curl' },
        ],
      },
      { event: 'skipped', host: 'a', resources: [{ kind: 'path', name: '/never' }] },
      {
        event: 'ok',
        host: 'a',
        fingerprint: { digest: 'f'.repeat(64), items: { 'path:/etc/fleetkit': '40000:755:0:0' } },
      },
      { event: 'ok', host: 'b' },
    ])
    assert.deepEqual(results.get('a')?.resources, [
      { kind: 'path', name: '/etc/fleetkit' },
      { kind: 'unit', name: 'x.service' },
      { kind: 'package', name: 'curl' },
    ])
    assert.equal(results.get('a')?.fingerprint?.digest, 'f'.repeat(64))
    assert.deepEqual(results.get('b')?.resources, [])
  })

  it("a failed task keeps the role's registered code, or is SYNC_NODE_FAILED", () => {
    assert.equal(leadingCode('DATA_VOLUME_DEVICE_MISSING: /dev/x is not a block device'), 'DATA_VOLUME_DEVICE_MISSING')
    assert.equal(leadingCode('E: Unable to locate package FOO_BAR'), null)
    const results = foldHostResults([
      { event: 'failed', host: 'f', role: 'agent', task: 'Install', msg: 'No package matching foo' },
    ])
    assert.equal(judgeHost(results.get('f')).code, 'SYNC_NODE_FAILED')
    assert.equal(judgeHost(undefined).code, 'SYNC_NODE_FAILED')
  })

  it("keeps a host's words printable: no escape sequence for the terminal, nothing the ledger cannot store", () => {
    const results = foldHostResults([
      {
        event: 'failed',
        host: 'h',
        role: 'agent',
        task: 'Install',
        msg: 'bad\u001b[2J\u001b]0;owned\u0007\u0000x\ud800\n  y',
      },
      { event: 'unreachable', host: 'u', msg: 'ssh: \u001b[31mrefused\u0000' },
    ])
    assert.equal(judgeHost(results.get('h')).message, 'agent: Install: bad x\ufffd y')
    assert.equal(judgeHost(results.get('u')).message, 'ssh: refused')
  })
})

function report(outcome: SyncReport['outcome'], nodes: Partial<SyncReport['nodes'][number]>[]): SyncReport {
  return {
    runId: 7,
    kind: 'sync',
    outcome,
    revision: null,
    planHash: 'f'.repeat(64),
    plan: {
      playbook: 'site.yml',
      tags: [],
      definitionSha256: 'a'.repeat(64),
      rolesSha256: 'b'.repeat(64),
      targets: [],
      canary: 'a-1',
    },
    canary: { declared: 'a-1', ran: 'a-1', skippedBecause: null, notes: [] },
    speed: { mitogen: false, forks: 3, description: '' },
    nodes: nodes.map((n) => ({
      node: 'x',
      phase: 'fleet',
      state: 'converged',
      code: null,
      runbook: null,
      message: null,
      tasks: { ok: 1, changed: 0, failed: 0 },
      changes: {},
      differences: [],
      ...n,
    })),
    counts: {},
    proofs: [],
    fingerprint: { off: null, unchanged: [], drifted: [], recorded: [] },
    enrolled: [],
    resumed: false,
  }
}

describe('sync outcomes and the drift table', () => {
  it('maps each outcome to its code and exit code; converged and no drift are not errors', () => {
    assert.equal(outcomeError(report('converged', [])), null)
    assert.equal(outcomeError(report('no_drift', [])), null)
    const cases: [SyncReport['outcome'], string, number][] = [
      ['canary_failed', 'SYNC_CANARY_FAILED', 20],
      ['partial', 'SYNC_PARTIAL_FAILURE', 21],
      ['unreachable', 'SYNC_NODES_UNREACHABLE', 22],
      ['drifted', 'DRIFT_DETECTED', 1],
    ]
    for (const [outcome, code, exitCode] of cases) {
      const error = outcomeError(
        report(outcome, [{ node: 'a-1', phase: 'canary', state: 'failed', code: 'SYNC_NODE_FAILED' }]),
      )!
      assert.equal(error.code, code)
      assert.equal(error.exitCode, exitCode)
      assert.ok(error.data?.report)
    }
  })

  it('a drift run that could not read a node says to run drift again, never sync --resume (which refuses it)', () => {
    for (const outcome of ['partial', 'unreachable'] as const) {
      const drift = {
        ...report(outcome, [{ node: 'a-1', state: 'failed', code: 'SSH_HOST_KEY_MISMATCH' }]),
        kind: 'drift' as const,
      }
      const actions = outcomeError(drift)!.actions
      assert.ok(!actions.some((a) => a.includes('--resume')), actions.join('\n'))
      assert.match(actions[0]!, /^fleetkit drift /)
    }
    assert.ok(
      outcomeError(report('partial', [{ node: 'a-1', state: 'failed' }]))!.actions.includes('fleetkit sync --resume 7'),
    )
  })

  it('a node that failed for want of a pinned host key is told to be seeded, not resumed; --limit syncs the rest', () => {
    const unpinned = { state: 'failed' as const, code: 'SSH_HOST_KEY_NOT_PINNED' }
    const alone = outcomeError(
      report('partial', [
        { node: 'w-1', phase: 'canary', state: 'changed' },
        { node: 'a-1', ...unpinned },
      ]),
    )!
    assert.equal(alone.code, 'SYNC_PARTIAL_FAILURE')
    assert.deepEqual(alone.actions, [
      'fleetkit seed a-1 --kind worker   (boot a-1 from it: the seed pins its host key)',
      'fleetkit sync --limit w-1   (the nodes whose hosts exist)',
      'fleetkit runbook SSH_HOST_KEY_NOT_PINNED',
      'fleetkit runbook SYNC_PARTIAL_FAILURE',
    ])
    // With another failure beside it, --resume still finishes that one.
    const mixed = outcomeError(
      report('partial', [
        { node: 'w-1', phase: 'canary', state: 'changed' },
        { node: 'a-1', ...unpinned },
        { node: 'w-2', state: 'failed', code: 'SYNC_NODE_FAILED' },
      ]),
    )!
    assert.deepEqual(mixed.actions, [
      'fleetkit seed a-1 --kind worker   (boot a-1 from it: the seed pins its host key)',
      'fleetkit sync --resume 7',
      'fleetkit runbook SSH_HOST_KEY_NOT_PINNED',
      'fleetkit runbook SYNC_PARTIAL_FAILURE',
    ])
    const other = outcomeError(report('partial', [{ node: 'w-2', state: 'failed', code: 'SYNC_NODE_FAILED' }]))!
    assert.deepEqual(other.actions, ['fleetkit sync --resume 7', 'fleetkit runbook SYNC_PARTIAL_FAILURE'])
  })

  it('lists every node: a row per drifted role, "no drift", or why it was not checked', () => {
    const lines = formatDriftTable(
      report('drifted', [
        { node: 'a-1', state: 'changed', changes: { firewall: ['Report the rules that would be applied'] } },
        { node: 'a-2', state: 'converged' },
        { node: 'a-3', state: 'unreachable', message: 'No route to host' },
      ]),
    )
    assert.match(lines[0]!, /^NODE\s+ROLE\s+DRIFT$/)
    assert.match(lines[1]!, /^a-1\s+firewall\s+1 task\(s\) would change: Report the rules that would be applied$/)
    assert.match(lines[2]!, /^a-2\s+-\s+no drift$/)
    assert.match(lines[3]!, /^a-3\s+-\s+unreachable: No route to host$/)
    assert.equal(lines[4], 'Compared with the definition file as it is on disk (not a committed revision).')
    assert.equal(
      formatDriftTable({ ...report('no_drift', []), revision: 'a'.repeat(40) }).at(-1),
      `Compared with revision ${'a'.repeat(40)}.`,
    )
  })
})

describe('sync and drift --json schemas', () => {
  it('accept a report as the result and as the data of an outcome error, and refuse an unknown node state', async () => {
    const { assertMatchesOutputSchema } = await import('../../support/cli.js')
    const { errorEnvelope } = await import('../../../src/cli/error-output.js')
    const ok = report('converged', [
      { node: 'a-1', phase: 'canary', state: 'changed', changes: { firewall: ['Apply'] } },
    ])
    assertMatchesOutputSchema('sync', { status: 0, result: ok })
    const failed = report('canary_failed', [
      {
        node: 'a-1',
        phase: 'canary',
        state: 'failed',
        code: 'DATA_VOLUME_DEVICE_MISSING',
        runbook: 'fleetkit runbook DATA_VOLUME_DEVICE_MISSING',
      },
      { node: 'a-2', state: 'not_attempted' },
    ])
    const error = outcomeError(failed)!
    const envelope = JSON.parse(JSON.stringify(errorEnvelope(error, error.exitCode)))
    assertMatchesOutputSchema('sync', envelope)
    const drift = outcomeError(report('drifted', [{ node: 'a-1', state: 'changed', changes: { firewall: ['x'] } }]))!
    assertMatchesOutputSchema('drift', JSON.parse(JSON.stringify(errorEnvelope(drift, drift.exitCode))))
    const bad = { status: 0, result: { ...ok, nodes: [{ ...ok.nodes[0], state: 'ok' }] } }
    assert.throws(() => assertMatchesOutputSchema('sync', bad))
  })
})
