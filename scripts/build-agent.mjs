#!/usr/bin/env node
// Bundles src/agent/ into dist/fleetkit-agent.js: one ESM file with a node shebang that
// runs on the Node.js Ubuntu 24.04 ships (18) and later, without oclif, tsx or node_modules.
import { chmod, mkdir, readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { build } from 'esbuild'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const outfile = process.env.FLEETKIT_AGENT_OUTFILE ?? join(root, 'dist', 'fleetkit-agent.js')

const { version } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'))

await mkdir(dirname(outfile), { recursive: true })
await build({
  entryPoints: [join(root, 'src', 'agent', 'main.ts')],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node18',
  legalComments: 'none',
  logLevel: 'warning',
  define: { __FLEETKIT_AGENT_VERSION__: JSON.stringify(version) },
  // Bundled CommonJS packages (reflect-metadata, tslib) call require(): give ESM one.
  banner: {
    js: "#!/usr/bin/env node\nimport { createRequire as __fleetkitCreateRequire } from 'node:module';\nconst require = __fleetkitCreateRequire(import.meta.url);",
  },
})
await chmod(outfile, 0o755)
process.stdout.write(`${outfile}\n`)
