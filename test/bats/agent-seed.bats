#!/usr/bin/env bats
# The rendered agent seed, run for real in a sandbox root: stubbed apt-get, systemctl,
# modprobe, sysctl, useradd, chown and runuser, and a curl serving a release that
# `fleetkit release pack` built and openssl signed. A bad release stops it before anything is installed.

bats_require_minimum_version 1.5.0

setup_file() {
  bats_load_library bats-support
  load helpers/dependencies
  require_commands node openssl zstd tar shellcheck sha256sum base64
  load helpers/release

  export SUITE="$BATS_FILE_TMPDIR"
  mkdir -p "$SUITE/keys" "$SUITE/dist" "$SUITE/old-dist"
  release_keypair "$SUITE/keys" release
  release_keypair "$SUITE/keys" foreign
  fake_agent "$SUITE/dist" amd64 1.2.3
  fake_agent "$SUITE/dist" arm64 1.2.3
  fake_agent "$SUITE/old-dist" amd64 1.2.2
  fake_agent "$SUITE/old-dist" arm64 1.2.2
  fleetkit_pack 1.2.3 "$SUITE/dist" "$SUITE/release-1.2.3"
  openssl_sign "$SUITE/release-1.2.3" "$SUITE/keys/release.key"
  fleetkit_pack 1.2.2 "$SUITE/old-dist" "$SUITE/release-1.2.2"
  openssl_sign "$SUITE/release-1.2.2" "$SUITE/keys/release.key"

  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=fleetkit-test-ca \
    -days 2 -keyout "$SUITE/ca.key" -out "$SUITE/ca.pem" 2>/dev/null
  export SEED_SECRET=0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0
  SEED_RELEASE_PUBLIC_KEY=$(openssl pkey -pubin -in "$SUITE/keys/release.pub" -outform DER | tail -c 32 | base64 -w0)
  export SEED_RELEASE_PUBLIC_KEY SEED_CA_FILE="$SUITE/ca.pem" SEED_RELEASE_URL=https://releases.test/fleetkit SEED_RELEASE_VERSION=1.2.3
  (cd "$RELEASE_HELPERS_REPO" && node --import tsx test/support/render-agent-seed.ts) >"$SUITE/seed.sh"
  (cd "$RELEASE_HELPERS_REPO" && SEED_RELEASE_CA_FILE="$SUITE/ca.pem" node --import tsx test/support/render-agent-seed.ts) >"$SUITE/seed-private-mirror.sh"
  (cd "$RELEASE_HELPERS_REPO" && SEED_DATA_MOUNT='' node --import tsx test/support/render-agent-seed.ts) >"$SUITE/seed-no-volume.sh"
}

setup() {
  bats_load_library bats-support
  bats_load_library bats-assert
  load helpers/release
  ROOT="$BATS_TEST_TMPDIR/root"
  BIN="$BATS_TEST_TMPDIR/bin"
  WWW="$BATS_TEST_TMPDIR/www"
  LOG="$BATS_TEST_TMPDIR/calls.log"
  mkdir -p "$ROOT" "$BIN" "$WWW/fleetkit"
  : >"$LOG"
  install_curl_stub "$BIN" "$WWW" "$BATS_TEST_TMPDIR/urls.log"
  local cmd
  for cmd in apt-get systemctl modprobe sysctl useradd chown; do
    printf '#!/bin/bash\necho "%s $*" >>"%s"\n' "$cmd" "$LOG" >"$BIN/$cmd"
    chmod 0755 "$BIN/$cmd"
  done
  # runuser -u USER -- CMD...: logged, then CMD runs as this user.
  # shellcheck disable=SC2016 # $* and $1 are the stub's own, expanded when it runs
  printf '#!/bin/bash\necho "runuser $*" >>"%s"\nwhile [ "$1" != -- ]; do shift; done\nshift\nexec "$@"\n' "$LOG" >"$BIN/runuser"
  chmod 0755 "$BIN/runuser"
}

serve() {
  cp -r "$1" "$WWW/fleetkit/1.2.3"
}

run_seed() {
  run --separate-stderr env PATH="$BIN:$PATH" FLEETKIT_SEED_ROOT="$ROOT" bash "$SUITE/seed.sh"
}

mode() {
  stat -c %a "$1"
}

refute_installed() {
  assert [ ! -e "$ROOT/usr/local/bin/fleetkit-agent" ]
  assert [ ! -e "$ROOT/etc/systemd/system/fleetkit-agent.service" ]
  run grep -E 'runuser|systemctl enable' "$LOG"
  assert_failure
}

@test "seed: installs the signed agent, writes every file with its mode and enrolls" {
  serve "$SUITE/release-1.2.3"
  run_seed
  assert_success
  assert [ "$(mode "$ROOT/etc/fleetkit/agent.env")" = 644 ]
  assert [ "$(mode "$ROOT/etc/fleetkit/gateway-ca.pem")" = 644 ]
  assert [ "$(mode "$ROOT/etc/fleetkit/release-public-key.pem")" = 644 ]
  assert [ "$(mode "$ROOT/var/lib/fleetkit")" = 700 ]
  assert [ "$(mode "$ROOT/var/lib/fleetkit/enrollment-secret")" = 600 ]
  assert [ "$(cat "$ROOT/var/lib/fleetkit/enrollment-secret")" = "$SEED_SECRET" ]
  assert [ "$(mode "$ROOT/usr/local/bin/fleetkit-agent")" = 755 ]
  assert [ "$(mode "$ROOT/etc/systemd/system/fleetkit-agent.service")" = 644 ]
  # br_netfilter is the br_netfilter role's work (first sync), not the seed's.
  assert [ ! -e "$ROOT/etc/modules-load.d/fleetkit.conf" ]
  assert [ ! -e "$ROOT/etc/sysctl.d/90-fleetkit.conf" ]
  cmp "$SUITE/ca.pem" "$ROOT/etc/fleetkit/gateway-ca.pem"
  cmp "$SUITE/keys/release.pub" "$ROOT/etc/fleetkit/release-public-key.pem"
  cmp "$SUITE/dist/linux-amd64/fleetkit-agent" "$ROOT/usr/local/bin/fleetkit-agent"
  run grep -x 'FLEETKIT_NODE_ID=node-1' "$ROOT/etc/fleetkit/agent.env"
  assert_success
  run grep -x 'ConditionPathIsMountPoint=/srv/fleetkit' "$ROOT/etc/systemd/system/fleetkit-agent.service"
  assert_success
  run cat "$LOG"
  refute_line --partial 'modprobe'
  refute_line --partial 'sysctl'
  assert_line 'apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends ca-certificates curl openssl zstd nodejs'
  assert_line --partial 'runuser -u fleetkit-agent -- env FLEETKIT_AGENT_CONFIG='
  assert_line --partial "$ROOT/usr/local/bin/fleetkit-agent enroll"
  assert_line 'systemctl enable --now fleetkit-agent.service'
}

@test "seed: a node without a data volume gets an agent unit that starts (no mount condition)" {
  serve "$SUITE/release-1.2.3"
  run --separate-stderr env PATH="$BIN:$PATH" FLEETKIT_SEED_ROOT="$ROOT" bash "$SUITE/seed-no-volume.sh"
  assert_success
  run grep -c '^ConditionPathIsMountPoint=' "$ROOT/etc/systemd/system/fleetkit-agent.service"
  assert_output 0
  # Empty: the agent's host:data-volume check warns instead of failing (docs/agent.md).
  run grep -x 'FLEETKIT_DATA_MOUNT=' "$ROOT/etc/fleetkit/agent.env"
  assert_success
  run cat "$LOG"
  assert_line 'systemctl enable --now fleetkit-agent.service'
}

@test "seed: a release signed by a foreign key stops it before anything is installed" {
  serve "$SUITE/release-1.2.3"
  openssl_sign "$WWW/fleetkit/1.2.3" "$SUITE/keys/foreign.key"
  run_seed
  assert_failure
  # shellcheck disable=SC2154 # bats' run --separate-stderr (run_seed) sets stderr
  [[ $stderr == *RELEASE_SIGNATURE_INVALID* ]] || fail "expected RELEASE_SIGNATURE_INVALID, stderr: $stderr"
  refute_installed
}

@test "seed: a tampered archive stops it before anything is installed" {
  serve "$SUITE/release-1.2.3"
  printf 'x' >>"$WWW/fleetkit/1.2.3/fleetkit-agent-1.2.3-linux-amd64.tar.zst"
  run_seed
  assert_failure
  [[ $stderr == *RELEASE_CHECKSUM_MISMATCH* ]] || fail "expected RELEASE_CHECKSUM_MISMATCH, stderr: $stderr"
  refute_installed
}

@test "seed: an archive with an extra entry stops it before anything is installed" {
  serve "$SUITE/release-1.2.3"
  local build="$BATS_TEST_TMPDIR/build"
  mkdir -p "$build"
  cp "$SUITE/dist/linux-amd64/fleetkit-agent" "$build/fleetkit-agent"
  echo extra >"$build/extra"
  tar -C "$build" -cf - fleetkit-agent extra | zstd -q >"$WWW/fleetkit/1.2.3/fleetkit-agent-1.2.3-linux-amd64.tar.zst"
  resum_and_sign "$WWW/fleetkit/1.2.3" "$SUITE/keys/release.key"
  run_seed
  assert_failure
  [[ $stderr == *RELEASE_ARCHIVE_UNSAFE* ]] || fail "expected RELEASE_ARCHIVE_UNSAFE, stderr: $stderr"
  refute_installed
}

@test "seed: an archive whose entry is a symlink stops it before anything is installed" {
  serve "$SUITE/release-1.2.3"
  local build="$BATS_TEST_TMPDIR/build"
  mkdir -p "$build"
  ln -s /bin/sh "$build/fleetkit-agent"
  tar -C "$build" -cf - fleetkit-agent | zstd -q >"$WWW/fleetkit/1.2.3/fleetkit-agent-1.2.3-linux-amd64.tar.zst"
  resum_and_sign "$WWW/fleetkit/1.2.3" "$SUITE/keys/release.key"
  run_seed
  assert_failure
  [[ $stderr == *RELEASE_ARCHIVE_UNSAFE* ]] || fail "expected RELEASE_ARCHIVE_UNSAFE, stderr: $stderr"
  refute_installed
}

@test "seed: an old release renamed as the pinned version stops it before anything is installed" {
  local dir="$WWW/fleetkit/1.2.3"
  cp -r "$SUITE/release-1.2.2" "$dir"
  mv "$dir/fleetkit-agent-1.2.2-linux-amd64.tar.zst" "$dir/fleetkit-agent-1.2.3-linux-amd64.tar.zst"
  mv "$dir/fleetkit-agent-1.2.2-linux-arm64.tar.zst" "$dir/fleetkit-agent-1.2.3-linux-arm64.tar.zst"
  run_seed
  assert_failure
  [[ $stderr == *RELEASE_VERSION_MISMATCH* ]] || fail "expected RELEASE_VERSION_MISMATCH, stderr: $stderr"
  refute_installed
}

@test "seed: a private mirror's CA (release.caFile) reaches every download as --cacert" {
  serve "$SUITE/release-1.2.3"
  mv "$BIN/curl" "$BIN/curl-stub"
  printf '#!/bin/bash\necho "curl $*" >>"%s"\nexec "%s" "$@"\n' "$LOG" "$BIN/curl-stub" >"$BIN/curl"
  chmod 0755 "$BIN/curl"
  run --separate-stderr env PATH="$BIN:$PATH" FLEETKIT_SEED_ROOT="$ROOT" bash "$SUITE/seed-private-mirror.sh"
  assert_success
  cmp "$SUITE/ca.pem" "$ROOT/etc/fleetkit/release-ca.pem"
  assert [ "$(grep -c "^curl .*--cacert $ROOT/etc/fleetkit/release-ca.pem " "$LOG")" -eq 3 ]
  assert [ -x "$ROOT/usr/local/bin/fleetkit-agent" ]
}

@test "seed: shellcheck passes on the template and on the rendered seed" {
  run shellcheck -s bash "$RELEASE_HELPERS_REPO/cloud-init/agent-seed.sh.tmpl"
  assert_success
  run shellcheck -s bash "$SUITE/seed.sh"
  assert_success
  run shellcheck -s bash "$SUITE/seed-private-mirror.sh"
  assert_success
}
