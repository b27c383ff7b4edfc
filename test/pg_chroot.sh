# shellcheck shell=bash
# PostgreSQL versions other than the machine's own (15 on Debian 12), for
# test/run_all.sh --pg: each runs inside a Debian chroot that has Debian's packages
# of that version, made with debootstrap on first use and kept under
# $FN_CHROOT_CACHE/<codename> (a stamp file, written last, marks one as complete;
# one that lacks it, or whose stamp names another package list, is made again).
#   17: Debian 13 (trixie)    18: Debian sid
# Sourced by test/run_all.sh after test/common.sh; everything runs as root.

FN_CHROOT_CACHE="${FLOWNODE_CHROOT_CACHE:-/var/cache/flownode-chroots}"
# Bump when the recipe below changes in a way the package list does not show.
FN_CHROOT_RECIPE=1

# The Debian release that ships PostgreSQL MAJOR.
fn_chroot_codename() {
  case "$1" in
    17) echo trixie ;;
    18) echo sid ;;
    *) return 1 ;;
  esac
}

# The packages a chroot for MAJOR must have (debootstrap --include): the server, its
# headers and PGXS (which bring clang and llvm for the bitcode), the TAP modules,
# the compilers and GoogleTest for the unit tests. A suite that needs more (the
# oracle, say) adds its packages here.
fn_chroot_required() {
  local v="$1"
  echo "postgresql-$v postgresql-server-dev-$v libipc-run-perl perl g++ make libgtest-dev libpq-dev"
}

# Packages installed when the release has them: the extensions that sql/types.sql
# (hll, tdigest) and sql/partman.sql (pg_partman) use. run_all.sh skips those
# tests, saying so, where one is missing.
fn_chroot_optional() {
  local v="$1"
  echo "postgresql-$v-hll postgresql-$v-tdigest postgresql-$v-partman"
}

# The mirror this machine's apt uses for Debian (deb.debian.org if none is found).
fn_chroot_mirror() {
  local url
  url="$(grep -hoE '(URIs:|^deb)[[:space:]]+https?://[^[:space:]]+/debian/?([[:space:]]|$)' \
           /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null \
         | awk '{print $2}' | head -n 1)"
  echo "${url:-http://deb.debian.org/debian}"
}

# Unmount whatever is mounted under DIR (deepest first); never fails.
fn_chroot_umount_all() {
  local dir="$1" m
  [[ -d "$dir" ]] || return 0
  dir="$(cd "$dir" && pwd -P)"
  while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done < <(awk -v d="$dir" '$2 == d || index($2, d "/") == 1 {print $2}' /proc/mounts | sort -r)
}

# fn_chroot_ensure MAJOR: prints the directory of a complete chroot for MAJOR, made
# first if there is none (about 2 minutes and 1.9 GB each). Its log goes to stderr
# only on failure.
fn_chroot_ensure() {
  local v="$1" codename dir stamp want tmp log mirror p have=()
  codename="$(fn_chroot_codename "$v")" || fn_die "no chroot recipe for PostgreSQL $v"
  dir="$FN_CHROOT_CACHE/$codename"
  stamp="$dir/.flownode-chroot"
  want="recipe $FN_CHROOT_RECIPE; $(fn_chroot_required "$v"); optional: $(fn_chroot_optional "$v")"
  if [[ -f "$stamp" ]] && [[ "$(head -n 1 "$stamp")" == "$want" ]]; then
    echo "$dir"
    return 0
  fi
  if ! command -v debootstrap >/dev/null; then
    fn_log "installing debootstrap" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null 2>&1 \
      || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null; } \
      || fn_die "cannot install debootstrap"
  fi
  mirror="$(fn_chroot_mirror)"
  tmp="$dir.new"
  log="$FN_CHROOT_CACHE/$codename.log"
  fn_log "making the Debian $codename chroot for PostgreSQL $v in $dir (debootstrap from $mirror)" >&2
  fn_chroot_umount_all "$tmp"
  rm -rf --one-file-system "$tmp"
  mkdir -p "$FN_CHROOT_CACHE"
  if ! debootstrap --variant=minbase --include="$(fn_chroot_required "$v" | tr ' ' ',')" \
        "$codename" "$tmp" "$mirror" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    fn_die "debootstrap of $codename failed (log: $log)"
  fi
  # The registry may serve a frozen snapshot whose Release files are past their
  # Valid-Until (sid's are valid for a week only): apt inside must accept them.
  echo 'Acquire::Check-Valid-Until "false";' >"$tmp/etc/apt/apt.conf.d/99flownode"
  chroot "$tmp" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin apt-get update -qq >>"$log" 2>&1 \
    || { tail -n 20 "$log" >&2; fn_die "apt-get update in the $codename chroot failed"; }
  for p in $(fn_chroot_optional "$v"); do
    if chroot "$tmp" apt-cache show "$p" >/dev/null 2>&1; then
      chroot "$tmp" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -qq --no-install-recommends "$p" >>"$log" 2>&1 \
        || { tail -n 20 "$log" >&2; fn_die "installing $p in the $codename chroot failed"; }
      have+=("$p")
    else
      fn_log "Debian $codename has no $p: the tests that need it are skipped on PostgreSQL $v" >&2
    fi
  done
  chroot "$tmp" apt-get clean >/dev/null 2>&1 || true
  { echo "$want"; echo "installed optional: ${have[*]}"; date -u; } >"$tmp/.flownode-chroot"
  fn_chroot_umount_all "$dir"
  rm -rf --one-file-system "$dir"
  mv "$tmp" "$dir"
  echo "$dir"
}

# fn_chroot_mount DIR / fn_chroot_umount DIR: what the server and the tests need
# inside: /proc, and a tmpfs on /dev/shm for PostgreSQL's dynamic shared memory.
fn_chroot_mount() {
  local dir="$1"
  mountpoint -q "$dir/proc" || mount -t proc proc "$dir/proc"
  mkdir -p "$dir/dev/shm"
  mountpoint -q "$dir/dev/shm" || mount -t tmpfs -o mode=1777,size=2g tmpfs "$dir/dev/shm"
}

# fn_chroot_mount_mine DIR: fn_chroot_mount, printing the mount points it mounted
# (none that were mounted already: another user of the chroot, such as a quick run
# of its own, may be using them); fn_chroot_umount_these unmounts those only.
fn_chroot_mount_mine() {
  local dir="$1" m
  for m in proc dev/shm; do
    mountpoint -q "$dir/$m" || echo "$dir/$m"
  done
  fn_chroot_mount "$dir"
}

fn_chroot_umount_these() {
  local m
  for m in "$@"; do
    mountpoint -q "$m" && { umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; }
  done
  return 0
}

fn_chroot_umount() {
  local dir="$1"
  [[ -n "$dir" ]] || return 0
  mountpoint -q "$dir/dev/shm" && { umount "$dir/dev/shm" || umount -l "$dir/dev/shm"; }
  mountpoint -q "$dir/proc" && { umount "$dir/proc" || umount -l "$dir/proc"; }
  return 0
}
