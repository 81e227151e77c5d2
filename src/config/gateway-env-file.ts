// The gateway unit's EnvironmentFile (binds, lifetimes, intervals; DATABASE_URL when the database is not
// the embedded one): written by the operator, read by systemd, shipped in the off-host archive's kit.

export const GATEWAY_ENV_FILE = '/etc/fleetkit/gateway.env'

/** Whether the file's text sets DATABASE_URL (only that is read, never the value). */
export function namesDatabaseUrl(text: string): boolean {
  return /^\s*(export\s+)?DATABASE_URL\s*=\s*\S/m.test(text)
}
