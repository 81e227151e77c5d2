// schema/output/*.schema.json are generated from the types the commands return
// (scripts/generate-output-schemas.ts, `npm run schemas`): a schema edited by hand, or a type
// changed without regenerating, fails here, and so does a map entry naming another type than
// the one its command returns.
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

import {
  generateOutputSchemas,
  OUTPUT_DIR,
  packageRoot,
  readOutputMap,
} from '../../../scripts/generate-output-schemas.js'

describe('schema/output: generated from the result types', function () {
  // One TypeScript program over the result types and what they import: seconds, not minutes.
  this.timeout(120_000)

  it('every schema on disk is what the types generate, and no other schema is there', () => {
    const generated = generateOutputSchemas()
    const dir = join(packageRoot, OUTPUT_DIR)
    const onDisk = readdirSync(dir).filter((f) => f.endsWith('.schema.json'))
    assert.deepEqual(
      onDisk.sort(),
      [...generated.keys()].sort(),
      'schema/output holds exactly the schemas the map names',
    )
    const stale = [...generated].filter(([file, text]) => readFileSync(join(dir, file), 'utf8') !== text)
    assert.deepEqual(
      stale.map(([file]) => file),
      [],
      'these schemas differ from their types: run `npm run schemas` (and edit the type, not the schema)',
    )
  })

  it('each schema names the type its command returns (FleetkitCommand<T>)', () => {
    for (const [name, entry] of Object.entries(readOutputMap().schemas)) {
      if (!entry.result) continue
      const words = /^fleetkit ([a-z][a-z -]*?) (?:--json|[A-Z]+ --json)/.exec(entry.title)?.[1]?.split(' ')
      assert.ok(words, `${name}: its title names no command`)
      const command = readFileSync(join(packageRoot, 'src', 'commands', ...words) + '.ts', 'utf8')
      const returned = /(?:extends FleetkitCommand|transitionCommand)<(\w+)[,>]/.exec(command)?.[1]
      assert.equal(
        entry.result.split('#')[1],
        returned,
        `${name}: the map's type is not what ${words.join(' ')} returns`,
      )
    }
  })
})
