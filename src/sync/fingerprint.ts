// The no-change fast path of `fleetkit sync`. After a full converge each node's managed resources
// (what the roles' tasks reported managing) are digested on the host and recorded; the next sync with
// the same inputs digests them again in one read-only call and skips the full run where nothing moved.
// A difference, new inputs, --full, --tags or a fingerprint older than a day runs the node in full.
// The probe goes over node-ssh (fingerprint-probe.ts); the fingerprint.yml playbook is kept for bench/sync.ts.
// The probe after a converge also leaves the resource list on the host: its agent reports drift against it.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'

import type { StatePool } from '../store/transaction.js'

import type { Env } from '../config/state-dir.js'
import { sha256Hex } from '../pki/fingerprint.js'
import {
  forgetNodeFingerprints,
  getNodeFingerprints,
  type ManagedResource,
  type NodeFingerprintRow,
  recordNodeFingerprint,
} from '../store/sync/node-fingerprints.js'
import type { HostFingerprint } from './host-results.js'
import { runPhase, type SpeedSettings } from './ansible-phase.js'
import { probeOverSsh } from './fingerprint-probe.js'
import type { SshTarget } from './ssh-client.js'

/** A node converges in full at least this often, whatever its fingerprint says. */
export const FINGERPRINT_MAX_AGE_MS = 24 * 60 * 60_000

export interface FingerprintContext {
  pool: StatePool
  runId: number
  attempt: number
  workDir: string
  inventoryPath: string
  speed: SpeedSettings
  env: Env
  signal?: AbortSignal
  /** fingerprintInputHash(): a recorded fingerprint counts only for the same inputs. */
  inputHash: string
  /** Each node's pinned SSH target: the probe is one node-ssh exec per host. */
  targets: ReadonlyMap<string, SshTarget>
  /** 'ansible': the fingerprint.yml playbook instead (the old way, measured by bench/sync.ts). */
  via?: 'ssh' | 'ansible'
}

/** Hosts probed at once over node-ssh. */
const PROBE_CONCURRENCY = 16

export interface FingerprintSummary {
  /** Why every node ran in full; null when the fast path was tried. */
  off: string | null
  /** Nodes skipped: inputs and fingerprint as recorded. */
  unchanged: string[]
  /** Nodes probed whose state moved since: they ran in full. */
  drifted: { node: string; differs: string[] }[]
  /** Nodes whose fingerprint this run recorded. */
  recorded: string[]
}

/**
 * What a converge was given: the plan's content (definition, roles, tags, harness vars, release CA)
 * and the rendered inventory and known hosts, with this run's folder taken out of the paths.
 */
export function fingerprintInputHash(
  contentHash: string,
  inventoryYaml: string,
  knownHosts: string,
  workDir: string,
): string {
  return sha256Hex(`${contentHash}\n${inventoryYaml.split(workDir).join('<run>')}\n${knownHosts}`)
}

/** The recorded fingerprints worth probing: same inputs, recent enough. */
export function probeCandidates(
  rows: readonly NodeFingerprintRow[],
  inputHash: string,
  now: Date,
  maxAgeMs = FINGERPRINT_MAX_AGE_MS,
): NodeFingerprintRow[] {
  return rows.filter((r) => r.inputHash === inputHash && now.getTime() - r.recordedAt.getTime() < maxAgeMs)
}

/** The item keys whose digest differs (or that one side lacks), sorted. */
export function differingItems(recorded: Record<string, string>, now: Record<string, string>): string[] {
  const keys = new Set([...Object.keys(recorded), ...Object.keys(now)])
  return [...keys].filter((k) => recorded[k] !== now[k]).sort()
}

/** The hosts' fingerprints, or nothing for a host that could not be read. */
async function probeFingerprints(
  fc: FingerprintContext,
  resources: ReadonlyMap<string, readonly ManagedResource[]>,
  label: string,
): Promise<Map<string, HostFingerprint>> {
  if (resources.size === 0) return new Map()
  if (fc.via === 'ansible') return probeWithAnsible(fc, resources, label)
  const found = new Map<string, HostFingerprint>()
  const queue = [...resources.entries()]
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const [host, managed] = next
      const target = fc.targets.get(host)
      // After a converge the probe also installs the list for the host's drift check (docs/agent.md).
      const fingerprint = target
        ? await probeOverSsh(target, managed, fc.env, { install: label === 'after' })
        : undefined
      if (fingerprint) found.set(host, fingerprint)
    }
  }
  await Promise.all(Array.from({ length: Math.min(PROBE_CONCURRENCY, queue.length) }, worker))
  return found
}

/** One read-only ansible-playbook over the hosts (the way before node-ssh). */
async function probeWithAnsible(
  fc: FingerprintContext,
  resources: ReadonlyMap<string, readonly ManagedResource[]>,
  label: string,
): Promise<Map<string, HostFingerprint>> {
  const hosts = [...resources.keys()]
  const varsFile = join(fc.workDir, `fingerprint-${label}-${fc.attempt}.json`)
  await writeFile(varsFile, JSON.stringify({ fleetkit_fingerprint_resources: Object.fromEntries(resources) }), {
    mode: 0o600,
  })
  const phase = await runPhase({
    workDir: fc.workDir,
    inventoryPath: fc.inventoryPath,
    playbook: 'fingerprint.yml',
    hosts,
    label: `fingerprint-${label}-${fc.attempt}`,
    check: false,
    tags: [],
    extraVarsFile: varsFile,
    speed: fc.speed,
    env: fc.env,
    signal: fc.signal,
  })
  const found = new Map<string, HostFingerprint>()
  for (const h of hosts) {
    const result = phase.hosts.get(h)
    if (result?.fingerprint && !result.failure && /^[0-9a-f]{64}$/.test(result.fingerprint.digest))
      found.set(h, result.fingerprint)
  }
  return found
}

/** Probes the candidates' recorded fingerprints; returns the unchanged nodes and what moved on the others. */
export async function findUnchanged(
  fc: FingerprintContext,
  candidates: readonly string[],
  now: Date,
): Promise<{ unchanged: Map<string, NodeFingerprintRow>; drifted: FingerprintSummary['drifted'] }> {
  const rows = probeCandidates(await getNodeFingerprints(fc.pool, candidates), fc.inputHash, now)
  const probed = await probeFingerprints(fc, new Map(rows.map((r) => [r.nodeId, r.resources])), 'before')
  const unchanged = new Map<string, NodeFingerprintRow>()
  const drifted: FingerprintSummary['drifted'] = []
  for (const row of rows) {
    const current = probed.get(row.nodeId)
    if (current?.digest === row.digest) unchanged.set(row.nodeId, row)
    else
      drifted.push({
        node: row.nodeId,
        differs: current ? differingItems(row.items, current.items) : [NOT_READ],
      })
  }
  return { unchanged, drifted }
}

/** What `differs` holds for a node whose probe got no answer (refused, silent, or not logged in). */
export const NOT_READ = '(not read: the probe got no answer)'

/** After the full run: record the converged nodes' fingerprints (as of `now`), forget the others'. Returns the recorded nodes. */
export async function recordFingerprints(
  fc: FingerprintContext,
  converged: ReadonlyMap<string, readonly ManagedResource[]>,
  notConverged: readonly string[],
  now: Date,
): Promise<string[]> {
  await forgetNodeFingerprints(fc.pool, [...notConverged, ...converged.keys()])
  const probed = await probeFingerprints(fc, converged, 'after')
  for (const [nodeId, fingerprint] of probed) {
    await recordNodeFingerprint(fc.pool, {
      nodeId,
      inputHash: fc.inputHash,
      digest: fingerprint.digest,
      items: fingerprint.items,
      resources: [...converged.get(nodeId)!],
      runId: fc.runId,
      recordedAt: now,
    })
  }
  return [...probed.keys()].sort()
}
