// A TCP listener inside a test host (a transient systemd unit running python3's http.server), so
// firewall tests have something that answers on 80, 443 or a declared public port.
import { eventually } from '../support/eventually.js'
import type { TestHost } from './types.js'

/** Starts a listener on PORT (all addresses) inside HOST and resolves once it accepts; returns its unit name. */
export async function startListener(host: TestHost, port: number): Promise<string> {
  const unit = `fleetkit-test-listen-${port}`
  await host.sshOk(
    `systemctl stop ${unit}.service 2>/dev/null || true; systemctl reset-failed ${unit}.service 2>/dev/null || true; ` +
      `mkdir -p /run/${unit} && systemd-run --unit=${unit} --working-directory=/run/${unit} python3 -m http.server ${port} --bind 0.0.0.0`,
  )
  await eventually(
    `${host.name}: the listener on port ${port}`,
    async () => (await host.ssh(`ss -Hltn 'sport = :${port}' | grep -q LISTEN`)).code === 0,
    { timeoutMs: 15_000, intervalMs: 200 },
  )
  return unit
}

export async function stopListener(host: TestHost, port: number): Promise<void> {
  await host.sshOk(`systemctl stop fleetkit-test-listen-${port}.service || true`)
}
