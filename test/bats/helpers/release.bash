# Shared bats helper for anything that installs a fleetkit-agent release: build a real
# release with `fleetkit release pack`, sign it with openssl alone, and serve it through a
# stub `curl` that reads https://releases.test/<path> from a directory.
#
#   release_keypair DIR NAME          -> DIR/NAME.key (PKCS#8 PEM) and DIR/NAME.pub (SPKI PEM)
#   fake_agent DIST ARCH PRINTED      -> DIST/linux-ARCH/fleetkit-agent printing "fleetkit-agent PRINTED"
#   fleetkit_pack VERSION DIST OUT    -> `fleetkit release pack` into OUT (the version directory)
#   openssl_sign DIR KEY              -> DIR/SHA256SUMS.sig with `openssl pkeyutl -sign -rawin`
#   resum_and_sign DIR KEY            -> rewrite DIR/SHA256SUMS for the archives there, then sign it
#   install_curl_stub BINDIR WWW LOG  -> BINDIR/curl serving https://releases.test/* from WWW
RELEASE_HELPERS_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
export RELEASE_HELPERS_REPO
export RELEASE_TEST_BASE_URL=https://releases.test/fleetkit

release_keypair() {
  local dir=$1 name=$2
  (umask 077 && openssl genpkey -algorithm ed25519 -out "$dir/$name.key")
  openssl pkey -in "$dir/$name.key" -pubout -out "$dir/$name.pub"
}

fake_agent() {
  local dist=$1 arch=$2 printed=$3
  mkdir -p "$dist/linux-$arch"
  printf '#!/bin/sh\n# a stand-in for fleetkit-agent\necho "fleetkit-agent %s linux-%s"\n' "$printed" "$arch" >"$dist/linux-$arch/fleetkit-agent"
  chmod 0755 "$dist/linux-$arch/fleetkit-agent"
}

fleetkit() {
  (cd "$RELEASE_HELPERS_REPO" && node bin/dev.js "$@")
}

fleetkit_pack() {
  local version=$1 dist=$2 out=$3
  fleetkit release pack --version "$version" --input "$dist" --output "$out" >/dev/null
}

openssl_sign() {
  local dir=$1 key=$2
  openssl pkeyutl -sign -rawin -inkey "$key" -in "$dir/SHA256SUMS" -out "$dir/SHA256SUMS.bin"
  base64 -w0 "$dir/SHA256SUMS.bin" >"$dir/SHA256SUMS.sig"
  rm -f "$dir/SHA256SUMS.bin"
}

resum_and_sign() {
  local dir=$1 key=$2
  (cd "$dir" && sha256sum -- fleetkit-agent-*.tar.zst >SHA256SUMS)
  openssl_sign "$dir" "$key"
}

install_curl_stub() {
  local bindir=$1 www=$2 log=$3
  mkdir -p "$bindir"
  cat >"$bindir/curl" <<STUB
#!/bin/bash
# Stub curl: serves https://releases.test/<path> from $www, honours --fail,
# --max-filesize and insists on --proto =https; logs every URL to $log.
set -euo pipefail
url="" max="" proto=""
while [ \$# -gt 0 ]; do
  case \$1 in
    --max-filesize) max=\$2; shift 2 ;;
    --proto) proto=\$2; shift 2 ;;
    --proto-redir | --cacert | --connect-timeout | --max-time | --retry | -o) shift 2 ;;
    https://*) url=\$1; shift ;;
    *) shift ;;
  esac
done
echo "\$url" >>"$log"
[ "\$proto" = "=https" ] || { echo "stub curl: --proto =https missing" >&2; exit 1; }
file="$www/\${url#https://releases.test/}"
[ -f "\$file" ] || { echo "curl: (22) The requested URL returned error: 404" >&2; exit 22; }
if [ -n "\$max" ] && [ "\$(stat -c %s "\$file")" -gt "\$max" ]; then
  echo "curl: (63) Maximum file size exceeded" >&2; exit 63
fi
cat "\$file"
STUB
  chmod 0755 "$bindir/curl"
}
