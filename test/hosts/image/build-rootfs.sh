#!/usr/bin/env bash
# Builds the golden root filesystem of the test hosts (debootstrap, then the drop-ins) into a
# temporary directory beside OUT and renames it to OUT only when complete: a killed build is never used.
# Usage: build-rootfs.sh OUT MIRROR PACKAGES DROPINS_DIR DEBS_DIR [SUITE]   (PACKAGES comma-separated)
# SUITE is the Debian release's codename (default bookworm; trixie for Debian 13).
set -euo pipefail
out=$1 mirror=$2 packages=$3 dropins=$4 debs=$5 suite=${6:-bookworm}

[ -d "$out" ] && exit 0
tmp="$out.partial-$$"
trap 'rm -rf --one-file-system "$tmp"' EXIT
rm -rf --one-file-system "$out".partial-*
mkdir -p "$tmp"

say() { printf 'test hosts: %s\n' "$*" >&2; }
say "building the golden $suite rootfs with debootstrap from $mirror (a few minutes, once per recipe)"
start=$SECONDS
# debootstrap prints a line per package and stage: show each stage once, then every 50th package.
# Downloaded packages are kept in DEBS (shared by every recipe) so a changed recipe rebuilds faster.
mkdir -p "$debs"
debootstrap --variant=minbase --cache-dir="$debs" --include="$packages" "$suite" "$tmp" "$mirror" 2>&1 |
  awk '/^[IEW]: / { stage = $2; n[stage]++; if (n[stage] == 1 || n[stage] % 50 == 0 || $1 != "I:") { print "test hosts: debootstrap " $0 > "/dev/stderr"; fflush("/dev/stderr") } }'
[ "${PIPESTATUS[0]}" -eq 0 ] || { say "debootstrap failed"; exit 1; }
say "debootstrap done in $((SECONDS - start)) s; applying the drop-ins"

cp -a "$dropins/." "$tmp/"
chmod 0644 "$tmp"/etc/cloud/cloud.cfg.d/*.cfg
# One machine identity per host: systemd fills an empty machine-id on first boot.
: >"$tmp/etc/machine-id"
rm -f "$tmp/var/lib/dbus/machine-id"
# Host keys come from the test (pinned before boot), never from the image.
rm -f "$tmp"/etc/ssh/ssh_host_*
# No background apt on hosts that have no route out.
for unit in apt-daily.timer apt-daily-upgrade.timer apt-daily.service apt-daily-upgrade.service e2scrub_all.timer e2scrub_reap.service; do
  ln -sf /dev/null "$tmp/etc/systemd/system/$unit"
done
# Root logs in with keys only; the console has no password.
chroot "$tmp" passwd -l root >/dev/null
echo localhost >"$tmp/etc/hostname"
: >"$tmp/etc/resolv.conf"
# The VM boots with root=LABEL=fbroot; containers have no fstab root.
: >"$tmp/etc/fstab"
rm -rf "$tmp"/var/cache/apt/archives/*.deb "$tmp"/var/lib/apt/lists/*_Packages
# A kernel only where the list has one (the VM's release).
case ",$packages," in *,linux-image-amd64,*) ls "$tmp"/boot/vmlinuz-* "$tmp"/boot/initrd.img-* >/dev/null ;; esac
mv -T "$tmp" "$out"
trap - EXIT
say "golden $suite rootfs ready in $((SECONDS - start)) s: $out"
