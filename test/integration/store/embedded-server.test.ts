import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { chmod, chown, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import pg from 'pg'

import { openDatabase } from '../../../src/store/database.js'
import { embeddedServerPaths } from '../../../src/store/embedded/paths.js'
import { inspectEmbeddedServer, stopEmbeddedServer } from '../../../src/store/embedded/server.js'
import { processIsAlive, withFileLock } from '../../../src/fs/file-lock.js'
import { FleetkitError } from '../../../src/checks/fleetkit-error.js'
import { runFleetkit } from '../../support/cli.js'
import { eventually } from '../../support/eventually.js'
import { overlayEnv, runProcessOk } from '../../support/process.js'

interface Opened {
  pid: number
  port: number
  started: boolean
  url: string
  version: number
}

/** Opens the database in a child process; with `barrier`, the child keeps it open until `barrier.count` children have. */
async function openInChild(stateDir: string, barrier?: { dir: string; count: number }): Promise<Opened> {
  const { stdout } = await runProcessOk(
    process.execPath,
    [
      '--import',
      'tsx',
      'test/support/open-embedded.ts',
      stateDir,
      ...(barrier ? [barrier.dir, String(barrier.count)] : []),
    ],
    { env: overlayEnv({ DATABASE_URL: '' }) },
  )
  return JSON.parse(stdout) as Opened
}

/** PIDs of PostgreSQL postmasters serving this data directory (their command line names it). */
function postmastersFor(dataDir: string): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const args = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')
      if (args.includes('-D') && args[args.indexOf('-D') + 1] === dataDir) pids.push(Number(entry))
    } catch {
      // the process ended while we looked
    }
  }
  return pids
}

const hasCode = (code: string) => (error: unknown) =>
  error instanceof Error && (error as { code?: string }).code === code

describe('the embedded PostgreSQL server (real processes)', function () {
  this.timeout(180_000)
  const stateDirs: string[] = []
  async function newStateDir(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'fleetkit-state-'))
    stateDirs.push(dir)
    return dir
  }
  after(async () => {
    for (const dir of stateDirs) {
      await stopEmbeddedServer(dir).catch(() => undefined)
      await rm(dir, { recursive: true, force: true })
    }
  })

  let sharedStateDir: string | undefined

  it('two processes starting it at once share one server, which outlives them; a third reuses it', async () => {
    const stateDir = await newStateDir()
    sharedStateDir = stateDir
    const paths = embeddedServerPaths(stateDir)
    // Each holds the database open until both have opened it: the two are provably open at once.
    const barrier = { dir: await newStateDir(), count: 2 }
    const [a, b] = await Promise.all([openInChild(stateDir, barrier), openInChild(stateDir, barrier)])
    assert.equal(a.pid, b.pid)
    assert.equal(a.port, b.port)
    assert.equal([a.started, b.started].filter(Boolean).length, 1, 'exactly one of them started the server')
    assert.ok(a.version >= 1 && a.version === b.version, 'migrated')
    assert.deepEqual(postmastersFor(paths.dataDir), [a.pid], 'one server on the data directory')
    assert.ok(processIsAlive(a.pid), 'the server keeps running after the processes exit')
    const record = JSON.parse(readFileSync(paths.serverFile, 'utf8')) as { pid: number; port: number }
    assert.deepEqual([record.pid, record.port], [a.pid, a.port])
    const c = await openInChild(stateDir)
    assert.deepEqual([c.pid, c.port, c.started], [a.pid, a.port, false])
  })

  it('a server found running without the fleetkit database (its start failed at CREATE DATABASE) gets it back from the next commands, two at once', async () => {
    const stateDir = sharedStateDir ?? (await newStateDir())
    const first = await openInChild(stateDir)
    // What a first start whose disk filled during CREATE DATABASE leaves: the server running, no database.
    const password = readFileSync(embeddedServerPaths(stateDir).passwordFile, 'utf8').trim()
    const admin = new pg.Client({
      host: '127.0.0.1',
      port: first.port,
      user: 'fleetkit',
      password,
      database: 'postgres',
    })
    await admin.connect()
    try {
      await admin.query('DROP DATABASE fleetkit WITH (FORCE)')
    } finally {
      await admin.end()
    }
    // Two at once: one CREATE DATABASE wins, the other's duplicate is no failure.
    const barrier = { dir: await newStateDir(), count: 2 }
    const [a, b] = await Promise.all([openInChild(stateDir, barrier), openInChild(stateDir, barrier)])
    for (const opened of [a, b]) {
      assert.deepEqual([opened.pid, opened.started], [first.pid, false], 'the running server, not a restart')
      assert.equal(opened.version, first.version, 'created and migrated')
    }
    const listed = await runFleetkit(['node', 'list', '--json'], { env: { FLEETKIT_STATE_DIR: stateDir } })
    assert.equal(listed.code, 0, listed.stdout + listed.stderr)
  })

  it('keeps the generated password in a 0600 file and out of every printed form', async () => {
    const stateDir = sharedStateDir ?? (await newStateDir())
    const db = await openDatabase({ stateDir, databaseUrl: '' })
    try {
      const paths = embeddedServerPaths(stateDir)
      const password = readFileSync(paths.passwordFile, 'utf8').trim()
      assert.ok(password.length >= 32)
      assert.equal(statSync(paths.passwordFile).mode & 0o777, 0o600)
      assert.match(db.url, /^postgres:\/\/fleetkit:\*\*\*@127\.0\.0\.1:\d+\/fleetkit$/)
      for (const text of [db.url, JSON.stringify(db), readFileSync(paths.serverFile, 'utf8')])
        assert.ok(!text.includes(password))
      if (process.getuid?.() === 0) {
        const owner = statSync(paths.dataDir).uid
        assert.notEqual(owner, 0, 'as root, the data directory belongs to the postgres user')
      }
    } finally {
      await db.close()
    }
  })

  it('restarts a server that was killed (stale postmaster.pid and port), and db stop stops it', async () => {
    const stateDir = await newStateDir()
    const paths = embeddedServerPaths(stateDir)
    const first = await openInChild(stateDir)
    process.kill(first.pid, 'SIGKILL')
    await eventually('the killed postmaster to end', () => !processIsAlive(first.pid), {
      timeoutMs: 60_000,
      intervalMs: 20,
    })
    // Its backends notice the postmaster's death and exit; PostgreSQL then recovers on restart.
    const second = await openInChild(stateDir)
    assert.notEqual(second.pid, first.pid)
    assert.equal(second.started, true)
    assert.deepEqual(postmastersFor(paths.dataDir), [second.pid])

    // A server.json naming a port nobody listens on is not trusted.
    await writeFile(paths.serverFile, JSON.stringify({ pid: second.pid, port: 1, dataDir: paths.dataDir }))
    const third = await openInChild(stateDir)
    assert.deepEqual([third.pid, third.port, third.started], [second.pid, second.port, false])

    const stopped = await stopEmbeddedServer(stateDir)
    assert.deepEqual(stopped, { wasRunning: true, pid: second.pid })
    assert.ok(!processIsAlive(second.pid))
    const state = await inspectEmbeddedServer(stateDir)
    assert.equal(state.running, false)
    assert.equal(state.initialised, true)
    assert.deepEqual(await stopEmbeddedServer(stateDir), { wasRunning: false })
    const fourth = await openInChild(stateDir)
    assert.equal(fourth.started, true)
  })

  it('db stop while another process holds the start lock gives up with STATE_EMBEDDED_BUSY, leaving the lock', async () => {
    const stateDir = await newStateDir()
    const paths = embeddedServerPaths(stateDir)
    await mkdir(paths.root)
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let holding!: () => void
    const taken = new Promise<void>((resolve) => (holding = resolve))
    // A live holder (this process): a long start, or a restore to a time recovering.
    const holder = withFileLock(paths.lockFile, async () => {
      holding()
      await held
    })
    await taken
    try {
      await assert.rejects(stopEmbeddedServer(stateDir, { timeoutMs: 200 }), (error: unknown) => {
        assert.ok(error instanceof FleetkitError, String(error))
        assert.equal(error.code, 'STATE_EMBEDDED_BUSY')
        assert.deepEqual(error.data, { lockFile: paths.lockFile, holder: process.pid })
        assert.ok(error.actions.some((a) => a.includes(`ps -p ${process.pid} -o args`)))
        return true
      })
      assert.ok(existsSync(paths.lockFile), "the holder's lock stays")
    } finally {
      release()
      await holder
    }
  })

  it('a pool opened before a stop keeps working once any process restarts the server (same port)', async () => {
    const stateDir = sharedStateDir ?? (await newStateDir())
    const idleErrors: Error[] = []
    const db = await openDatabase({ stateDir, databaseUrl: '', onIdleError: (error) => idleErrors.push(error) })
    try {
      await db.pool.query('SELECT 1')
      const stopped = await stopEmbeddedServer(stateDir)
      assert.equal(stopped.wasRunning, true)
      const restarted = await openInChild(stateDir)
      assert.equal(restarted.started, true)
      assert.equal(restarted.port, db.embedded?.port)
      const after = await db.pool.query<{ one: number }>('SELECT 1 AS one')
      assert.equal(after.rows[0]?.one, 1)
    } finally {
      await db.close()
    }
  })

  it('a pool opened before a stop follows a restart onto another port when its old one was taken meanwhile', async () => {
    const stateDir = sharedStateDir ?? (await newStateDir())
    const db = await openDatabase({ stateDir, databaseUrl: '', onIdleError: () => undefined })
    const squatter = createServer()
    try {
      await db.pool.query('SELECT 1')
      const oldPort = db.embedded!.port
      await stopEmbeddedServer(stateDir)
      await new Promise<void>((resolve, reject) => squatter.once('error', reject).listen(oldPort, '127.0.0.1', resolve))
      const restarted = await openInChild(stateDir)
      assert.notEqual(restarted.port, oldPort)
      const after = await db.pool.query<{ port: number }>("SELECT current_setting('port')::int AS port")
      assert.equal(after.rows[0]?.port, restarted.port)
    } finally {
      await db.close()
      await new Promise((resolve) => squatter.close(resolve))
    }
  })

  it('a password file that no longer matches the server gives STATE_AUTH_REFUSED, without printing either', async () => {
    const stateDir = sharedStateDir ?? (await newStateDir())
    await openInChild(stateDir)
    const { passwordFile } = embeddedServerPaths(stateDir)
    const original = readFileSync(passwordFile, 'utf8')
    try {
      await writeFile(passwordFile, 'not-the-password-0123456789\n')
      await assert.rejects(openDatabase({ stateDir, databaseUrl: '' }), (error: unknown) => {
        assert.ok(hasCode('STATE_AUTH_REFUSED')(error))
        const text = JSON.stringify({ message: (error as Error).message, data: (error as { data?: unknown }).data })
        assert.ok(!text.includes('not-the-password') && !text.includes(original.trim()))
        return true
      })
    } finally {
      await writeFile(passwordFile, original)
    }
  })

  it('refuses a state directory it cannot create (STATE_DIR_UNUSABLE)', async () => {
    const parent = await newStateDir()
    const file = join(parent, 'a-file')
    await writeFile(file, 'not a directory')
    await assert.rejects(
      openDatabase({ stateDir: join(file, 'state'), databaseUrl: '' }),
      hasCode('STATE_DIR_UNUSABLE'),
    )
  })

  it('refuses a state directory under /proc (ENOENT, not a hang) and one whose path holds a newline, creating nothing', async () => {
    await assert.rejects(openDatabase({ stateDir: '/proc/1/state', databaseUrl: '' }), hasCode('STATE_DIR_UNUSABLE'))
    const parent = await newStateDir()
    const newline = join(parent, 'a\nb')
    await assert.rejects(openDatabase({ stateDir: newline, databaseUrl: '' }), (error: unknown) => {
      assert.ok(hasCode('STATE_DIR_UNUSABLE')(error))
      assert.match((error as Error).message, /holds a control character/)
      return true
    })
    assert.deepEqual(await readdir(parent), [])
  })

  it('refuses a state directory group or others may write, creating and starting nothing', async () => {
    for (const mode of [0o777, 0o770, 0o1777]) {
      const stateDir = join(await newStateDir(), 'state')
      await mkdir(stateDir)
      await chmod(stateDir, mode)
      await assert.rejects(openDatabase({ stateDir, databaseUrl: '' }), (error: unknown) => {
        assert.ok(hasCode('STATE_DIR_UNUSABLE')(error), String(error))
        assert.deepEqual((error as FleetkitError).data?.reason, 'writable')
        return true
      })
      assert.deepEqual(await readdir(stateDir), [], `mode ${mode.toString(8)}: nothing made in it`)
    }
  })

  if (process.getuid?.() === 0) {
    it('as root, refuses a state directory another user owns: a password planted there is never used', async () => {
      const NOBODY = 65_534
      const stateDir = join(await newStateDir(), 'state')
      await mkdir(join(stateDir, 'postgres'), { recursive: true })
      const planted = join(stateDir, 'postgres', 'password')
      await writeFile(planted, 'AttackerKnowsThisPassword\n', { mode: 0o600 })
      for (const path of [stateDir, join(stateDir, 'postgres'), planted]) await chown(path, NOBODY, NOBODY)
      await assert.rejects(openDatabase({ stateDir, databaseUrl: '' }), (error: unknown) => {
        assert.ok(hasCode('STATE_DIR_UNUSABLE')(error), String(error))
        assert.deepEqual([(error as FleetkitError).data?.reason, (error as FleetkitError).data?.uid], ['owner', NOBODY])
        return true
      })
      assert.deepEqual(await readdir(join(stateDir, 'postgres')), ['password'], 'no data directory, no server')
      // The same under a directory that user owns: they could rename the state away and put theirs in place.
      const under = join(stateDir, 'inner')
      await mkdir(under)
      await assert.rejects(openDatabase({ stateDir: join(under, 'state'), databaseUrl: '' }), (error: unknown) => {
        assert.equal((error as FleetkitError).data?.path, stateDir)
        return true
      })
    })

    it('as root, refuses a state directory the postgres user cannot reach, naming the blocking directory', async () => {
      const parent = await newStateDir()
      await chmod(parent, 0o700)
      await assert.rejects(openDatabase({ stateDir: join(parent, 'state'), databaseUrl: '' }), (error: unknown) => {
        assert.ok(hasCode('STATE_DIR_UNUSABLE')(error))
        assert.equal((error as { data?: { blockedBy?: string } }).data?.blockedBy, parent)
        return true
      })
    })
  }
})
