// What a local cloud killed with SIGKILL leaves (its run folder, the processes of its machines, the loop devices
// of its volumes, its bridge) is taken apart by the next one before it starts, and what belongs to a stub that is
// alive is left alone. Real processes, loop devices and bridges (root, as the host suites are).
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { claimRunDir, removeDeadRuns, RUN_DIR_PREFIX } from '../../../src/provider/local-cloud/leftovers.js'
import { assertHostsAvailable } from '../../hosts/index.js'

const sh = (command: string) => spawnSync('sh', ['-c', command], { encoding: 'utf8' })
const bridgeExists = (name: string) => sh(`ip link show ${name}`).status === 0
const processAlive = (pid: number) => existsSync(`/proc/${pid}`) && !/\) Z/.test(sh(`cat /proc/${pid}/stat`).stdout)

describe('the local cloud: leftovers of a stub killed with SIGKILL', function () {
  this.timeout(60_000)
  let tmp: string
  const bridges = [`fkld${process.pid.toString(36)}`, `fkla${process.pid.toString(36)}`]

  before(async () => {
    await assertHostsAvailable('container')
    tmp = await mkdtemp(join(tmpdir(), 'fleetkit-leftovers-'))
  })
  const made: { machines: number[]; loops: string[] } = { machines: [], loops: [] }
  after(async () => {
    // Whatever a failed assertion left: nothing of the test outlives it.
    for (const pid of made.machines) if (processAlive(pid)) process.kill(pid, 'SIGKILL')
    for (const loop of made.loops) sh(`losetup -d ${loop} 2>/dev/null`)
    for (const b of bridges) sh(`ip link delete ${b} 2>/dev/null`)
    await rm(tmp, { recursive: true, force: true })
  })

  /** A run folder as a stub leaves it: an owner line, a machine's process naming it, a volume on a loop device. */
  async function runOf(owner: string, bridge: string) {
    const dir = await mkdtemp(join(tmp, RUN_DIR_PREFIX))
    await writeFile(join(dir, 'owner'), owner)
    const machine = spawn('sh', ['-c', 'sleep 600', 'nspawn-overlay', join(dir, 'server-1', 'merged')], {
      stdio: 'ignore',
      detached: true,
    })
    const image = join(dir, 'volume-1.img')
    sh(`truncate -s 16M ${image}`)
    const loop = sh(`losetup --find --show ${image}`).stdout.trim()
    assert.match(loop, /^\/dev\/loop\d+$/)
    sh(`ip link add ${bridge} type bridge`)
    made.machines.push(machine.pid!)
    made.loops.push(loop)
    return { dir, machine: machine.pid!, loop }
  }

  it("takes apart a dead stub's run, its machines, volumes and bridge; a live stub's is left alone", async () => {
    const finished = spawnSync('true')
    const deadPid = finished.pid!
    const dead = await runOf(`${deadPid} 1 ${bridges[0]}\n`, bridges[0]!)
    const alive = await runOf('', bridges[1]!)
    await claimRunDir(alive.dir, bridges[1]!)
    const removed = await removeDeadRuns({ tmp })
    assert.deepEqual(removed, [dead.dir])
    assert.equal(existsSync(dead.dir), false, 'the folder')
    assert.equal(processAlive(dead.machine), false, 'the machine')
    assert.doesNotMatch(sh('losetup --list --noheadings --output NAME').stdout, new RegExp(`^${dead.loop}$`, 'm'))
    assert.equal(bridgeExists(bridges[0]!), false, 'the bridge')

    assert.ok(existsSync(alive.dir) && processAlive(alive.machine) && bridgeExists(bridges[1]!), 'a live run stays')
    assert.match(sh('losetup --list --noheadings --output NAME').stdout, new RegExp(`^${alive.loop}$`, 'm'))
  })
})
