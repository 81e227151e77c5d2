import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

import { packagePath } from '../../../src/package-root.js'
import { initdbProgramPath } from '../../../src/store/embedded/initdb.js'
import { runProcessOk } from '../../support/process.js'

const SHIPPED = join('src', 'store', 'embedded', 'initdb-child.mjs')

describe('the initdb program (src/store/embedded/initdb-child.mjs)', () => {
  it('is found beside the module under tsx, and in src/ from a dist/ that has no copy', async () => {
    assert.equal(initdbProgramPath(), packagePath(SHIPPED))
    const dist = await mkdtemp(join(tmpdir(), 'fleetkit-dist-'))
    try {
      // What tsc leaves: dist/store/embedded/initdb.js and no .mjs beside it.
      assert.equal(
        initdbProgramPath(pathToFileURL(join(dist, 'store', 'embedded', 'initdb.js')).href),
        packagePath(SHIPPED),
      )
    } finally {
      await rm(dist, { recursive: true, force: true })
    }
    assert.ok(existsSync(packagePath(SHIPPED)))
  })

  it('ships in the npm package', async function () {
    this.timeout(60_000)
    const files = (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { files: string[] }).files
    assert.ok(files.includes(SHIPPED), 'package.json "files" lists it')
    const { stdout } = await runProcessOk('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: packagePath(),
    })
    const packed = (JSON.parse(stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path)
    assert.ok(packed.includes(SHIPPED), `npm pack leaves out ${SHIPPED}`)
  })
})
