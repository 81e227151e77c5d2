// The embedded server's first start: interrupted (a real `fleetkit db migrate` gets SIGTERM, SIGINT or
// SIGKILL while initdb runs: nothing half-made stays, the next run succeeds) and shown on a terminal.
import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { packagePath } from '../../../src/package-root.js'
import { openDatabase } from '../../../src/store/database.js'
import { embeddedServerPaths } from '../../../src/store/embedded/paths.js'
import { stopEmbeddedServer } from '../../../src/store/embedded/server.js'
import { loadMigrations } from '../../../src/store/migrate.js'
import { fleetkitEntry, runFleetkit } from '../../support/cli.js'
import { eventually } from '../../support/eventually.js'
import { overlayEnv, runProcessOk, startProcess } from '../../support/process.js'

/** PIDs whose command line mentions `text` (initdb-child.mjs, initdb and its bootstrap backend name the directory). */
function processesMentioning(text: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(text)) pids.push(Number(entry))
    } catch {
      // ended while we looked
    }
  }
  return pids
}

function initDirs(root: string): string[] {
  return existsSync(root) ? readdirSync(root).filter((name) => name.startsWith('data.init-')) : []
}

function passwordFiles(tmp: string): string[] {
  return existsSync(tmp) ? readdirSync(tmp).filter((name) => name.startsWith('pg-password-')) : []
}

/** `fleetkit db migrate` from source, stopped with `signal` once initdb runs on its private directory. */
async function interruptFirstStart(
  stateDir: string,
  signal: NodeJS.Signals,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  const paths = embeddedServerPaths(stateDir)
  const migrate = startProcess(process.execPath, [fleetkitEntry(), 'db', 'migrate'], {
    cwd: packagePath(),
    env: overlayEnv({ DATABASE_URL: '', FLEETKIT_STATE_DIR: stateDir }),
  })
  try {
    // initdb itself (not just its wrapper) is writing into <root>/data.init-*.
    await eventually(
      'initdb to run',
      () => processesMentioning(`${paths.dataDir}.init-`).length >= 2 && initDirs(paths.root).length > 0,
      { timeoutMs: 60_000, intervalMs: 20 },
    )
    // How it ends on `signal` is the test's subject: no SIGKILL from here before the test's timeout.
    await migrate.stop(signal, 120_000)
    return { ...migrate.exit()!, stderr: migrate.stderr() }
  } finally {
    await migrate.stop('SIGKILL')
  }
}

describe("the embedded server's first start (real fleetkit db migrate)", function () {
  this.timeout(240_000)
  const stateDirs: string[] = []
  let latest: number
  before(async () => {
    latest = (await loadMigrations()).at(-1)!.version
  })
  async function newStateDir(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'fleetkit-initdb-'))
    stateDirs.push(dir)
    return dir
  }
  after(async () => {
    for (const dir of stateDirs) {
      await stopEmbeddedServer(dir).catch(() => undefined)
      await rm(dir, { recursive: true, force: true })
    }
  })

  async function assertRerunSucceeds(stateDir: string): Promise<void> {
    const rerun = await runFleetkit(['db', 'migrate', '--json'], {
      env: { DATABASE_URL: '', FLEETKIT_STATE_DIR: stateDir },
      timeout: 120_000,
    })
    assert.equal(rerun.code, 0, rerun.stdout + rerun.stderr)
    assert.equal(rerun.json.result.schema.version, latest)
    assert.doesNotMatch(
      rerun.stderr,
      /Creating the embedded|Starting the embedded|Applying schema migration/,
      'progress is only for a terminal',
    )
    assert.deepEqual(initDirs(embeddedServerPaths(stateDir).root), [])
  }

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`${signal} during initdb ends the initialisation, removes its directory and password file, and ends by the signal; a rerun succeeds`, async () => {
      const stateDir = await newStateDir()
      const paths = embeddedServerPaths(stateDir)
      const ended = await interruptFirstStart(stateDir, signal)
      assert.equal(ended.signal, signal, `exit ${ended.code}: ${ended.stderr}`)
      assert.deepEqual(initDirs(paths.root), [], 'the half-made data directory was removed')
      assert.equal(existsSync(paths.dataDir), false)
      assert.deepEqual(passwordFiles(paths.tmpDir), [], "initdb's clear-text password file was removed")
      assert.deepEqual(processesMentioning(stateDir), [], 'initdb was stopped with it')
      await assertRerunSucceeds(stateDir)
    })
  }

  it('a state directory whose parents do not exist yet: they are made passable, the state private, and the server starts', async () => {
    // As root the server runs as the postgres user, which must pass every parent (the temporary directory is 0700).
    const base = await newStateDir()
    await chmod(base, 0o755)
    const stateDir = join(base, 'srv', 'fleetkit', 'state')
    await assertRerunSucceeds(stateDir)
    assert.equal((await stat(join(base, 'srv', 'fleetkit'))).mode & 0o777, 0o755 & ~process.umask())
    assert.equal(
      (await stat(stateDir)).mode & 0o077,
      process.getuid?.() === 0 ? 0o011 : 0,
      'the state directory stays private',
    )
    await stopEmbeddedServer(stateDir)
  })

  it('SIGKILL during initdb: the orphaned initialisation ends itself, and the next start removes its leftovers', async () => {
    const stateDir = await newStateDir()
    const paths = embeddedServerPaths(stateDir)
    const ended = await interruptFirstStart(stateDir, 'SIGKILL')
    assert.equal(ended.signal, 'SIGKILL')
    // Nobody cleans up after SIGKILL; the initdb wrapper notices its parent is gone and ends its group.
    await eventually('the orphaned initdb to end', () => processesMentioning(stateDir).length === 0, {
      timeoutMs: 10_000,
      intervalMs: 20,
    })
    assert.equal(initDirs(paths.root).length, 1, 'the killed initialisation left its directory')
    assert.equal(existsSync(paths.dataDir), false)
    await assertRerunSucceeds(stateDir)
    assert.deepEqual(passwordFiles(paths.tmpDir), [])
  })

  it("the next start removes a dead creator's directory and an older fleetkit's, keeps a live one's, and reports its steps to progress", async () => {
    const stateDir = await newStateDir()
    const paths = embeddedServerPaths(stateDir)
    await mkdir(paths.tmpDir, { recursive: true, mode: 0o700 })
    const dead = Number(
      (await runProcessOk(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'])).stdout,
    )
    const live = startProcess(process.execPath, ['-e', 'setTimeout(() => {}, 120000)'])
    try {
      const leftovers = {
        dead: `data.init-${dead}-0a1b2c3d`,
        older: 'data.init-9f8e7d6c',
        live: `data.init-${live.pid}-12345678`,
      }
      for (const name of Object.values(leftovers)) {
        await mkdir(join(paths.root, name, 'base'), { recursive: true })
        await writeFile(join(paths.root, name, 'base', 'file'), 'x')
      }
      await writeFile(join(paths.tmpDir, 'pg-password-leftover'), 'not-a-real-password\n', { mode: 0o600 })
      const messages: string[] = []
      const db = await openDatabase({ stateDir, databaseUrl: '', progress: (m) => messages.push(m) })
      await db.close()
      assert.deepEqual(initDirs(paths.root), [leftovers.live])
      assert.deepEqual(passwordFiles(paths.tmpDir), [])
      const migrations = await loadMigrations()
      assert.deepEqual(messages, [
        `Creating the embedded PostgreSQL database in ${paths.dataDir} (first run, a few seconds)`,
        'Starting the embedded PostgreSQL server',
        ...migrations.map((m) => `Applying schema migration ${String(m.version).padStart(4, '0')}-${m.name}`),
      ])
      // A server found running says nothing.
      const quiet: string[] = []
      const again = await openDatabase({ stateDir, databaseUrl: '', progress: (m) => quiet.push(m) })
      await again.close()
      assert.deepEqual(quiet, [])
    } finally {
      await live.stop('SIGKILL')
    }
  })

  describe('progress on a terminal (a real pty from script(1))', () => {
    /** `fleetkit ARGS` with stderr on a pty and stdout in a file: what each shows. */
    async function onTerminal(stateDir: string, args: string[]): Promise<{ terminal: string; stdout: string }> {
      const out = join(stateDir, 'stdout.txt')
      const command = `exec ${process.execPath} ${fleetkitEntry()} ${args.join(' ')} > ${out}`
      const { stdout } = await runProcessOk('script', ['-qec', command, '/dev/null'], {
        cwd: packagePath(),
        env: overlayEnv({ DATABASE_URL: '', FLEETKIT_STATE_DIR: stateDir }),
        timeoutMs: 120_000,
      })
      return { terminal: stdout, stdout: readFileSync(out, 'utf8') }
    }
    const migrateOnTerminal = (stateDir: string, args: string[]) => onTerminal(stateDir, ['db', 'migrate', ...args])

    /** The steps the progress reporter finished, in order: each ends as a "✔ message (elapsed)" line. */
    const finishedSteps = (terminal: string) =>
      [...terminal.matchAll(/✔ (.*?) \((?:\d+\.\ds|\d+m\d\ds)\)\r?\n/g)].map((m) => m[1])

    async function firstStartSteps(stateDir: string): Promise<string[]> {
      const migrations = await loadMigrations()
      return [
        `Creating the embedded PostgreSQL database in ${join(stateDir, 'postgres', 'data')} (first run, a few seconds)`,
        'Starting the embedded PostgreSQL server',
        ...migrations.map((m) => `Applying schema migration ${String(m.version).padStart(4, '0')}-${m.name}`),
      ]
    }

    it('db migrate shows creating, starting and each migration on stderr, and the report on stdout', async () => {
      const stateDir = await newStateDir()
      const { terminal, stdout } = await migrateOnTerminal(stateDir, [])
      assert.deepEqual(finishedSteps(terminal), await firstStartSteps(stateDir), terminal)
      assert.doesNotMatch(stdout, /Creating the embedded|Applying schema migration/)
      assert.match(stdout, /applied 0001-/)
      // Already running and migrated: nothing to show.
      const again = await migrateOnTerminal(stateDir, [])
      assert.doesNotMatch(again.terminal, /Creating the embedded|Starting the embedded|Applying schema migration/)
    })

    it('node token shows the first start as its own steps, and the secret only on stdout', async () => {
      const stateDir = await newStateDir()
      const { terminal, stdout } = await onTerminal(stateDir, ['node', 'token', 'build-1', '-d', 'examples/fleet.yaml'])
      assert.deepEqual(finishedSteps(terminal), await firstStartSteps(stateDir), terminal)
      const secret = /^([0-9a-f]{64})$/m.exec(stdout)?.[1]
      assert.ok(secret, stdout)
      assert.ok(!terminal.includes(secret), "the secret is not on the terminal's stderr")
    })

    it('db migrate --json shows no progress, even on a terminal', async () => {
      const stateDir = await newStateDir()
      const { terminal, stdout } = await migrateOnTerminal(stateDir, ['--json'])
      assert.doesNotMatch(terminal, /Creating the embedded|Starting the embedded|Applying schema migration/)
      assert.equal((JSON.parse(stdout) as { result: { schema: { version: number } } }).result.schema.version, latest)
    })
  })
})
