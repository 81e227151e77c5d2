// A secret-bearing output inside a Git work tree that does not ignore it is refused (SECRET_OUTPUT_IN_GIT)
// unless forced; ignored paths, paths outside any work tree and a machine without git are allowed.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { isFleetkitError } from '../../../src/checks/fleetkit-error.js'
import { assertSecretOutsideGit, type GitRunner, gitWorkTreeExposing } from '../../../src/fs/output-in-git.js'

const check = {
  what: 'the agent seed of web-1',
  outside: 'fleetkit seed web-1 --kind agent',
  retry: 'fleetkit seed web-1',
}

describe('fs: secret outputs stay out of Git', () => {
  let dir: string
  let repo: string

  before(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), 'fleetkit-output-in-git-')))
    repo = join(dir, 'fleet')
    mkdirSync(join(repo, 'nested'), { recursive: true })
    execFileSync('git', ['init', '-q', repo])
    writeFileSync(join(repo, '.gitignore'), '/secrets/\n*.key\n')
  })
  after(() => rmSync(dir, { recursive: true, force: true }))

  it('refuses a path inside a work tree that does not ignore it, naming the path, the work tree and --force', async () => {
    const path = join(repo, 'nested', 'web-1.user-data')
    await assert.rejects(assertSecretOutsideGit({ ...check, path, force: false }), (error: unknown) => {
      assert.ok(isFleetkitError(error))
      assert.equal(error.code, 'SECRET_OUTPUT_IN_GIT')
      assert.equal(error.exitCode, 2)
      assert.match(error.message, /--force/)
      assert.deepEqual(error.data, { path, workTree: repo })
      assert.ok(
        error.actions.includes('or fleetkit seed web-1 --force   (write it there anyway)'),
        error.actions.join('\n'),
      )
      assert.ok(error.actions.some((a) => a.includes(`'/nested/web-1.user-data' >> ${repo}/.gitignore`)))
      return true
    })
  })

  it('refuses a path whose directory does not exist yet (the nearest existing one is asked)', async () => {
    assert.equal(await gitWorkTreeExposing(join(repo, 'new', 'dir', 'web-1.user-data')), repo)
  })

  it('allows an ignored path (.gitignore, an ignored directory), --force, and a path outside any work tree', async () => {
    assert.equal(await gitWorkTreeExposing(join(repo, 'release.key')), undefined)
    assert.equal(await gitWorkTreeExposing(join(repo, 'secrets', 'web-1.user-data')), undefined)
    await assertSecretOutsideGit({ ...check, path: join(repo, 'secrets', 'web-1.user-data'), force: false })
    await assertSecretOutsideGit({ ...check, path: join(repo, 'web-1.user-data'), force: true })
    await assertSecretOutsideGit({ ...check, path: join(dir, 'web-1.user-data'), force: false })
  })

  it('a tracked file is never ignored: refused even when .gitignore names it', async () => {
    writeFileSync(join(repo, 'tracked.key'), 'x')
    execFileSync('git', ['-C', repo, 'add', '-f', 'tracked.key'])
    assert.equal(await gitWorkTreeExposing(join(repo, 'tracked.key')), repo)
  })

  it('runs git without a shell and reads its answers: no git, not a work tree, ignored, not ignored, unknown', async () => {
    const calls: string[][] = []
    const runner =
      (inside: number | undefined, ignored: number): GitRunner =>
      async (args) => {
        calls.push([...args])
        if (inside === undefined) return undefined
        if (args.includes('rev-parse')) return { exitCode: inside, stdout: inside === 0 ? 'true\n/r\n' : '' }
        return { exitCode: ignored, stdout: '' }
      }
    const path = join(dir, 'x', 'seed')
    assert.equal(await gitWorkTreeExposing(path, runner(undefined, 0)), undefined, 'git not installed')
    assert.equal(await gitWorkTreeExposing(path, runner(128, 0)), undefined, 'not a work tree')
    assert.equal(await gitWorkTreeExposing(path, runner(0, 0)), undefined, 'ignored')
    assert.equal(await gitWorkTreeExposing(path, runner(0, 1)), '/r', 'not ignored')
    assert.equal(await gitWorkTreeExposing(path, runner(0, 128)), '/r', 'git could not tell: not ignored')
    assert.deepEqual(calls.at(-1), ['-C', dir, 'check-ignore', '-q', '--', join('x', 'seed')])
  })
})
