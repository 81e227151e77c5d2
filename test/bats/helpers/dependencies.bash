# Shared bats helper: say exactly which programs or bats libraries a suite needs and lacks,
# instead of letting tests fail one by one with "command not found".

# require_commands CMD...: fails (with the Debian packages to install) when any CMD is missing.
require_commands() {
  local missing=() cmd
  for cmd in "$@"; do
    command -v "$cmd" >/dev/null 2>&1 || missing+=("$cmd")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    printf 'missing programs: %s (Debian: apt-get install %s)\n' "${missing[*]}" "$(package_hint "${missing[@]}")" >&2
    return 1
  fi
}

# require_bats_libraries: bats-support and bats-assert, found by bats_load_library.
require_bats_libraries() {
  local lib missing=()
  for lib in bats-support bats-assert; do
    [ -d "/usr/lib/bats/$lib" ] || [ -d "${BATS_LIB_PATH%%:*}/$lib" ] || missing+=("$lib")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    printf 'missing bats libraries: %s (Debian: apt-get install %s)\n' "${missing[*]}" "${missing[*]}" >&2
    return 1
  fi
}

package_hint() {
  local cmd out=()
  for cmd in "$@"; do
    case $cmd in
      sha256sum | base64 | timeout | stat | mktemp | sync | head) out+=(coreutils) ;;
      cmp) out+=(diffutils) ;;
      node) out+=(nodejs) ;;
      *) out+=("$cmd") ;;
    esac
  done
  printf '%s' "${out[*]}"
}
