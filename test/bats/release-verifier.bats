#!/usr/bin/env bats
# cloud-init/verify-release.sh against real releases: packed by `fleetkit release pack`,
# signed with openssl alone, served by a stub curl. Every refusal leaves the installed binary as it was.
bats_require_minimum_version 1.5.0

VERIFIER="$BATS_TEST_DIRNAME/../../cloud-init/verify-release.sh"

setup_file() {
  load helpers/dependencies
  require_bats_libraries
  require_commands node shellcheck openssl zstd tar sha256sum base64 awk cmp timeout
  load helpers/release

  local fixtures="$BATS_FILE_TMPDIR"
  release_keypair "$fixtures" release
  release_keypair "$fixtures" foreign
  mkdir -p "$fixtures/www/fleetkit"
  fake_agent "$fixtures/dist-1.1.0" amd64 1.1.0
  fake_agent "$fixtures/dist-1.2.3" amd64 1.2.3
  fake_agent "$fixtures/dist-1.2.3" arm64 1.2.3
  # A release whose name says 1.3.0 but whose binary is the old 1.1.0 one.
  fake_agent "$fixtures/dist-1.3.0-liar" amd64 1.1.0
  fleetkit_pack 1.1.0 "$fixtures/dist-1.1.0" "$fixtures/www/fleetkit/1.1.0"
  fleetkit_pack 1.2.3 "$fixtures/dist-1.2.3" "$fixtures/www/fleetkit/1.2.3"
  fleetkit_pack 1.3.0 "$fixtures/dist-1.3.0-liar" "$fixtures/www/fleetkit/1.3.0"
  # 1.1.0 is signed by fleetkit itself, the others with openssl alone: the verifier takes both.
  chmod 0600 "$fixtures/release.key"
  fleetkit release sign --key "$fixtures/release.key" --dir "$fixtures/www/fleetkit/1.1.0" >/dev/null
  openssl_sign "$fixtures/www/fleetkit/1.2.3" "$fixtures/release.key"
  openssl_sign "$fixtures/www/fleetkit/1.3.0" "$fixtures/release.key"
}

setup() {
  bats_load_library bats-support
  bats_load_library bats-assert
  load helpers/release
  KEYS="$BATS_FILE_TMPDIR"
  WWW="$BATS_TEST_TMPDIR/www"
  cp -a "$BATS_FILE_TMPDIR/www" "$WWW"
  install_curl_stub "$BATS_TEST_TMPDIR/bin" "$WWW" "$BATS_TEST_TMPDIR/curl.log"
  PATH="$BATS_TEST_TMPDIR/bin:$PATH"
  TARGET_DIR="$BATS_TEST_TMPDIR/root/usr/local/bin"
  TARGET="$TARGET_DIR/fleetkit-agent"
  mkdir -p "$TARGET_DIR"
  export TMPDIR="$BATS_TEST_TMPDIR/tmp"
  mkdir -p "$TMPDIR"
}

verify_release() {
  "$VERIFIER" --base-url "$RELEASE_TEST_BASE_URL" --arch amd64 --public-key "$KEYS/release.pub" --target "$TARGET" "$@"
}

# Installs 1.1.0 and keeps a copy, so a refused update can be compared byte for byte.
install_previous() {
  run --separate-stderr verify_release --version 1.1.0
  assert_success
  assert_output installed
  cp "$TARGET" "$BATS_TEST_TMPDIR/previous"
}

assert_previous_untouched() {
  cmp "$BATS_TEST_TMPDIR/previous" "$TARGET"
  [ "$(stat -c %a "$TARGET")" = 755 ]
  # No staged file is left beside the target, no work directory in TMPDIR.
  [ "$(find "$TARGET_DIR" -mindepth 1 | wc -l)" -eq 1 ]
  [ "$(find "$TMPDIR" -mindepth 1 | wc -l)" -eq 0 ]
}

# refused CODE STATUS: the last run failed with CODE's status and message, and nothing changed.
assert_refused() {
  local code=$1 status=$2
  assert_failure "$status"
  assert_output ''
  # shellcheck disable=SC2154 # bats' run --separate-stderr sets stderr
  [[ $stderr == "$code: "* ]] || fail "stderr is not '$code: ...': $stderr"
  assert_previous_untouched
}

# replace_archive VERSION DIR: the amd64 archive of VERSION becomes DIR tarred (as listed by
# the remaining arguments, relative to DIR), with SHA256SUMS rewritten and signed by the release key,
# so only the archive's contents are wrong.
replace_archive() {
  local version=$1 dir=$2
  shift 2
  local archive="$WWW/fleetkit/$version/fleetkit-agent-$version-linux-amd64.tar.zst"
  (cd "$dir" && tar -cP --owner=0 --group=0 -f - "$@") | zstd -q -c >"$archive.new"
  mv "$archive.new" "$archive"
  resum_and_sign "$WWW/fleetkit/$version" "$KEYS/release.key"
}

@test "verify-release: shellcheck passes" {
  run shellcheck "$VERIFIER"
  assert_success
}

@test "verify-release: installs a good release with mode 0755 and says installed" {
  run --separate-stderr verify_release --version 1.2.3
  assert_success
  assert_output installed
  [ "$(stat -c %a "$TARGET")" = 755 ]
  cmp "$BATS_FILE_TMPDIR/dist-1.2.3/linux-amd64/fleetkit-agent" "$TARGET"
  run "$TARGET" --version
  assert_output "fleetkit-agent 1.2.3 linux-amd64"
  # Exactly the three files, in order: signature material first, the archive last.
  run cat "$BATS_TEST_TMPDIR/curl.log"
  assert_output "$RELEASE_TEST_BASE_URL/1.2.3/SHA256SUMS
$RELEASE_TEST_BASE_URL/1.2.3/SHA256SUMS.sig
$RELEASE_TEST_BASE_URL/1.2.3/fleetkit-agent-1.2.3-linux-amd64.tar.zst"
}

@test "verify-release: a re-run of the same release says unchanged" {
  run --separate-stderr verify_release --version 1.2.3
  assert_output installed
  local before
  before=$(stat -c %i "$TARGET")
  run --separate-stderr verify_release --version 1.2.3
  assert_success
  assert_output unchanged
  [ "$(stat -c %i "$TARGET")" = "$before" ]
}

@test "verify-release: an update over an older release says installed" {
  install_previous
  run --separate-stderr verify_release --version 1.2.3
  assert_success
  assert_output installed
  cmp "$BATS_FILE_TMPDIR/dist-1.2.3/linux-amd64/fleetkit-agent" "$TARGET"
}

@test "verify-release: installs the arm64 archive when asked" {
  run --separate-stderr "$VERIFIER" --base-url "$RELEASE_TEST_BASE_URL/" --version 1.2.3 --arch arm64 --public-key "$KEYS/release.pub" --target "$TARGET"
  assert_success
  assert_output installed
  cmp "$BATS_FILE_TMPDIR/dist-1.2.3/linux-arm64/fleetkit-agent" "$TARGET"
}

@test "verify-release: refuses a release signed by a foreign key" {
  install_previous
  openssl_sign "$WWW/fleetkit/1.2.3" "$KEYS/foreign.key"
  run --separate-stderr verify_release --version 1.2.3
  assert_refused RELEASE_SIGNATURE_INVALID 13
}

@test "verify-release: refuses a SHA256SUMS edited after signing" {
  install_previous
  sed -i 's/^./0/' "$WWW/fleetkit/1.2.3/SHA256SUMS"
  run --separate-stderr verify_release --version 1.2.3
  assert_refused RELEASE_SIGNATURE_INVALID 13
}

@test "verify-release: refuses a signature that is not base64 of 64 bytes" {
  install_previous
  printf 'not a signature\n' >"$WWW/fleetkit/1.2.3/SHA256SUMS.sig"
  run --separate-stderr verify_release --version 1.2.3
  assert_refused RELEASE_SIGNATURE_INVALID 13
}

@test "verify-release: refuses a tampered archive" {
  install_previous
  local archive="$WWW/fleetkit/1.2.3/fleetkit-agent-1.2.3-linux-amd64.tar.zst"
  mkdir -p "$BATS_TEST_TMPDIR/evil"
  printf '#!/bin/sh\necho "fleetkit-agent 1.2.3"\n# evil\n' >"$BATS_TEST_TMPDIR/evil/fleetkit-agent"
  (cd "$BATS_TEST_TMPDIR/evil" && tar -c --owner=0 --group=0 -f - fleetkit-agent) | zstd -q -c >"$archive"
  run --separate-stderr verify_release --version 1.2.3
  assert_refused RELEASE_CHECKSUM_MISMATCH 14
}

@test "verify-release: refuses an extra entry" {
  install_previous
  local d="$BATS_TEST_TMPDIR/evil"
  mkdir -p "$d"
  cp "$BATS_FILE_TMPDIR/dist-1.2.3/linux-amd64/fleetkit-agent" "$d/fleetkit-agent"
  printf 'extra\n' >"$d/authorized_keys"
  replace_archive 1.2.3 "$d" fleetkit-agent authorized_keys
  run --separate-stderr verify_release --version 1.2.3
  assert_refused RELEASE_ARCHIVE_UNSAFE 15
}

@test "verify-release: refuses a symlink entry" {
  install_previous
  local d="$BATS_TEST_TMPDIR/evil"
  mkdir -p "$d"
  ln -s /bin/sh "$d/fleetkit-agent"
  replace_archive 1.2.3 "$d" fleetkit-agent
  run --separate-stderr verify_release --version 1.2.3
  assert_refused RELEASE_ARCHIVE_UNSAFE 15
  [[ $stderr == *"not a regular file"* ]]
}

@test "verify-release: refuses a hard link entry" {
  install_previous
  local d="$BATS_TEST_TMPDIR/evil"
  mkdir -p "$d"
  printf 'x\n' >"$d/other"
  ln "$d/other" "$d/fleetkit-agent"
  # Keep only the link entry: the archive then holds one entry, a hard link named fleetkit-agent.
  (cd "$d" && tar -c --owner=0 --group=0 -f "$BATS_TEST_TMPDIR/links.tar" other fleetkit-agent)
  tar --delete -f "$BATS_TEST_TMPDIR/links.tar" other
  [ "$(tar -tf "$BATS_TEST_TMPDIR/links.tar")" = fleetkit-agent ]
  zstd -q -c "$BATS_TEST_TMPDIR/links.tar" >"$WWW/fleetkit/1.2.3/fleetkit-agent-1.2.3-linux-amd64.tar.zst"
  resum_and_sign "$WWW/fleetkit/1.2.3" "$KEYS/release.key"
  run --separate-stderr verify_release --version 1.2.3
  assert_refused RELEASE_ARCHIVE_UNSAFE 15
}

@test "verify-release: refuses a directory entry" {
  install_previous
  local d="$BATS_TEST_TMPDIR/evil"
  mkdir -p "$d/fleetkit-agent"
  (cd "$d" && tar -c --no-recursion --owner=0 --group=0 -f - fleetkit-agent) | zstd -q -c >"$WWW/fleetkit/1.2.3/fleetkit-agent-1.2.3-linux-amd64.tar.zst"
  resum_and_sign "$WWW/fleetkit/1.2.3" "$KEYS/release.key"
  run --separate-stderr verify_release --version 1.2.3
  assert_refused RELEASE_ARCHIVE_UNSAFE 15
}

@test "verify-release: refuses a .. path" {
  install_previous
  local d="$BATS_TEST_TMPDIR/evil"
  mkdir -p "$d/sub"
  cp "$BATS_FILE_TMPDIR/dist-1.2.3/linux-amd64/fleetkit-agent" "$d/fleetkit-agent"
  replace_archive 1.2.3 "$d/sub" ../fleetkit-agent
  run --separate-stderr verify_release --version 1.2.3
  assert_refused RELEASE_ARCHIVE_UNSAFE 15
  [ ! -e "$TARGET_DIR/../fleetkit-agent" ]
}

@test "verify-release: refuses a path with a directory in it" {
  install_previous
  local d="$BATS_TEST_TMPDIR/evil"
  mkdir -p "$d/bin"
  cp "$BATS_FILE_TMPDIR/dist-1.2.3/linux-amd64/fleetkit-agent" "$d/bin/fleetkit-agent"
  (cd "$d" && tar -c --owner=0 --group=0 -f - ./bin/fleetkit-agent) | zstd -q -c >"$WWW/fleetkit/1.2.3/fleetkit-agent-1.2.3-linux-amd64.tar.zst"
  resum_and_sign "$WWW/fleetkit/1.2.3" "$KEYS/release.key"
  run --separate-stderr verify_release --version 1.2.3
  assert_refused RELEASE_ARCHIVE_UNSAFE 15
}

@test "verify-release: refuses an old release renamed as newer" {
  install_previous
  # The attacker serves the genuine, signed 1.1.0 files under 1.2.3 with the archive renamed.
  rm -rf "$WWW/fleetkit/1.2.3"
  cp -a "$WWW/fleetkit/1.1.0" "$WWW/fleetkit/1.2.3"
  mv "$WWW/fleetkit/1.2.3/fleetkit-agent-1.1.0-linux-amd64.tar.zst" "$WWW/fleetkit/1.2.3/fleetkit-agent-1.2.3-linux-amd64.tar.zst"
  run --separate-stderr verify_release --version 1.2.3
  assert_refused RELEASE_VERSION_MISMATCH 16
}

@test "verify-release: a release without a build for this architecture says so, not another release" {
  install_previous
  # 1.1.0 was packed for amd64 only.
  run --separate-stderr "$VERIFIER" --base-url "$RELEASE_TEST_BASE_URL" --version 1.1.0 --arch arm64 --public-key "$KEYS/release.pub" --target "$TARGET"
  assert_refused RELEASE_VERSION_MISMATCH 16
  [[ $stderr == *"release 1.1.0 has no build for arm64: the signed SHA256SUMS lists fleetkit-agent-1.1.0-linux-amd64.tar.zst only"* ]] || fail "stderr: $stderr"
}

@test "verify-release: refuses a signed release whose binary reports another version" {
  install_previous
  run --separate-stderr verify_release --version 1.3.0
  assert_refused RELEASE_VERSION_MISMATCH 16
  [[ $stderr == *"fleetkit-agent 1.1.0"* ]]
}

@test "verify-release: a signed binary that fails --version is refused with its status and first error line" {
  install_previous
  local d="$BATS_TEST_TMPDIR/broken"
  mkdir -p "$d"
  printf '#!/bin/sh\necho "node: bad option: --no-such-flag" >&2\necho second line >&2\nexit 9\n' >"$d/fleetkit-agent"
  chmod 0755 "$d/fleetkit-agent"
  replace_archive 1.2.3 "$d" fleetkit-agent
  run --separate-stderr verify_release --version 1.2.3
  assert_refused RELEASE_INSTALL_FAILED 17
  [[ $stderr == *"does not run on this host (--version exited 9: node: bad option: --no-such-flag)" ]] || fail "$stderr"
}

@test "verify-release: refuses a missing release as a download failure" {
  install_previous
  run --separate-stderr verify_release --version 9.9.9
  assert_refused RELEASE_DOWNLOAD_FAILED 12
}

@test "verify-release: refuses an archive over --max-bytes" {
  install_previous
  run --separate-stderr verify_release --version 1.2.3 --max-bytes 16
  assert_refused RELEASE_DOWNLOAD_FAILED 12
}

@test "verify-release: refuses a version with shell metacharacters before any download" {
  install_previous
  : >"$BATS_TEST_TMPDIR/curl.log"
  local bad
  # shellcheck disable=SC2016 # the $(...) and backquotes are the refused input, never expanded
  for bad in '1.2.3$(touch /tmp/pwned)' '1.2.3;id' '1.2.3 ' '`id`' '1.2' '1.2.3/../1.1.0'; do
    run --separate-stderr verify_release --version "$bad"
    assert_refused RELEASE_INPUT_INVALID 10
  done
  [ ! -s "$BATS_TEST_TMPDIR/curl.log" ]
}

@test "verify-release: refuses a base URL that is not plain https" {
  local bad
  # shellcheck disable=SC2016 # the $(id) is the refused input, never expanded
  for bad in http://releases.test/fleetkit 'https://releases.test/$(id)' 'https://user:pw@releases.test/' 'https://releases.test/a?b=c'; do
    run --separate-stderr "$VERIFIER" --base-url "$bad" --version 1.2.3 --arch amd64 --public-key "$KEYS/release.pub" --target "$TARGET"
    assert_failure 10
    [[ $stderr == "RELEASE_INPUT_INVALID: "* ]]
  done
  [ ! -e "$TARGET" ]
}

@test "verify-release: refuses a public key that is not Ed25519 PEM" {
  openssl genpkey -algorithm ec -pkeyopt ec_paramgen_curve:P-256 -out "$BATS_TEST_TMPDIR/ec.key" 2>/dev/null
  openssl pkey -in "$BATS_TEST_TMPDIR/ec.key" -pubout -out "$BATS_TEST_TMPDIR/ec.pub"
  run --separate-stderr "$VERIFIER" --base-url "$RELEASE_TEST_BASE_URL" --version 1.2.3 --arch amd64 --public-key "$BATS_TEST_TMPDIR/ec.pub" --target "$TARGET"
  assert_failure 10
  [[ $stderr == "RELEASE_INPUT_INVALID: "* ]]
}
