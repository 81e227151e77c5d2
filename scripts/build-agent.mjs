#!/usr/bin/env node
// Bundles src/agent/ into dist/fleetkit-agent.cjs: one file with a node shebang that runs on
// the Node.js Ubuntu 24.04 ships (18) and later, without oclif, tsx or node_modules.
//
// CommonJS, not ESM: the release installs it as the extensionless /usr/local/bin/fleetkit-agent,
// which Node 18 always loads as CommonJS (it has no ESM syntax detection; Node >= 20.19 accepts
// both). The .cjs name keeps it CommonJS inside this "type": "module" package too.
import { chmod, mkdir, readFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { build } from 'esbuild'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const outfile = process.env.FLEETKIT_AGENT_OUTFILE ?? join(root, 'dist', 'fleetkit-agent.cjs')
const { version } = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'))

await mkdir(dirname(outfile), { recursive: true })
await build({
  entryPoints: [join(root, 'src', 'agent', 'main.ts')],
  outfile,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node18',
  legalComments: 'none',
  logLevel: 'warning',
  define: { __FLEETKIT_AGENT_VERSION__: JSON.stringify(version) },
  // import.meta.url appears only on the source-only path of src/agent/version.ts, which `define` makes dead.
  logOverride: { 'empty-import-meta': 'silent' },
  banner: { js: '#!/usr/bin/env node' },
})
await chmod(outfile, 0o755)
process.stdout.write(`${outfile}\n`)
