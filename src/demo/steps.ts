// The demo's steps in order, each ending with the fleet and its new events: set-up (workspace,
// database, CA, release, gateway, stub), provisioning and enrollment, agents, checks, admit, drain,
// a silenced node of the stateful database pool lost (its allocation stranded for a person to decide),
// and a CA rotation while the agents keep working.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'

import { FleetkitError } from '../checks/fleetkit-error.js'
import { systemClock } from '../config/clock.js'
import { loadHostPolicy } from '../definition/host-policy.js'
import { reserve } from '../lifecycle/node/allocations.js'
import { rotateCa } from '../lifecycle/ca/ca-rotation.js'
import { admitNode } from '../lifecycle/node/node-admit.js'
import { runNodeCheck } from '../lifecycle/node/node-check.js'
import { drainNode, undrainNode } from '../lifecycle/node/node-drain.js'
import { readSeedFiles } from '../lifecycle/seed/seed-files.js'
import { initPki } from '../pki/init-pki.js'
import { startHetznerStub } from '../provider/hetzner-stub.js'
import { providerClient } from '../provider/provider-client.js'
import { openDatabase } from '../store/database.js'
import { livePostmasterPid } from '../store/embedded/server.js'
import { getNode } from '../store/nodes/nodes.js'
import { bootNode, nodeSandbox, provision, seedScriptOf, startAgent, type NodeSandbox } from './demo-node.js'
import { writeDemoFleet } from './fleet.js'
import { DEMO_SWEEP, startDemoGateway } from './gateway-process.js'
import { writeStubCommands } from './machine.js'
import { assertPrerequisites } from './prerequisites.js'
import { buildDemoRelease, RELEASE_PATH } from './release.js'
import { startReleaseMirror } from './release-mirror.js'
import type { DemoOptions, DemoResult, Running } from './types.js'
import { waitUntil } from './waits.js'
import { cleanStaleWorkspaces, createWorkspace } from './workspace.js'

export const DEMO_STEPS = 11
const ACTOR = 'fleetkit-demo'

export async function demoSteps(options: DemoOptions, running: Running): Promise<DemoResult> {
  const { printer: out, signal } = options
  const check = () => {
    if (signal.aborted) throw signal.reason
  }

  out.step('A private workspace, the embedded PostgreSQL, a CA and a release signing key')
  await assertPrerequisites()
  const stale = await cleanStaleWorkspaces()
  if (stale.length > 0) out.line(`removed ${stale.length} demo directory(ies) a killed run left: ${stale.join(', ')}`)
  const ws = await createWorkspace()
  running.workspace = ws
  out.line(`workspace ${ws.dir} (removed at the end)`)
  const db = await openDatabase({ stateDir: ws.stateDir, databaseUrl: '' })
  running.db = db
  const postmaster = await livePostmasterPid(ws.stateDir)
  if (postmaster) await ws.recordPid(postmaster)
  out.line(`embedded PostgreSQL ${db.embedded?.port ? `on 127.0.0.1:${db.embedded.port}` : ''} in ${ws.stateDir}`)
  check()
  const ca = await initPki({ pkiDir: ws.pkiDir, now: systemClock.now() })
  out.line(
    `$ fleetkit ca init   -> CA ${ca.caFingerprintSha256.slice(0, 16)}…, server names ${ca.serverNames.join(', ')}`,
  )
  const mirrorPki = await initPki({
    pkiDir: join(ws.dir, 'mirror-pki'),
    serverNames: ['127.0.0.1'],
    now: systemClock.now(),
  })

  out.step('Pack and sign an agent release; serve it from a loopback mirror')
  const release = await buildDemoRelease(join(ws.dir, 'release'))
  out.line(`$ fleetkit release pack --version ${release.version}   -> ${release.archives.join(', ')}`)
  out.line(`$ fleetkit release sign   -> SHA256SUMS.sig, public key ${release.publicKey}`)
  running.mirror = await startReleaseMirror({
    root: release.mirrorRoot,
    keyPem: await readFile(join(mirrorPki.pkiDir, 'server.key'), 'utf8'),
    certPem: await readFile(join(mirrorPki.pkiDir, 'server.pem'), 'utf8'),
  })
  out.line(`mirror ${running.mirror.url}/${RELEASE_PATH}/${release.version}/ (its own CA: release.caFile)`)
  check()

  out.step('Start the gateway on loopback and the Hetzner Cloud API stub')
  const gateway = await startDemoGateway(ws, signal)
  running.gateway = gateway
  out.line(
    `$ fleetkit gateway serve   -> enroll ${gateway.enrollUrl}, agents (mTLS) ${gateway.agentUrl}, operator ${gateway.operatorUrl}`,
  )
  out.line(
    `sweep: unhealthy after ${DEMO_SWEEP.unhealthyAfterSeconds} s silent, lost after ${DEMO_SWEEP.lostAfterSeconds} s (FLEETKIT_NODE_UNHEALTHY_AFTER, FLEETKIT_NODE_LOST_AFTER)`,
  )
  const stub = await startHetznerStub({ actionDurationMs: 500 })
  running.stub = stub
  out.line(`$ fleetkit provider stub   -> ${stub.url}`)
  const fleet = await writeDemoFleet({
    dir: ws.dir,
    gateway: { url: gateway.agentUrl, enrollUrl: gateway.enrollUrl },
    release: { url: `${running.mirror.url}/${RELEASE_PATH}`, publicKey: release.publicKey, version: release.version },
    releaseCaPem: await readFile(join(mirrorPki.pkiDir, 'ca.pem'), 'utf8'),
  })
  out.line(
    `$ fleetkit validate --definition ${fleet.path}   -> ${fleet.nodes.length} nodes, one per pool: ${fleet.nodes.map((n) => `${n.id} (${n.pool})`).join(', ')}`,
  )
  check()

  out.step('Provision a node per pool through the stub; each server boots its seed and the real agent enrolls')
  const client = providerClient(db.pool, fleet.definition, { env: { HETZNER_API_TOKEN: stub.token }, apiUrl: stub.url })
  const keys = fleet.definition.operators.sshKeys
  for (const [i, name] of (fleet.definition.providers?.hetzner?.sshKeys ?? []).entries())
    await client.createSshKey({ name, public_key: keys[i % keys.length]! })
  const context = {
    pool: db.pool,
    definition: fleet.definition,
    files: await readSeedFiles('agent', { FLEETKIT_PKI_DIR: ws.pkiDir }, fleet.definition, ws.dir),
    client,
    policy: loadHostPolicy(),
  }
  const binDir = join(ws.dir, 'bin')
  const stubs = await writeStubCommands(binDir)
  out.line(`machine stubs on PATH (logged, never run): ${stubs.join(', ')}`)
  const sandboxes = new Map<string, NodeSandbox>()
  const ids = fleet.nodes.map((n) => n.id)
  // The nodes are provisioned at once, as three operators' commands would be; their lines print in order.
  const provisioned = await Promise.all(
    ids.map(async (id) => {
      const requested = await provision(context, id, false)
      check()
      const sandbox = await nodeSandbox(ws, id)
      sandboxes.set(id, sandbox)
      await bootNode(ws, sandbox, seedScriptOf(stub, id), binDir, signal)
      const enrolled = await provision(context, id, true)
      return `$ fleetkit node provision ${id}   -> server ${requested.serverId} (${requested.serverType} in ${requested.region}); its seed ran in ${sandbox.root}: release verified, agent installed, ${enrolled.state}`
    }),
  )
  for (const line of provisioned) out.line(line)
  await out.fleet(db.pool)
  check()

  out.step('Start each agent (the unit the seed enabled): heartbeats with host facts')
  for (const id of ids) running.agents.set(id, await startAgent(ws, sandboxes.get(id)!, binDir))
  const agents = [...running.agents.values()]
  for (const id of ids)
    await waitUntil(
      `a heartbeat with host facts from ${id}`,
      async () => (await getNode(db.pool, id))?.hostAgentVersion,
      {
        signal,
        timeoutMs: 60_000,
        watch: agents,
      },
    )
  out.line(`${ids.length} agents heartbeat every second over mTLS`)
  await out.fleet(db.pool)

  out.step('Run the host checks: each agent leases a `checks` job, runs it and reports')
  const checked = await Promise.all(
    ids.map((id) =>
      runNodeCheck({ pool: db.pool, nodeId: id, timeoutSeconds: 60, clock: systemClock, signal, pollMs: 200 }),
    ),
  )
  const checks = checked.map((r) => {
    out.line(
      `$ fleetkit node check ${r.nodeId}   -> job ${r.jobId.slice(0, 8)}… leased and ${r.status} (attempt ${r.attempts}):`,
    )
    out.line(`    ${r.checks.map((c) => `${c.id} ${c.status}`).join(', ')}`)
    return { nodeId: r.nodeId, passed: r.checks.filter((c) => c.status === 'pass').length, total: r.checks.length }
  })
  check()

  out.step('Admit them (schedulable) and reserve capacity on one')
  // A check that warned (the demo's machines have no data volume) blocks admit unless accepted by name.
  const warnedOf = (id: string) =>
    checked
      .find((r) => r.nodeId === id)
      ?.checks.filter((c) => c.status === 'warn')
      .map((c) => c.id) ?? []
  const acceptFlags = (id: string) =>
    warnedOf(id)
      .map((w) => ` --accept-warn ${w}`)
      .join('')
  for (const node of fleet.nodes) {
    const cap = node.maxCapacity
    const admitted = await admitNode({
      pool: db.pool,
      nodeId: node.id,
      actor: ACTOR,
      acceptWarn: warnedOf(node.id),
      ...(cap ? { capacity: { cpu: cap.cpu, memoryMib: cap.memoryMiB, diskGib: cap.diskGiB } } : {}),
    })
    out.line(`$ fleetkit node admit ${node.id}${acceptFlags(node.id)}   -> ${admitted.message}`)
  }
  const drained = ids[0]!
  const silenced = ids[ids.length - 1]!
  const allocation = await reserve(db.pool, {
    nodeId: silenced,
    owner: 'ci-runner-demo',
    cpu: 1,
    memoryMib: 1024,
    diskGib: 10,
    actor: ACTOR,
  })
  out.line(
    `$ fleetkit alloc reserve --node ${silenced} --owner ci-runner-demo --cpu 1 --memory 1024 --disk 10   -> ${allocation.id}`,
  )
  await out.fleet(db.pool)
  check()

  out.step(`Drain ${drained} and bring it back`)
  out.line(
    `$ fleetkit node drain ${drained}   -> ${(await drainNode({ pool: db.pool, nodeId: drained, actor: ACTOR, clock: systemClock })).message}`,
  )
  out.line(
    `$ fleetkit node undrain ${drained}   -> ${(await undrainNode({ pool: db.pool, nodeId: drained, actor: ACTOR })).message}`,
  )
  out.line(
    `$ fleetkit node admit ${drained}${acceptFlags(drained)}   -> ${(await admitNode({ pool: db.pool, nodeId: drained, actor: ACTOR, acceptWarn: warnedOf(drained) })).message}`,
  )
  await out.fleet(db.pool)
  check()

  out.step(`Silence ${silenced} (its agent is frozen) and rotate the CA while the other agents keep working`)
  running.agents.get(silenced)!.freeze()
  const silencedAt = Date.now()
  out.line(`${silenced}'s agent stopped (SIGSTOP): no more heartbeats; the gateway's sweep will notice`)
  const live = ids.filter((id) => id !== silenced)
  const liveAgents = live.map((id) => running.agents.get(id)!)
  const begun = await rotateCa({ pool: db.pool, phase: 'begin', pkiDir: ws.pkiDir, clock: systemClock })
  out.line(
    `$ fleetkit ca rotate --begin   -> new CA ${begun.rotation.newCaSha256?.slice(0, 16)}… trusted beside ${begun.rotation.oldCaSha256?.slice(0, 16)}…`,
  )
  await waitUntil(
    `${live.join(', ')} to renew onto the new CA`,
    async () => {
      const status = await rotateCa({ pool: db.pool, phase: 'status', pkiDir: ws.pkiDir, clock: systemClock })
      const blocking = status.progress?.blocking.map((n) => n.nodeId) ?? []
      return live.every((id) => !blocking.includes(id)) ? status : undefined
    },
    { signal, timeoutMs: 60_000, watch: liveAgents },
  )
  out.line(`$ fleetkit ca rotate --status   -> ${live.join(', ')} renewed onto the new CA; ${silenced} cannot (silent)`)
  await out.fleet(db.pool)

  const stateful = fleet.definition.pools[fleet.nodes.find((n) => n.id === silenced)!.pool]?.stateful === true
  out.step(
    `Wait for the sweep: ${silenced} unhealthy, then lost; ${stateful ? 'its pool is stateful, so its allocation is stranded for a person to decide, not released' : 'its capacity is reclaimed'}`,
  )
  const lostNode = await waitUntil(
    `${silenced} to be lost (${DEMO_SWEEP.lostAfterSeconds} s after its last heartbeat)`,
    async () => {
      const node = await getNode(db.pool, silenced)
      return node?.status === 'lost' ? node : undefined
    },
    {
      signal,
      timeoutMs: (DEMO_SWEEP.lostAfterSeconds + 60) * 1000,
      watch: [gateway.process, ...liveAgents],
      intervalMs: 500,
    },
  )
  out.line(`${silenced} lost ${Math.round((Date.now() - silencedAt) / 1000)} s after it was silenced`)
  const list = await out.fleet(db.pool)
  const lostSummary = list.nodes.find((n) => n.id === silenced)?.lost
  if (lostSummary?.stateful && lostSummary.strandedAllocations > 0)
    out.line(
      `a person decides: $ fleetkit alloc release --stranded ${silenced} --yes   (gives up what it held), or ${silenced} heartbeats again and its allocation resumes`,
    )
  check()

  out.step('Complete the CA rotation; the agents keep heartbeating on their new certificates')
  const completed = await rotateCa({ pool: db.pool, phase: 'complete', pkiDir: ws.pkiDir, clock: systemClock })
  out.line(
    `$ fleetkit ca rotate --complete   -> ${completed.revoked} old-CA certificate(s) revoked; only ${completed.rotation.newCaSha256?.slice(0, 16)}… is trusted`,
  )
  const after = new Date()
  for (const id of live)
    await waitUntil(
      `a heartbeat from ${id} after the rotation completed`,
      async () => ((await getNode(db.pool, id))?.lastSeenAt ?? new Date(0)) > after,
      { signal, timeoutMs: 60_000, watch: liveAgents },
    )
  out.line(`${live.join(', ')} heartbeat after the old CA is gone`)
  const final = await out.fleet(db.pool)

  if (options.keep)
    await options.keep({
      dir: ws.dir,
      stateDir: ws.stateDir,
      pkiDir: ws.pkiDir,
      operatorUrl: gateway.operatorUrl,
      definition: fleet.path,
    })

  if (!lostNode || !begun.rotation.oldCaSha256 || !completed.rotation.newCaSha256)
    throw new FleetkitError('DEMO_STEP_FAILED', 'the demo ended without a lost node or a completed rotation', {
      actions: ['fleetkit demo'],
      data: { step: 'summary' },
    })
  return {
    steps: [...out.steps],
    staleRemoved: stale.length,
    nodes: final.nodes.map((n) => ({
      id: n.id,
      pool: n.pool,
      status: n.status,
      schedulable: n.schedulable,
      agentVersion: n.agentVersion,
    })),
    checks,
    drained,
    lost: {
      nodeId: silenced,
      releasedAllocations: lostSummary?.releasedAllocations ?? 0,
      strandedAllocations: lostSummary?.strandedAllocations ?? 0,
      fencedJobs: lostSummary?.fencedJobs ?? 0,
    },
    caRotation: {
      oldCaSha256: begun.rotation.oldCaSha256,
      newCaSha256: completed.rotation.newCaSha256,
      revoked: completed.revoked,
    },
    kept: Boolean(options.keep),
    cleanedUp: false,
  }
}
