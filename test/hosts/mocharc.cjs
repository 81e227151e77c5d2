// mocha's configuration for the host suites (the helper's own tests and the role tests): root
// hooks that stop hosts a failed test left running, long timeouts. As in .mocharc.cjs, the spec
// applies only when no test file is named: `npx mocha --config test/hosts/mocharc.cjs FILE` runs FILE alone.
/* global require, module */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- mocha loads its config as CommonJS
const { existsSync } = require('node:fs')

// A file after --exclude or --ignore is not one to run (scripts/test excludes the VM suite by name).
const args = process.argv.slice(2)
const named = args.some(
  (arg, i) =>
    /\.(ts|js|mjs|cjs)$/.test(arg) &&
    !arg.endsWith('mocharc.cjs') &&
    !['--exclude', '--ignore'].includes(args[i - 1]) &&
    existsSync(arg),
)

// FLEETKIT_HOST_JOBS worker processes (scripts/test sets it; 1, serial, otherwise): a host suite
// spends most of its time in Ansible and in hosts booting, so two or three files at once fill two
// cores better than one. Hosts are safe across processes (addresses are allocated machine-wide,
// test/hosts/network.ts); the warm pool only boots ahead within one process, so it helps a serial run.
const jobs = Number(process.env.FLEETKIT_HOST_JOBS || 1)

module.exports = {
  import: 'tsx',
  require: ['test/hosts/mocha-hooks.ts'],
  ...(named
    ? {}
    : {
        // The longest file first: workers take files in this order, and a long file started last
        // would run alone at the end.
        spec: [
          'test/integration/sync/**/*-hosts.test.ts',
          // The files of several hosts (3 to 4 minutes each), named so they do not sort last.
          'test/integration/hosts/control-host-replacement.test.ts',
          'test/integration/hosts/local-cloud-fleet.test.ts',
          'test/integration/hosts/reconcile.test.ts',
          'test/integration/roles/**/*.test.ts',
          'test/integration/hosts/!(control-host-replacement|local-cloud-fleet|reconcile).test.ts',
        ],
        ...(jobs > 1 ? { parallel: true, jobs } : {}),
      }),
  timeout: 600000,
  recursive: true,
  extension: ['ts'],
}
