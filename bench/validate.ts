// Benchmark: load and validate a generated 5,000-node, 20-pool definition (median of several
// runs in one process), and the CLI's cold start for `--help` and `validate` (median of several).
// Run: npx tsx bench/validate.ts   (builds dist/ and the oclif manifest first when they are missing)
// It prints its figures; with --write-docs it also rewrites the table in docs/performance.md.
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

import { dump } from 'js-yaml'

import { validateDefinitionText } from '../src/definition/load.js'
import { packagePath } from '../src/package-root.js'

const NODES = 5000
const POOLS = 20
const RUNS = 7
const COLD_RUNS = 5

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

function hostKey(i: number): string {
  const body = Buffer.concat([
    Buffer.from([0, 0, 0, 11]),
    Buffer.from('ssh-ed25519'),
    Buffer.from([0, 0, 0, 32]),
    Buffer.alloc(32, i % 251),
  ])
  return `ssh-ed25519 ${body.toString('base64')}`
}

export function generateDefinition(nodes = NODES, pools = POOLS): string {
  const perPool = Math.ceil(nodes / pools)
  const definition = {
    version: 1,
    fleet: 'bench',
    gateway: { url: 'https://gateway.fleet.internal:8443', enrollUrl: 'https://enroll.fleet.internal:8444' },
    release: {
      url: 'https://releases.fleet.internal/agent',
      publicKey: Buffer.alloc(32, 9).toString('base64'),
      version: '1.2.3',
    },
    // Apart from the nodes' 10.1-10.2 addresses and the pools' 10.100-10.119 container ranges.
    operators: { cidrs: ['192.168.0.0/16'], sshKeys: [hostKey(0) + ' ops@fleet.internal'] },
    providers: { hetzner: { tokenEnv: 'HETZNER_API_TOKEN' } },
    pools: Object.fromEntries(
      Array.from({ length: pools }, (_, p) => [
        `pool-${p}`,
        {
          role: p % 3 === 0 ? 'build' : p % 3 === 1 ? 'application' : 'database',
          ingress: p % 3 === 1,
          capacityBudget: { cpu: perPool * 4, memoryMiB: perPool * 8192, diskGiB: perPool * 80 },
          serverType: 'cx32',
          image: 'ubuntu-24.04',
          regions: ['fsn1', 'nbg1'],
          dockerNetworkPolicy: {
            base: `10.${100 + p}.0.0/16`,
            prefix: 24,
            maxRunners: 8,
            networksPerRunner: 2,
            reserveSubnets: 4,
            defaultBridgeCidr: '172.31.0.1/24',
          },
        },
      ]),
    ),
    nodes: Array.from({ length: nodes }, (_, i) => ({
      id: `node-${i}`,
      pool: `pool-${i % pools}`,
      state: i % 10 === 0 ? 'drained' : i % 25 === 0 ? 'disabled' : 'active',
      ssh: {
        host: `10.${1 + Math.floor(i / 65536)}.${Math.floor(i / 256) % 256}.${i % 256}`,
        user: 'fleetkit',
        port: 22,
      },
      hostKey: hostKey(i),
      // Not under fleetkit's own /var/lib/fleetkit (DATA_VOLUME_MOUNT_RESERVED).
      dataVolume: { device: '/dev/sdb', filesystem: 'xfs', mountPoint: '/srv/data' },
      // The pools' cx32 less the host reserve of policy/host-policy.yaml: all a node may offer.
      maxCapacity: { cpu: 3.5, memoryMiB: 7168, diskGiB: 60 },
    })),
    canary: 'node-1',
  }
  return dump(definition, { lineWidth: -1 })
}

function timeValidation(text: string, name: string): { first: number; median: number; errors: string[] } {
  const times: number[] = []
  let errors: string[] = []
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now()
    errors = validateDefinitionText(text, name).errors.map((e) => `${e.code} ${e.path}: ${e.message}`)
    times.push(performance.now() - start)
  }
  return { first: times[0]!, median: median(times), errors }
}

function ensureBuilt(): void {
  const manifest = packagePath('oclif.manifest.json')
  const built =
    existsSync(packagePath('dist', 'commands', 'validate.js')) &&
    existsSync(manifest) &&
    readFileSync(manifest, 'utf8').includes('"validate"')
  if (built) return
  console.log('building dist/ and the oclif manifest (npx tsc -p tsconfig.build.json && npx oclif manifest) ...')
  // tsc emits even when other areas have type errors; the manifest needs the emitted commands.
  spawnSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: packagePath(), stdio: 'ignore' })
  execFileSync('npx', ['oclif', 'manifest'], { cwd: packagePath(), stdio: 'ignore' })
}

function coldStart(args: string[]): { median: number; status: number | null } {
  const times: number[] = []
  let status: number | null = null
  for (let i = 0; i < COLD_RUNS; i++) {
    const start = performance.now()
    const result = spawnSync('node', args, { cwd: packagePath(), stdio: 'ignore' })
    times.push(performance.now() - start)
    status = result.status
  }
  return { median: median(times), status }
}

/** The measured table of docs/performance.md, between its header row and the next blank line. */
export function replaceDocsTable(doc: string, rows: Array<[string, string]>, measuredLine: string): string {
  const start = doc.indexOf('| load + validate 5,000 nodes')
  const end = doc.indexOf('\n\n', start)
  const heading = doc.lastIndexOf('Measured (', start)
  if (start < 0 || end < 0 || heading < 0) throw new Error('docs/performance.md has no validate table to rewrite')
  const headingEnd = doc.indexOf('\n', heading)
  const table = rows.map(([what, time]) => `| ${what} | ${time} |`).join('\n')
  return doc.slice(0, heading) + measuredLine + doc.slice(headingEnd, start) + table + doc.slice(end)
}

function main(argv: string[]): void {
  const writeDocs = argv.includes('--write-docs')
  const dir = mkdtempSync(join(tmpdir(), 'fleetkit-bench-'))
  try {
    const text = generateDefinition()
    const file = join(dir, 'fleet.yaml')
    writeFileSync(file, text)
    const validation = timeValidation(text, file)
    if (validation.errors.length !== 0) {
      throw new Error(
        `the generated definition has ${validation.errors.length} errors; the first: ${validation.errors.slice(0, 3).join('; ')}`,
      )
    }
    ensureBuilt()
    const bare = coldStart(['-e', '0'])
    const help = coldStart([packagePath('bin', 'run.js'), '--help'])
    const validate = coldStart([packagePath('bin', 'run.js'), 'validate', '--definition', file])
    const example = coldStart([
      packagePath('bin', 'run.js'),
      'validate',
      '--definition',
      packagePath('examples', 'fleet.yaml'),
    ])
    if (validate.status !== 0 || example.status !== 0)
      throw new Error(`fleetkit validate exited ${validate.status} (5,000 nodes) and ${example.status} (example)`)
    const ms = (n: number) => `${n.toFixed(0)} ms`
    console.log(`definition: ${NODES} nodes in ${POOLS} pools, ${(text.length / 1024 / 1024).toFixed(1)} MiB of YAML`)
    console.log(
      `load + validate (in process, median of ${RUNS}): ${ms(validation.median)} (first run, cold JIT: ${ms(validation.first)})`,
    )
    console.log(
      `cold start, median of ${COLD_RUNS}: node -e 0 ${ms(bare.median)}; fleetkit --help ${ms(help.median)}; fleetkit validate (5,000 nodes) ${ms(validate.median)}; fleetkit validate examples/fleet.yaml ${ms(example.median)}`,
    )
    if (!writeDocs) return
    const docs = packagePath('docs', 'performance.md')
    const measured = `Measured (${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${availableParallelism()} cores, load average about ${loadavg()[0]!.toFixed(0)})`
    writeFileSync(
      docs,
      replaceDocsTable(
        readFileSync(docs, 'utf8'),
        [
          [
            `load + validate 5,000 nodes, in process (median of ${RUNS})`,
            `${ms(validation.median)} (first run ${ms(validation.first)})`,
          ],
          ['`node -e 0` (bare Node, for scale)', ms(bare.median)],
          ['`fleetkit --help`, cold', ms(help.median)],
          ['`fleetkit validate` on the 5,000-node file, cold', ms(validate.median)],
          ['`fleetkit validate examples/fleet.yaml`, cold', ms(example.median)],
        ],
        measured,
      ),
    )
    console.log(`wrote ${docs}`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

// Run only as a script, so the generator can be imported.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href)
  main(process.argv.slice(2))
