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
# How long the staged binary may take to answer --version before it counts as not running here.
readonly VERSION_TIMEOUT_SECONDS=300

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
if [ "$listed" -eq 0 ]; then
  # This version built for other architectures only: a missing build, not another release.
  others=$(awk -v v="$version" 'length($1) == 64 && $1 !~ /[^0-9a-f]/ {
    n = substr($0, 67); if (n == "fleetkit-agent-" v "-linux-amd64.tar.zst" || n == "fleetkit-agent-" v "-linux-arm64.tar.zst") print n
  }' "$sums" | tr '\n' ' ')
  [ -z "$others" ] ||
    fail RELEASE_VERSION_MISMATCH "release $version has no build for $arch: the signed SHA256SUMS lists ${others% } only, not $name"
  fail RELEASE_VERSION_MISMATCH "the signed SHA256SUMS does not list $name: this is not release $version"
fi
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

# A first boot on a small, busy host can take long to start Node (a whole test run once saw a VM miss
# 60 s); a binary that hangs is still stopped. Why it failed goes in the message: the status and its
# first line of error output.
version_status=0
reported=$(timeout "$VERSION_TIMEOUT_SECONDS" "$staged" --version 2>"$workdir/version.err") || version_status=$?
if [ "$version_status" -ne 0 ]; then
  [ "$version_status" -eq 124 ] &&
    fail RELEASE_INSTALL_FAILED "$AGENT_ENTRY $version did not answer --version within $VERSION_TIMEOUT_SECONDS s on this host"
  fail RELEASE_INSTALL_FAILED "$AGENT_ENTRY $version does not run on this host (--version exited $version_status: $(head -n 1 "$workdir/version.err" | head -c 200))"
fi
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
