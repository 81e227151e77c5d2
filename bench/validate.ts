// Benchmark: load and validate a generated 5,000-node, 20-pool definition (median of several
// runs in one process), and the CLI's cold start for `--help` and `validate` (median of several
// interleaved rounds) beside a bare oclif command's start, printed as ratios: `--help` against the
// bare command, validate against its 500 ms goal, and with --baseline DIR (another built checkout,
// e.g. main's) after against before.
// Run: npx tsx bench/validate.ts [--baseline DIR] [--write-docs]   (builds dist/ and the oclif
// manifest first when they are missing). --write-docs also rewrites the table in docs/performance.md.
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

import { dump } from 'js-yaml'

import { validateDefinitionText } from '../src/definition/load.js'
import { packagePath } from '../src/package-root.js'
import { createBareOclifCli } from './validate/bare-oclif.js'

const NODES = 5000
const POOLS = 20
const RUNS = 7
const COLD_RUNS = 9

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

interface ColdStart {
  label: string
  args: string[]
  times: number[]
  status: number | null
}

/**
 * Each process started COLD_RUNS times, round-robin (the order reversed every other round), so a
 * change in a shared machine's load weighs on every figure alike; the medians are compared.
 */
function coldStarts(runs: Array<Pick<ColdStart, 'label' | 'args'>>): Map<string, ColdStart> {
  const all = runs.map((run): ColdStart => ({ ...run, times: [], status: null }))
  for (let round = 0; round < COLD_RUNS; round++) {
    for (const run of round % 2 === 0 ? all : [...all].reverse()) {
      const start = performance.now()
      const result = spawnSync(process.execPath, run.args, { cwd: packagePath(), stdio: 'ignore' })
      run.times.push(performance.now() - start)
      run.status = result.status
    }
  }
  return new Map(all.map((run) => [run.label, run]))
}

/** The measured table of docs/performance.md: from its "Measured (" line to the blank line after the table. */
export function replaceDocsTable(doc: string, table: string[][], measuredLine: string): string {
  const start = doc.indexOf('| load + validate 5,000 nodes')
  const end = doc.indexOf('\n\n', start)
  const heading = doc.lastIndexOf('Measured (', start)
  if (start < 0 || end < 0 || heading < 0) throw new Error('docs/performance.md has no validate table to rewrite')
  const [header = [], ...rows] = table
  const lines = [header, header.map(() => '---'), ...rows].map((cells) => `| ${cells.join(' | ')} |`)
  return `${doc.slice(0, heading)}${measuredLine}\n\n${lines.join('\n')}${doc.slice(end)}`
}

const GOAL_VALIDATE_MS = 500
const GOAL_HELP_RATIO = 1.2

function main(argv: string[]): void {
  const writeDocs = argv.includes('--write-docs')
  // --baseline DIR: another checkout of fleetkit (built), measured in the same rounds: before and after.
  const baselineAt = argv.indexOf('--baseline')
  const baseline = baselineAt < 0 ? undefined : argv[baselineAt + 1]
  if (baselineAt >= 0 && (baseline === undefined || !existsSync(join(baseline, 'bin', 'run.js'))))
    throw new Error('--baseline needs the directory of a built fleetkit checkout (its bin/run.js and dist/)')
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
    const bare = createBareOclifCli(join(dir, 'bare-oclif'))
    const fleetkitRuns = (label: string, root: string) => [
      { label: `${label} --help`, args: [join(root, 'bin', 'run.js'), '--help'] },
      { label: `${label} validate`, args: [join(root, 'bin', 'run.js'), 'validate', '--definition', file] },
      {
        label: `${label} example`,
        args: [join(root, 'bin', 'run.js'), 'validate', '--definition', packagePath('examples', 'fleet.yaml')],
      },
    ]
    const loadBefore = loadavg()[0]!
    const cold = coldStarts([
      { label: 'node', args: ['-e', '0'] },
      { label: 'bare', args: [bare, 'hello'] },
      ...fleetkitRuns('after', packagePath()),
      ...(baseline === undefined ? [] : fleetkitRuns('before', baseline)),
    ])
    const loadAfter = loadavg()[0]!
    for (const run of cold.values()) {
      if (run.status !== 0) throw new Error(`${run.label} (node ${run.args.join(' ')}) exited ${run.status}`)
    }
    const at = (label: string) => median(cold.get(label)!.times)
    const ms = (n: number) => `${n.toFixed(0)} ms`
    const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`
    const load = `load average ${loadBefore.toFixed(2)} before the cold starts, ${loadAfter.toFixed(2)} after`
    console.log(`definition: ${NODES} nodes in ${POOLS} pools, ${(text.length / 1024 / 1024).toFixed(1)} MiB of YAML`)
    console.log(
      `load + validate (in process, median of ${RUNS}): ${ms(validation.median)} (first run, cold JIT: ${ms(validation.first)})`,
    )
    console.log(`cold starts, median of ${COLD_RUNS} interleaved rounds (${load}):`)
    console.log(`  node -e 0: ${ms(at('node'))}`)
    console.log(`  a bare oclif command (one command, the same @oclif/core): ${ms(at('bare'))}`)
    console.log(
      `  fleetkit --help: ${ms(at('after --help'))} = ${ratio(at('after --help'), at('bare'))} the bare oclif command (goal: at most ${GOAL_HELP_RATIO}x)`,
    )
    console.log(
      `  fleetkit validate, 5,000 nodes: ${ms(at('after validate'))} = ${ratio(at('after validate'), GOAL_VALIDATE_MS)} the ${GOAL_VALIDATE_MS} ms goal`,
    )
    console.log(`  fleetkit validate examples/fleet.yaml: ${ms(at('after example'))}`)
    if (baseline !== undefined) {
      console.log(`  before (${baseline}), same rounds:`)
      for (const what of ['--help', 'validate', 'example'])
        console.log(
          `    ${what}: ${ms(at(`before ${what}`))} before, ${ms(at(`after ${what}`))} after = ${ratio(at(`after ${what}`), at(`before ${what}`))} of before`,
        )
    }
    if (!writeDocs) return
    const docs = packagePath('docs', 'performance.md')
    const measured = `Measured (${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, Node ${process.version}, ${availableParallelism()} cores, ${load})`
    // A figure of both checkouts: before, after (each with its note, e.g. its ratio to the bare command), after / before.
    const figure = (what: string, note: (side: 'before' | 'after') => string = () => '') =>
      baseline === undefined
        ? [`${ms(at(`after ${what}`))}${note('after')}`]
        : [
            `${ms(at(`before ${what}`))}${note('before')}`,
            `${ms(at(`after ${what}`))}${note('after')}`,
            ratio(at(`after ${what}`), at(`before ${what}`)),
          ]
    // A figure measured for this checkout only: the after column, no before and no ratio.
    const afterOnly = (value: string) => (baseline === undefined ? [value] : ['', value, ''])
    writeFileSync(
      docs,
      replaceDocsTable(
        readFileSync(docs, 'utf8'),
        [
          baseline === undefined ? ['what', 'time'] : ['what', 'before', 'after', 'after / before'],
          [
            `load + validate 5,000 nodes, in process (median of ${RUNS})`,
            ...afterOnly(`${ms(validation.median)} (first run ${ms(validation.first)})`),
          ],
          ['`node -e 0` (bare Node, for scale)', ...afterOnly(ms(at('node')))],
          ['a bare oclif command, cold (one command, the same @oclif/core)', ...afterOnly(ms(at('bare')))],
          [
            '`fleetkit --help`, cold',
            ...figure('--help', (side) => ` (${ratio(at(`${side} --help`), at('bare'))} the bare oclif command)`),
          ],
          [
            '`fleetkit validate` on the 5,000-node file, cold',
            ...figure(
              'validate',
              (side) => ` (${ratio(at(`${side} validate`), GOAL_VALIDATE_MS)} the ${GOAL_VALIDATE_MS} ms goal)`,
            ),
          ],
          ['`fleetkit validate examples/fleet.yaml`, cold', ...figure('example')],
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
