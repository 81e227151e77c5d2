// mocha's configuration. The default spec (every unit and integration test) applies only when no
// test file or directory is named on the command line: mocha would otherwise add the named files
// to the configured spec, and `npx mocha test/unit/x.test.ts` would run the whole suite.
/* global require, module */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- mocha loads its config as CommonJS
const { existsSync, statSync } = require('node:fs')

const TAKES_VALUE = new Set([
  '--config',
  '--require',
  '-r',
  '--import',
  '--file',
  '--ignore',
  '--exclude',
  '--reporter',
  '-R',
  '--grep',
  '-g',
  '--fgrep',
  '-f',
  '--timeout',
  '-t',
  '--slow',
  '-s',
  '--ui',
  '-u',
  '--extension',
  '--reporter-option',
  '--reporter-options',
  '-O',
  '--package',
  '--jobs',
  '-j',
  '--retries',
])

function namesTests(argv) {
  return argv.some(
    (arg, i) =>
      !arg.startsWith('-') &&
      !TAKES_VALUE.has(argv[i - 1]) &&
      (/\.(ts|js|mjs|cjs)$/.test(arg) || (existsSync(arg) && statSync(arg).isDirectory())),
  )
}

module.exports = {
  import: 'tsx',
  // The host suites (real containers and VMs, root only) run from test/hosts/mocharc.cjs in their own section.
  ...(namesTests(process.argv.slice(2))
    ? {}
    : {
        spec: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
        ignore: ['test/integration/hosts/**', 'test/integration/roles/**', 'test/integration/sync/**/*-hosts.test.ts'],
      }),
  timeout: 60000,
  recursive: true,
  extension: ['ts'],
}
