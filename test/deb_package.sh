#!/usr/bin/env bash
# flownode's Debian packages (debian/): for each PostgreSQL version asked
# for, builds postgresql-NN-flownode with Debian's extension tooling (pg_buildext's
# pgxs_loop through dpkg-buildpackage), on the machine itself for 15 and inside the
# version's test chroot for 17 and 18 (test/pg_chroot.sh), then installs it with apt
# into a clean chroot of that version (Debian's postgresql-NN and nothing else:
# <codename>-clean under $FN_CHROOT_CACHE, bookworm for 15), starts a cluster with
# flownode preloaded, creates the extension and the README's flow, writes and waits
# until the sink equals its query without a flush (test/deb_flow_check.sh), and
# removes the package again (apt-get purge: none of its files left). Four tests per version:
#   build, install, flow, remove
#   bash test/deb_package.sh [--pg 15|17|18|all]...       (default: 15)
# The last line is `flownode-package: N passed, M failed`. Run as root.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. test/common.sh
. test/pg_chroot.sh

VERSIONS=()
while (($#)); do
  case "$1" in
    --pg)
      case "${2:-}" in
        all) VERSIONS+=(15 17 18) ;;
        15 | 17 | 18) VERSIONS+=("$2") ;;
        *) fn_die "usage: deb_package.sh [--pg 15|17|18|all]..." ;;
      esac
      shift 2 ;;
    *) fn_die "usage: deb_package.sh [--pg 15|17|18|all]..." ;;
  esac
done
((${#VERSIONS[@]})) || VERSIONS=(15)

PASS=0
FAIL=0
LINES=()
result() { # result VERSION TEST 0|1 [NOTE]
  if (($3 == 0)); then PASS=$((PASS + 1)); else FAIL=$((FAIL + 1)); fi
  LINES+=("$(printf 'pg%s package %-8s %s%s' "$1" "$2" "$( (($3 == 0)) && echo ok || echo FAILED)" "${4:+  ($4)}")")
}

CLEANUP=()
cleanup() {
  local c
  for ((c = ${#CLEANUP[@]} - 1; c >= 0; c--)); do eval "${CLEANUP[c]}" || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The release whose own PostgreSQL is MAJOR (15: Debian 12, this machine's).
codename_of() { if [[ "$1" == 15 ]]; then echo bookworm; else fn_chroot_codename "$1"; fi; }

# in_root ROOT COMMAND: a shell command as root in ROOT ("" for this machine), with
# a clean environment.
in_root() {
  local root="$1"
  shift
  if [[ -n "$root" ]]; then
    chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 LC_ALL=C.UTF-8 \
      DEBIAN_FRONTEND=noninteractive bash -c "$1"
  else
    /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 LC_ALL=C.UTF-8 \
      DEBIAN_FRONTEND=noninteractive bash -c "$1"
  fi
}

# The repository's sources (no .git, no build outputs) into DEST.
copy_sources() {
  mkdir -p "$1"
  git -C "$FN_ROOT" ls-files -co --exclude-standard 2>/dev/null | grep -vE '\.(o|bc|so)$' \
    | tar -C "$FN_ROOT" -cf - -T - | tar -C "$1" -xf -
}

# build_deb VERSION OUTDIR: the package's .deb into OUTDIR; prints its path.
build_deb() {
  local v="$1" out="$2" root="" work rel log
  if [[ "$v" != 15 ]]; then
    root="$(fn_chroot_ensure "$v")"
    fn_chroot_mount "$root"
  fi
  work="$(mktemp -d "$root/tmp/flownode-deb.XXXXXX")"
  CLEANUP+=("rm -rf --one-file-system '$work'")
  rel="/tmp/$(basename "$work")"
  log="$out/build-$v.log"
  copy_sources "$work/flownode"
  in_root "$root" "
    set -e
    pkgs='build-essential debhelper dpkg-dev postgresql-server-dev-all'
    missing=\$(for p in \$pkgs; do dpkg -s \$p >/dev/null 2>&1 || echo \$p; done)
    if [ -n \"\$missing\" ]; then
      apt-get install -y -qq --no-install-recommends \$missing >/dev/null 2>&1 ||
        { apt-get update -qq && apt-get install -y -qq --no-install-recommends \$missing >/dev/null; }
    fi
    cd $rel/flownode
    pg_buildext updatecontrol
    dpkg-buildpackage -b -us -uc
  " >"$log" 2>&1 || { [[ -n "$root" ]] && fn_chroot_umount "$root"; return 1; }
  [[ -n "$root" ]] && fn_chroot_umount "$root"
  cp "$work"/postgresql-"$v"-flownode_*.deb "$out/" || return 1
  ls "$out"/postgresql-"$v"-flownode_*.deb
}

# clean_chroot VERSION: a chroot with Debian's postgresql-NN and nothing of flownode.
clean_chroot() {
  local v="$1" codename dir stamp want log
  codename="$(codename_of "$v")"
  dir="$FN_CHROOT_CACHE/$codename-clean"
  stamp="$dir/.flownode-chroot"
  want="clean recipe 2; postgresql-$v"
  if [[ -f "$stamp" && "$(head -n 1 "$stamp")" == "$want" ]]; then
    echo "$dir"
    return 0
  fi
  command -v debootstrap >/dev/null || apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
  log="$FN_CHROOT_CACHE/$codename-clean.log"
  fn_log "making a clean Debian $codename chroot with postgresql-$v in $dir" >&2
  fn_chroot_umount_all "$dir.new"
  rm -rf --one-file-system "$dir.new"
  debootstrap --variant=minbase --include="postgresql-$v" "$codename" "$dir.new" "$(fn_chroot_mirror)" >"$log" 2>&1 \
    || { tail -n 30 "$log" >&2; return 1; }
  echo 'Acquire::Check-Valid-Until "false";' >"$dir.new/etc/apt/apt.conf.d/99flownode"
  # the machine's own release (bookworm) with its updates and security fixes, as
  # this machine has them: the package built here depends on this minor release
  if [[ "$codename" == bookworm && -f /etc/apt/sources.list.d/debian.sources ]]; then
    rm -f "$dir.new/etc/apt/sources.list"
    cp /etc/apt/sources.list.d/debian.sources "$dir.new/etc/apt/sources.list.d/"
  fi
  in_root "$dir.new" "apt-get update -qq && apt-get upgrade -y -qq" >>"$log" 2>&1 || { tail -n 30 "$log" >&2; return 1; }
  { echo "$want"; date -u; } >"$dir.new/.flownode-chroot"
  fn_chroot_umount_all "$dir"
  rm -rf --one-file-system "$dir"
  mv "$dir.new" "$dir"
  echo "$dir"
}

OUT="$(mktemp -d /tmp/flownode-debs.XXXXXX)"
if [[ "${FLOWNODE_KEEP_WORKDIR:-}" == 1 ]]; then
  fn_log "packages and build logs kept in $OUT"
else
  CLEANUP+=("rm -rf '$OUT'")
fi
mkdir -p "$FN_CHROOT_CACHE"
for v in "${VERSIONS[@]}"; do
  start=$SECONDS
  fn_log "package for PostgreSQL $v: build"
  codename="$(codename_of "$v")"
  # the version's test chroot (build) and its clean chroot are each used by one run
  exec {lock}>"$FN_CHROOT_CACHE/.$codename.lock"
  flock "$lock"
  exec {lock_clean}>"$FN_CHROOT_CACHE/.$codename-clean.lock"
  flock "$lock_clean"
  if ! deb="$(build_deb "$v" "$OUT")"; then
    tail -n 40 "$OUT/build-$v.log"
    result "$v" build 1 "dpkg-buildpackage failed"
    result "$v" install 1 "not built"
    result "$v" flow 1 "not built"
    result "$v" remove 1 "not built"
    flock -u "$lock_clean"; flock -u "$lock"
    continue
  fi
  result "$v" build 0 "$(basename "$deb")"
  flock -u "$lock"

  fn_log "package for PostgreSQL $v: install into a clean Debian $codename, a flow, remove"
  if ! root="$(clean_chroot "$v")"; then
    result "$v" install 1 "no clean $codename chroot"
    result "$v" flow 1 "not installed"
    result "$v" remove 1 "not installed"
    flock -u "$lock_clean"
    continue
  fi
  fn_chroot_mount "$root"
  CLEANUP+=("fn_chroot_umount '$root'")
  cp "$deb" "$root/tmp/"
  if in_root "$root" "apt-get install -y --no-install-recommends /tmp/$(basename "$deb") >/tmp/flownode-apt.log 2>&1 &&
                     test -f /usr/lib/postgresql/$v/lib/flownode.so || { tail -n 30 /tmp/flownode-apt.log; false; }"; then
    result "$v" install 0
    if cp test/deb_flow_check.sh "$root/tmp/flownode-flow-check.sh" &&
       in_root "$root" "bash /tmp/flownode-flow-check.sh $v"; then
      result "$v" flow 0
    else
      result "$v" flow 1 "see the output above"
    fi
  else
    result "$v" install 1 "apt-get install of the .deb failed"
    result "$v" flow 1 "not installed"
  fi
  if in_root "$root" "apt-get purge -y -qq postgresql-$v-flownode >/dev/null 2>&1 || true
      ! dpkg -s postgresql-$v-flownode >/dev/null 2>&1 &&
      ! ls /usr/lib/postgresql/$v/lib/flownode* /usr/share/postgresql/$v/extension/flownode* 2>/dev/null | grep -q ."; then
    result "$v" remove 0
  else
    result "$v" remove 1 "files left after apt-get purge"
  fi
  rm -f "$root/tmp/$(basename "$deb")" "$root/tmp/flownode-flow-check.sh"
  fn_chroot_umount "$root"
  flock -u "$lock_clean"
  fn_log "package for PostgreSQL $v: $((SECONDS - start)) s"
done

echo
printf '%s\n' "${LINES[@]}"
echo "flownode-package: $PASS passed, $FAIL failed"
((FAIL == 0 && PASS > 0))
