#!/bin/bash
# fleetkit agent seed: the first boot of a node that runs fleetkit-agent (rendered by
# `fleetkit seed NODE --kind agent`). fleetkit validated every value before rendering and
# every heredoc is quoted, so nothing below is expanded from a value. It does the minimum
# to enroll: everything after first boot is the Ansible roles' work.
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
  "$ROOT/etc/modules-load.d" "$ROOT/etc/sysctl.d" "$ROOT/etc/systemd/system"
install -d -m 0700 "$ROOT/var/lib/fleetkit"

cat > "$ROOT/etc/fleetkit/agent.env" <<'FLEETKIT_AGENT_ENV'
FLEETKIT_NODE_ID=build-1
FLEETKIT_GATEWAY_URL=https://gateway.example.net:8443
FLEETKIT_ENROLL_URL=https://enroll.example.net:8444
FLEETKIT_GATEWAY_CA_FILE=/etc/fleetkit/gateway-ca.pem
FLEETKIT_ENROLLMENT_SECRET_FILE=/var/lib/fleetkit/enrollment-secret
FLEETKIT_AGENT_PKI_DIR=/var/lib/fleetkit/pki
FLEETKIT_DATA_MOUNT=/var/lib/fleetkit
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

log 'loading br_netfilter and the bridge sysctls'
cat > "$ROOT/etc/modules-load.d/fleetkit.conf" <<'FLEETKIT_MODULES'
br_netfilter
FLEETKIT_MODULES
cat > "$ROOT/etc/sysctl.d/90-fleetkit.conf" <<'FLEETKIT_SYSCTL'
net.bridge.bridge-nf-call-iptables = 1
net.bridge.bridge-nf-call-ip6tables = 1
FLEETKIT_SYSCTL
chmod 0644 "$ROOT/etc/modules-load.d/fleetkit.conf" "$ROOT/etc/sysctl.d/90-fleetkit.conf"
# A kernel with br_netfilter built in has no module to load but has the sysctls.
if ! modprobe br_netfilter && [ ! -d /proc/sys/net/bridge ]; then
  log 'br_netfilter is neither loadable nor built in; the br_netfilter role will report it'
fi
sysctl --load "$ROOT/etc/sysctl.d/90-fleetkit.conf" >/dev/null || log 'bridge sysctls not applied yet'

log 'installing packages'
export DEBIAN_FRONTEND=noninteractive
# On first boot unattended-upgrades may hold the dpkg lock: wait for it instead of failing.
apt-get -o DPkg::Lock::Timeout=600 update -q
apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends ca-certificates curl openssl zstd nodejs

log 'verifying and installing the signed agent release'
cat > "$ROOT/usr/local/lib/fleetkit/verify-release.sh" <<'FLEETKIT_VERIFY_RELEASE'
#!/bin/bash
# verify-release.sh: downloads one signed fleetkit-agent release, verifies it against the
# pinned Ed25519 key and installs it atomically. The one verifier: the agent seed embeds it,
# the agent_update Ansible role runs it.
#
# Usage: verify-release.sh --base-url URL --version V --public-key KEY.pem
#          [--arch amd64|arm64] [--ca-file CA.pem] [--target /usr/local/bin/fleetkit-agent]
#          [--max-bytes N]
#
# Reads <URL>/<V>/SHA256SUMS, SHA256SUMS.sig and fleetkit-agent-<V>-linux-<arch>.tar.zst.
# On success prints "installed" (the binary changed) or "unchanged" on stdout and exits 0,
# so a caller restarts the agent only on "installed". Every refusal prints "CODE: message"
# on stderr, exits with the code's own status and leaves the installed binary untouched.
set -euo pipefail

readonly AGENT_ENTRY=fleetkit-agent
readonly MAX_SUMS_BYTES=65536
readonly MAX_SIG_BYTES=4096

# Exit statuses match src/checks/codes/release.ts, so the CLI and the host agree.
fail() {
  local code=$1 status=1
  shift
  case $code in
    RELEASE_INPUT_INVALID) status=10 ;;
    RELEASE_TOOL_MISSING) status=11 ;;
    RELEASE_DOWNLOAD_FAILED) status=12 ;;
    RELEASE_SIGNATURE_INVALID) status=13 ;;
    RELEASE_CHECKSUM_MISMATCH) status=14 ;;
    RELEASE_ARCHIVE_UNSAFE) status=15 ;;
    RELEASE_VERSION_MISMATCH) status=16 ;;
    RELEASE_INSTALL_FAILED) status=17 ;;
  esac
  printf '%s: %s\n' "$code" "$*" >&2
  exit "$status"
}

usage() {
  sed -n '6,8p' "$0" | sed 's/^# \{0,1\}//'
}

base_url=""
version=""
arch=""
public_key=""
ca_file=""
target=/usr/local/bin/fleetkit-agent
max_bytes=268435456

while [ $# -gt 0 ]; do
  case $1 in
    --base-url | --version | --arch | --public-key | --ca-file | --target | --max-bytes)
      [ $# -ge 2 ] || fail RELEASE_INPUT_INVALID "$1 needs a value"
      case $1 in
        --base-url) base_url=$2 ;;
        --version) version=$2 ;;
        --arch) arch=$2 ;;
        --public-key) public_key=$2 ;;
        --ca-file) ca_file=$2 ;;
        --target) target=$2 ;;
        --max-bytes) max_bytes=$2 ;;
      esac
      shift 2
      ;;
    -h | --help)
      usage
      exit 0
      ;;
    *) fail RELEASE_INPUT_INVALID "unknown argument: $1" ;;
  esac
done

# --- inputs: validated, never escaped and hoped for -------------------------------------

for tool in curl openssl sha256sum zstd tar base64 awk head cmp timeout mktemp sync stat; do
  command -v "$tool" >/dev/null 2>&1 || fail RELEASE_TOOL_MISSING "$tool is not installed (apt-get install ca-certificates curl openssl zstd)"
done

[[ $base_url =~ ^https://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~%/-]*)?$ ]] ||
  fail RELEASE_INPUT_INVALID "--base-url must be https://host[:port][/path] without query, credentials or shell metacharacters"
while [ "${base_url%/}" != "$base_url" ]; do base_url=${base_url%/}; done

[[ ${#version} -le 64 && $version =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z][0-9A-Za-z.-]*)?$ ]] ||
  fail RELEASE_INPUT_INVALID "--version must be MAJOR.MINOR.PATCH[-PRERELEASE] (letters, digits, . and -, at most 64 characters)"

if [ -z "$arch" ]; then
  case $(uname -m) in
    x86_64 | amd64) arch=amd64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) fail RELEASE_INPUT_INVALID "no release for this machine's architecture $(uname -m); pass --arch" ;;
  esac
fi
case $arch in
  amd64 | arm64) ;;
  *) fail RELEASE_INPUT_INVALID "--arch must be amd64 or arm64" ;;
esac

if [ -z "$public_key" ] || [ ! -f "$public_key" ] || [ ! -r "$public_key" ]; then
  fail RELEASE_INPUT_INVALID "--public-key must name a readable SPKI PEM file"
fi
key_type=$(openssl pkey -pubin -in "$public_key" -noout -text 2>/dev/null | head -n 1) || key_type=""
[[ $key_type == ED25519* ]] || fail RELEASE_INPUT_INVALID "--public-key $public_key is not an Ed25519 public key in PEM"

if [ -n "$ca_file" ]; then
  if [ ! -f "$ca_file" ] || [ ! -r "$ca_file" ]; then fail RELEASE_INPUT_INVALID "--ca-file must name a readable PEM file"; fi
fi

[[ $target =~ ^/[A-Za-z0-9._/-]*[A-Za-z0-9._-]$ ]] ||
  fail RELEASE_INPUT_INVALID "--target must be an absolute path of letters, digits, ., _, - and /"
target_dir=${target%/*}
target_dir=${target_dir:-/}
[ -d "$target_dir" ] || fail RELEASE_INPUT_INVALID "the target directory $target_dir does not exist"
if [ -e "$target" ] && [ ! -f "$target" ]; then
  fail RELEASE_INPUT_INVALID "the target $target exists and is not a regular file"
fi

[[ $max_bytes =~ ^[1-9][0-9]{0,11}$ ]] || fail RELEASE_INPUT_INVALID "--max-bytes must be a positive integer"

# --- downloads ----------------------------------------------------------------------------

workdir=""
staged=""
cleanup() {
  if [ -n "$staged" ]; then rm -f -- "$staged"; fi
  if [ -n "$workdir" ]; then rm -rf -- "$workdir"; fi
}
trap cleanup EXIT
workdir=$(mktemp -d "${TMPDIR:-/tmp}/fleetkit-release.XXXXXX") || fail RELEASE_INSTALL_FAILED "cannot create a work directory"

# download NAME LIMIT: <base>/<version>/NAME into the work directory, at most LIMIT bytes.
# curl's --max-filesize cannot refuse a body of unknown length, so head bounds what is written.
download() {
  local name=$1 limit=$2 status=0 size
  local url="$base_url/$version/$name"
  local args=(--fail --silent --show-error --location --proto '=https' --proto-redir '=https'
    --max-filesize "$limit" --connect-timeout 20 --max-time 900 --retry 3)
  if [ -n "$ca_file" ]; then args+=(--cacert "$ca_file"); fi
  curl "${args[@]}" "$url" 2>"$workdir/curl.err" | head -c "$((limit + 1))" >"$workdir/$name" || status=$?
  size=$(stat -c %s -- "$workdir/$name")
  if [ "$size" -gt "$limit" ]; then
    fail RELEASE_DOWNLOAD_FAILED "$url is larger than $limit bytes"
  fi
  if [ "$status" -ne 0 ]; then
    fail RELEASE_DOWNLOAD_FAILED "cannot download $url (status $status: $(head -n 1 "$workdir/curl.err"))"
  fi
}

name="fleetkit-agent-$version-linux-$arch.tar.zst"
sums="$workdir/SHA256SUMS"

download SHA256SUMS "$MAX_SUMS_BYTES"
download SHA256SUMS.sig "$MAX_SIG_BYTES"

# --- 1. the signature over the exact bytes of SHA256SUMS ----------------------------------

tr -d ' \t\r\n' <"$workdir/SHA256SUMS.sig" >"$workdir/sig.b64"
if ! grep -Eq '^[A-Za-z0-9+/]+={0,2}$' "$workdir/sig.b64" ||
  ! base64 -d <"$workdir/sig.b64" >"$workdir/sig.bin" 2>/dev/null ||
  [ "$(stat -c %s -- "$workdir/sig.bin")" -ne 64 ]; then
  fail RELEASE_SIGNATURE_INVALID "SHA256SUMS.sig is not base64 of a 64-byte Ed25519 signature"
fi
openssl pkeyutl -verify -rawin -pubin -inkey "$public_key" -sigfile "$workdir/sig.bin" -in "$sums" >/dev/null 2>&1 ||
  fail RELEASE_SIGNATURE_INVALID "SHA256SUMS.sig is not a signature of SHA256SUMS by the key in $public_key"

# --- 2. the exact name of this version and architecture in the signed sums ----------------

awk -v name="$name" 'length($1) == 64 && $1 !~ /[^0-9a-f]/ && (substr($0, 65) == "  " name || substr($0, 65) == " *" name)' \
  "$sums" >"$workdir/expected.sum"
listed=$(wc -l <"$workdir/expected.sum")
[ "$listed" -ne 0 ] || fail RELEASE_VERSION_MISMATCH "the signed SHA256SUMS does not list $name: this is not release $version"
[ "$listed" -eq 1 ] || fail RELEASE_CHECKSUM_MISMATCH "the signed SHA256SUMS lists $name $listed times"

# --- 3. the archive and its SHA-256 ---------------------------------------------------------

download "$name" "$max_bytes"
(cd "$workdir" && sha256sum -c --strict --status expected.sum) ||
  fail RELEASE_CHECKSUM_MISMATCH "$name does not match its SHA-256 in the signed SHA256SUMS"

# --- 4. only one regular file named fleetkit-agent ------------------------------------------

zstd -q -dc -- "$workdir/$name" | tar -tvP --numeric-owner -f - >"$workdir/listing" 2>/dev/null ||
  fail RELEASE_ARCHIVE_UNSAFE "$name is not a readable tar.zst archive"
zstd -q -dc -- "$workdir/$name" | tar -tP -f - >"$workdir/names" 2>/dev/null ||
  fail RELEASE_ARCHIVE_UNSAFE "$name is not a readable tar.zst archive"
entries=$(wc -l <"$workdir/names")
[ "$entries" -eq 1 ] || fail RELEASE_ARCHIVE_UNSAFE "$name holds $entries entries; exactly one, $AGENT_ENTRY, is allowed"
[ "$(cat "$workdir/names")" = "$AGENT_ENTRY" ] ||
  fail RELEASE_ARCHIVE_UNSAFE "$name holds an entry that is not exactly $AGENT_ENTRY (paths with / or .. are refused)"
kind=$(head -c 1 "$workdir/listing")
[ "$kind" = "-" ] || fail RELEASE_ARCHIVE_UNSAFE "$AGENT_ENTRY in $name is not a regular file (type $kind)"
entry_size=$(awk 'NR == 1 { print $3 }' "$workdir/listing")
if ! [[ $entry_size =~ ^[0-9]+$ ]] || [ "$entry_size" -gt "$max_bytes" ]; then
  fail RELEASE_ARCHIVE_UNSAFE "$AGENT_ENTRY in $name is larger than $max_bytes bytes"
fi

# --- 5. write it beside the target, check its version, rename it over the target ----------

staged=$(mktemp "$target_dir/.fleetkit-agent.XXXXXX") || fail RELEASE_INSTALL_FAILED "cannot write in $target_dir"
# -O writes the one vetted member to stdout: tar never creates a path of its own.
zstd -q -dc -- "$workdir/$name" | tar -xOf - "$AGENT_ENTRY" | head -c "$((max_bytes + 1))" >"$staged" ||
  fail RELEASE_INSTALL_FAILED "cannot extract $AGENT_ENTRY beside $target"
[ "$(stat -c %s -- "$staged")" -eq "$entry_size" ] || fail RELEASE_ARCHIVE_UNSAFE "$AGENT_ENTRY did not extract to its listed size"
chmod 0755 -- "$staged" || fail RELEASE_INSTALL_FAILED "cannot chmod $staged"
sync -- "$staged" || fail RELEASE_INSTALL_FAILED "cannot fsync $staged"

reported=$(timeout 60 "$staged" --version 2>/dev/null) || fail RELEASE_INSTALL_FAILED "$AGENT_ENTRY $version does not run on this host (--version failed)"
first_line=${reported%%$'\n'*}
read -r -a words <<<"${first_line//\// }"
matched=no
for word in "${words[@]}"; do
  if [ "$word" = "$version" ] || [ "$word" = "v$version" ]; then matched=yes; fi
done
[ "$matched" = yes ] || fail RELEASE_VERSION_MISMATCH "$AGENT_ENTRY --version printed \"$first_line\", not $version"

if [ -f "$target" ] && [ "$(stat -c %a -- "$target")" = 755 ] && cmp -s -- "$staged" "$target"; then
  echo unchanged
  exit 0
fi
mv -fT -- "$staged" "$target" || fail RELEASE_INSTALL_FAILED "cannot rename the new binary over $target"
staged=""
sync -- "$target_dir" || true
echo installed
FLEETKIT_VERIFY_RELEASE
chmod 0755 "$ROOT/usr/local/lib/fleetkit/verify-release.sh"

release_url=$(env_value "$ROOT/etc/fleetkit/release.env" FLEETKIT_RELEASE_URL)
release_version=$(env_value "$ROOT/etc/fleetkit/release.env" FLEETKIT_RELEASE_VERSION)
# The one verifier (shared with the agent_update role): signature, checksum, a single
# regular file, --version, atomic rename. Any refusal stops the seed here.
verify_args=(--base-url "$release_url" --version "$release_version"
  --public-key "$ROOT/etc/fleetkit/release-public-key.pem" --target "$ROOT/usr/local/bin/fleetkit-agent")
if grep -q 'BEGIN CERTIFICATE' "$ROOT/etc/fleetkit/release-ca.pem"; then
  verify_args+=(--ca-file "$ROOT/etc/fleetkit/release-ca.pem")
fi
"$ROOT/usr/local/lib/fleetkit/verify-release.sh" "${verify_args[@]}"

log 'installing the agent unit'
if ! id -u fleetkit >/dev/null 2>&1; then
  useradd --system --home-dir /var/lib/fleetkit --shell /usr/sbin/nologin --user-group fleetkit
fi
chown fleetkit:fleetkit "$ROOT/var/lib/fleetkit" "$ROOT/var/lib/fleetkit/enrollment-secret"
cat > "$ROOT/etc/systemd/system/fleetkit-agent.service" <<'FLEETKIT_AGENT_UNIT'
# fleetkit-agent: heartbeats, job leases and certificate renewal over mTLS.
# Installed by the agent seed; the agent role owns it after first boot.
[Unit]
Description=fleetkit agent
Documentation=https://github.com/fleetkit/fleetkit/blob/main/docs/seeds-and-inventory.md
Wants=network-online.target
After=network-online.target
# Waits for the data volume (mounted by the data_volume role or the operator).
ConditionPathIsMountPoint=/var/lib/fleetkit

[Service]
Type=simple
User=fleetkit
Group=fleetkit
EnvironmentFile=/etc/fleetkit/agent.env
ExecStart=/usr/local/bin/fleetkit-agent run
Restart=always
RestartSec=5
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
runuser -u fleetkit -- env FLEETKIT_AGENT_CONFIG="$ROOT/etc/fleetkit/agent.env" \
  "$ROOT/usr/local/bin/fleetkit-agent" enroll

systemctl enable --now fleetkit-agent.service
log 'done: fleetkit-agent enrolled and enabled'
