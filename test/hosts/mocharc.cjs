// mocha's configuration for the host suites (the helper's own tests and the role tests): root
// hooks that stop hosts a failed test left running, long timeouts, one file at a time.
/* global module */
module.exports = {
  import: 'tsx',
  require: ['test/hosts/mocha-hooks.ts'],
  spec: ['test/integration/hosts/**/*.test.ts', 'test/integration/roles/**/*.test.ts'],
  timeout: 600000,
  recursive: true,
  extension: ['ts'],
}
