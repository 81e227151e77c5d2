# Shared bats setup_suite: checks once, before any test, that what the shell suites
# run is installed, and says what is missing. Per-suite extras are in each file's setup_file.
# shellcheck source=test/bats/helpers/dependencies.bash
source "$(dirname "${BASH_SOURCE[0]}")/dependencies.bash"

setup_suite() {
  require_bats_libraries
  require_commands node shellcheck openssl zstd tar curl sha256sum base64 awk cmp timeout
}
