// mocha's configuration. The default spec (every unit and integration test) applies only when no
// test file or directory is named on the command line: mocha would otherwise add the named files
// to the configured spec, and `npx mocha test/unit/x.test.ts` would run the whole suite.
//
// The whole suite can run in parallel workers (mocha --parallel, FLEETKIT_TEST_JOBS of them, e.g. 4):
// most of it waits on processes (PostgreSQL, gateways, agents, openssl), so more workers than the
// CI machine's 2 cores help. Each file runs in one worker, files in any order, several at once: the
// rules a test follows to be safe there are in docs/testing.md. A file named alone runs serially
// (add --parallel to try it in a worker); the test command (scripts/test) runs the whole suite in 4
// workers, `npx mocha` alone without FLEETKIT_TEST_JOBS runs it serially.
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

const jobs = Number(process.env.FLEETKIT_TEST_JOBS || 1)
const namesFiles = namesTests(process.argv.slice(2))

module.exports = {
  import: 'tsx',
  // Once, in mocha's own process, before the workers: see the file.
  require: ['test/support/mocha-global.ts'],
  // The host suites (real containers and VMs, root only) run from test/hosts/mocharc.cjs in their own section.
  ...(namesFiles
    ? {}
    : {
        spec: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
        ignore: ['test/integration/hosts/**', 'test/integration/roles/**', 'test/integration/sync/**/*-hosts.test.ts'],
        ...(jobs > 1 ? { parallel: true, jobs } : {}),
      }),
  timeout: 60000,
  recursive: true,
  extension: ['ts'],
}
