import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { chmod, mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { cleanStaleWorkspaces, createWorkspace } from '../../../src/demo/workspace.js'
import { eventually } from '../../support/eventually.js'

/** A process group leader whose command line is `bash -c 'sleep 300; exit 0' ARGS...` (two commands: bash does not exec sleep). */
function sleeper(...args: string[]): ChildProcess {
  return spawn('bash', ['-c', 'sleep 300; exit 0', ...args], { detached: true, stdio: 'ignore' })
}

function alive(pid: number): boolean {
  try {
    const state = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return !state.slice(state.lastIndexOf(')') + 2).startsWith('Z')
  } catch {
    return false
  }
}

/** A PID that was just used and has ended. */
async function deadPid(): Promise<number> {
  const child = spawn('true')
  await new Promise((resolve) => child.once('exit', resolve))
  return child.pid!
}

describe('demo workspace: its manifest, and a killed run found and removed by the next', () => {
  let parent: string
  const started: ChildProcess[] = []

  beforeEach(async () => {
    parent = await mkdtemp(join(tmpdir(), 'fleetkit-demo-ws-test-'))
  })

  afterEach(async () => {
    for (const child of started.splice(0)) {
      try {
        process.kill(-child.pid!, 'SIGKILL')
      } catch {
        // gone
      }
    }
    await rm(parent, { recursive: true, force: true })
  })

  async function staleDir(name: string, owner: number, pids: (dir: string) => number[]): Promise<string> {
    const dir = join(parent, name)
    await mkdir(join(dir, 'state'), { recursive: true })
    await writeFile(join(dir, 'demo.json'), JSON.stringify({ ownerPid: owner, pids: pids(dir) }))
    return dir
  }

  it('creates a directory others may pass through but not list, naming this process as its owner', async () => {
    const ws = await createWorkspace(parent)
    assert.match(ws.dir, /fleetkit-demo-[A-Za-z0-9]{6}$/)
    assert.equal((await stat(ws.dir)).mode & 0o777, 0o711)
    await ws.recordPid(4242)
    await ws.recordPid(4343)
    assert.deepEqual(JSON.parse(readFileSync(join(ws.dir, 'demo.json'), 'utf8')), {
      ownerPid: process.pid,
      pids: [4242, 4343],
    })
    assert.equal(ws.stateDir, join(ws.dir, 'state'))
    assert.equal(ws.pkiDir, join(ws.dir, 'state', 'pki'))
  })

  it('ends the recorded processes that name a dead owner’s directory, and removes the directory', async () => {
    let child: ChildProcess | undefined
    const dir = await staleDir('fleetkit-demo-dead01', await deadPid(), (d) => {
      child = sleeper(d)
      started.push(child)
      return [child.pid!]
    })
    await eventually('the sleeper to run', () => alive(child!.pid!))
    assert.deepEqual(await cleanStaleWorkspaces(parent), [dir])
    await eventually('the recorded process to end', () => !alive(child!.pid!))
    assert.equal(existsSync(dir), false)
  })

  it('never kills a recorded PID whose command line does not name the directory (a reused PID)', async () => {
    const stranger = sleeper('not-the-demo')
    started.push(stranger)
    const dir = await staleDir('fleetkit-demo-dead02', await deadPid(), () => [stranger.pid!])
    assert.deepEqual(await cleanStaleWorkspaces(parent), [dir])
    assert.equal(alive(stranger.pid!), true)
  })

  it('leaves a demo whose owner still runs `fleetkit demo`, and directories that are not demos', async () => {
    const owner = sleeper('fleetkit', 'demo')
    started.push(owner)
    await eventually('the owner to run', () => alive(owner.pid!))
    await staleDir('fleetkit-demo-live01', owner.pid!, () => [])
    await mkdir(join(parent, 'something-else'))
    assert.deepEqual(await cleanStaleWorkspaces(parent), [])
    assert.deepEqual((await readdir(parent)).sort(), ['fleetkit-demo-live01', 'something-else'])
  })

  it('removes a demo directory without a readable manifest (killed before it wrote one)', async () => {
    const dir = join(parent, 'fleetkit-demo-nomani')
    await mkdir(dir)
    await chmod(dir, 0o711)
    assert.deepEqual(await cleanStaleWorkspaces(parent), [dir])
    assert.equal(existsSync(dir), false)
  })
})
