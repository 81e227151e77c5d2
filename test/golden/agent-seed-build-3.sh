#!/bin/bash
# fleetkit agent seed: the enrollment script of a node that runs fleetkit-agent (rendered by
# `fleetkit seed NODE --kind agent` into the seed's cloud-config, whose runcmd runs it at the end
# of first boot; the SSH account, host key, br_netfilter and the first-boot nftables table come
# before it from the same cloud-config). fleetkit validated every value before rendering and
# every heredoc is quoted, so nothing below is expanded from a value. It does the minimum
# to enroll: everything after first boot is the Ansible roles' work (the firewall role replaces
# the first-boot table, the data volume comes with the first sync). agent.env and the unit come
# from the templates the agent role reads too (cloud-init/agent.env.tmpl, cloud-init/fleetkit-agent.service.tmpl).
set -euo pipefail
umask 022

# Tests run the seed in a sandbox root; on a host it is empty (cloud-init never sets it).
ROOT="${FLEETKIT_SEED_ROOT:-}"

log() { printf 'fleetkit-seed: %s\n' "$*" >&2; }

# Reads one KEY=value line of a file fleetkit wrote; values are never evaluated.
env_value() {
  sed -n "s/^$2=//p" "$1" | head -n 1
}

log 'writing configuration'
install -d -m 0755 "$ROOT/etc/fleetkit" "$ROOT/usr/local/lib/fleetkit" "$ROOT/usr/local/bin" \
  "$ROOT/etc/systemd/system"
install -d -m 0700 "$ROOT/var/lib/fleetkit"

cat > "$ROOT/etc/fleetkit/agent.env" <<'FLEETKIT_AGENT_ENV'
FLEETKIT_NODE_ID=build-3
FLEETKIT_GATEWAY_URL=https://gateway.example.net:8443
FLEETKIT_ENROLL_URL=https://enroll.example.net:8444
FLEETKIT_GATEWAY_CA_FILE=/etc/fleetkit/gateway-ca.pem
FLEETKIT_ENROLLMENT_SECRET_FILE=/var/lib/fleetkit/enrollment-secret
FLEETKIT_AGENT_PKI_DIR=/var/lib/fleetkit/pki
FLEETKIT_DATA_MOUNT=
FLEETKIT_CONTAINER=false
FLEETKIT_AGENT_ENV
chmod 0644 "$ROOT/etc/fleetkit/agent.env"

cat > "$ROOT/etc/fleetkit/release.env" <<'FLEETKIT_RELEASE_ENV'
FLEETKIT_RELEASE_URL=https://releases.example.net/fleetkit-agent
FLEETKIT_RELEASE_VERSION=0.1.0
FLEETKIT_RELEASE_ENV
chmod 0644 "$ROOT/etc/fleetkit/release.env"

cat > "$ROOT/etc/fleetkit/gateway-ca.pem" <<'FLEETKIT_GATEWAY_CA'
-----BEGIN CERTIFICATE-----
MIIBkjCCATegAwIBAgIUZ6EbEygHvpg+Hn/QwVSWWKi5nZAwCgYIKoZIzj0EAwIw
HTEbMBkGA1UEAwwSZmxlZXRraXQtZ29sZGVuLWNhMCAXDTI2MTEyOTExMDA0MVoY
DzIxMjYxMTA1MTEwMDQxWjAdMRswGQYDVQQDDBJmbGVldGtpdC1nb2xkZW4tY2Ew
WTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAS381DDKm4Qc7Xukb7wVNuXfSrLQwb3
Y3mF1JFQQxc8xjUHOyqBz6U7ADxwe7J8o22vPBAtVflyrzAUCcof0dq0o1MwUTAd
BgNVHQ4EFgQUWSg2zIBqzF5l0ZJq+L/nRfliemQwHwYDVR0jBBgwFoAUWSg2zIBq
zF5l0ZJq+L/nRfliemQwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNJADBG
AiEAqKO+Lrg6aewtjeh1QOZmE5ykE8z3JXXbSy6bYa2rhl0CIQDLy/wxN/PBiigy
e7mDChLKwe3DsiZG1nu9/cqUL9QadQ==
-----END CERTIFICATE-----
FLEETKIT_GATEWAY_CA
chmod 0644 "$ROOT/etc/fleetkit/gateway-ca.pem"

# The CA of a private release mirror (release.caFile); empty when the mirror has a public certificate.
cat > "$ROOT/etc/fleetkit/release-ca.pem" <<'FLEETKIT_RELEASE_CA'

FLEETKIT_RELEASE_CA
chmod 0644 "$ROOT/etc/fleetkit/release-ca.pem"

cat > "$ROOT/etc/fleetkit/release-public-key.pem" <<'FLEETKIT_RELEASE_KEY'
-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAn+InCdneGwlZ6eONSz31edBrrsLPqhbIZG5PXhE+Us8=
-----END PUBLIC KEY-----
FLEETKIT_RELEASE_KEY
chmod 0644 "$ROOT/etc/fleetkit/release-public-key.pem"

# The secret is single-use and short-lived; the agent deletes it once enrolled.
(
  umask 077
  cat > "$ROOT/var/lib/fleetkit/enrollment-secret" <<'FLEETKIT_ENROLLMENT_SECRET'
b65175b12da20da52418b8b9605db035e418cc4567fc4bc522b96e95d7bcb12b
FLEETKIT_ENROLLMENT_SECRET
)
chmod 0600 "$ROOT/var/lib/fleetkit/enrollment-secret"

log 'installing packages'
export DEBIAN_FRONTEND=noninteractive
# On first boot unattended-upgrades may hold the dpkg lock: wait for it instead of failing.
apt-get -o DPkg::Lock::Timeout=600 update -q
apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends ca-certificates curl openssl zstd nodejs

log 'verifying and installing the signed agent release'
cat > "$ROOT/usr/local/lib/fleetkit/verify-release.sh" <<'FLEETKIT_VERIFY_RELEASE'
# cloud-init/verify-release.sh is embedded here, byte for byte
FLEETKIT_VERIFY_RELEASE
chmod 0755 "$ROOT/usr/local/lib/fleetkit/verify-release.sh"

release_url=$(env_value "$ROOT/etc/fleetkit/release.env" FLEETKIT_RELEASE_URL)
release_version=$(env_value "$ROOT/etc/fleetkit/release.env" FLEETKIT_RELEASE_VERSION)
# The one verifier (shared with ansible/roles/agent_update): signature, checksum, a single
# regular file, --version, atomic rename. Any refusal stops the seed here.
verify_args=(--base-url "$release_url" --version "$release_version"
  --public-key "$ROOT/etc/fleetkit/release-public-key.pem" --target "$ROOT/usr/local/bin/fleetkit-agent")
if grep -q 'BEGIN CERTIFICATE' "$ROOT/etc/fleetkit/release-ca.pem"; then
  verify_args+=(--ca-file "$ROOT/etc/fleetkit/release-ca.pem")
fi
"$ROOT/usr/local/lib/fleetkit/verify-release.sh" "${verify_args[@]}"

log 'installing the agent unit'
# The agent's own service account, never an operator's (docs/architecture.md); the agent role
# creates the same one. An account or group of that name fleetkit did not make is refused, not changed.
agent_account_comment='fleetkit-agent service account (managed by fleetkit)'
if ! id -u fleetkit-agent >/dev/null 2>&1; then
  if getent group fleetkit-agent >/dev/null 2>&1; then
    log 'AGENT_ACCOUNT_FOREIGN: the group fleetkit-agent exists without the account fleetkit-agent; rename or remove it'
    exit 1
  fi
  useradd --system --home-dir /var/lib/fleetkit --shell /usr/sbin/nologin --user-group \
    --comment "$agent_account_comment" fleetkit-agent
elif [ "$(getent passwd fleetkit-agent | cut -d: -f5)" != "$agent_account_comment" ]; then
  log 'AGENT_ACCOUNT_FOREIGN: the account fleetkit-agent exists but fleetkit did not create it; rename or remove it'
  exit 1
fi
chown fleetkit-agent:fleetkit-agent "$ROOT/var/lib/fleetkit" "$ROOT/var/lib/fleetkit/enrollment-secret"
cat > "$ROOT/etc/systemd/system/fleetkit-agent.service" <<'FLEETKIT_AGENT_UNIT'
# fleetkit-agent: heartbeats, job leases and certificate renewal over mTLS.
# One template for the agent seed (src/render/agent-seed.ts) and the agent role (ansible/roles/agent):
# both fill its one placeholder the same way, so a converged seeded host reports changed=0.
[Unit]
Description=fleetkit agent
Documentation=https://github.com/fleetkit/fleetkit/blob/main/docs/seeds-and-inventory.md
Wants=network-online.target
After=network-online.target
# No data volume is declared for this node: the agent starts without waiting for a mount.

[Service]
Type=simple
User=fleetkit-agent
Group=fleetkit-agent
EnvironmentFile=/etc/fleetkit/agent.env
ExecStart=/usr/local/bin/fleetkit-agent run
Restart=always
RestartSec=5
# The gateway refused the node's identity (src/agent/identity-refusal.ts): a restart cannot change that,
# a new secret does (fleetkit sync restarts the agent when it hands one over).
RestartPreventExitStatus=77
NoNewPrivileges=yes
ProtectSystem=strict
ProtectHome=yes
PrivateTmp=yes
PrivateDevices=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
RestrictSUIDSGID=yes
RestrictRealtime=yes
RestrictNamespaces=yes
LockPersonality=yes
CapabilityBoundingSet=
AmbientCapabilities=
SystemCallArchitectures=native
RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX AF_NETLINK
ReadWritePaths=/var/lib/fleetkit
UMask=0077

[Install]
WantedBy=multi-user.target
FLEETKIT_AGENT_UNIT
chmod 0644 "$ROOT/etc/systemd/system/fleetkit-agent.service"
systemctl daemon-reload

log 'enrolling'
enroll_env=(FLEETKIT_AGENT_CONFIG="$ROOT/etc/fleetkit/agent.env")
# In a sandbox root the paths agent.env names move under it too (the environment wins
# over agent.env); on a host ROOT is empty and the agent reads agent.env alone.
if [ -n "$ROOT" ]; then
  enroll_env+=(FLEETKIT_GATEWAY_CA_FILE="$ROOT/etc/fleetkit/gateway-ca.pem"
    FLEETKIT_ENROLLMENT_SECRET_FILE="$ROOT/var/lib/fleetkit/enrollment-secret"
    FLEETKIT_AGENT_PKI_DIR="$ROOT/var/lib/fleetkit/pki")
fi
runuser -u fleetkit-agent -- env "${enroll_env[@]}" "$ROOT/usr/local/bin/fleetkit-agent" enroll

systemctl enable --now fleetkit-agent.service
log 'done: fleetkit-agent enrolled and enabled'
