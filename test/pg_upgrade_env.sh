# shellcheck shell=bash
# The pg_upgrade environment: flownode must survive pg_upgrade
# 15 -> 17 -> 18. PostgreSQL 18 runs in the Debian sid chroot (test/pg_chroot.sh),
# which has no 15 or 17; this file puts runnable copies of both, each with this
# tree's flownode installed, into it, so that a TAP test inside (test/tap/
# 023_pg_upgrade.pl) can initdb a 15 cluster and upgrade it to 17, then to 18:
#   /usr/lib/postgresql/15, /usr/share/postgresql/15   from the machine (Debian 12)
#   /usr/lib/postgresql/17, /usr/share/postgresql/17   from the trixie chroot
#   /usr/lib/postgresql/NN/compat-lib                  the shared libraries the old
#       binaries need that sid lacks (libicu72, libldap-2.5, libLLVM-14, ...), copied
#       from the version's own system; the old binaries run with LD_LIBRARY_PATH
#       naming these directories.
# Debian's layout is versioned, so none of it collides with sid's 18.
#
# Two steps, each cached:
#   fn_upgrade_stage_all TARGET   (no lock on sid) for each older version: flownode
#       built with make WERROR=1 against it (on the machine for 15, in the trixie
#       chroot for 17, under that chroot's lock) and laid over a copy of its
#       installation, with every shared library its files load on their own system,
#       in $FN_CHROOT_CACHE/upgrade-stage/NN-KEY. KEY hashes the tree's sources
#       (Makefile, flownode.control, sql/, src/, include/), the version's Debian
#       package and FN_UPGRADE_RECIPE: a staged copy with the same key is not built
#       again.
#   fn_upgrade_install_all SID TARGET   (under the sid lock, with the chroot mounted)
#       the staged installations copied into the chroot (again only when the key
#       there differs), compat-lib made from what `ldd` inside the chroot does not
#       find, and then checked: every binary pg_upgrade runs prints its version, and
#       a cluster of the version, as the chroot's postgres, starts with flownode
#       preloaded and runs CREATE EXTENSION flownode. Those checks are the suite
#       `upgrade-env` of test/run_all.sh (two tests per version).
# By hand (as root, from the repository root):  bash test/pg_upgrade_env.sh
# stages and installs for 18 and prints the environment for the test inside sid.
# Sourced by test/run_all.sh after test/common.sh and test/pg_chroot.sh.

# Bump when the recipe below changes in a way the key does not show.
FN_UPGRADE_RECIPE=1
FN_UPGRADE_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
# The binaries pg_upgrade runs of either cluster (and the test's own initdb and psql).
FN_UPGRADE_BINARIES="postgres pg_ctl initdb pg_dump pg_dumpall pg_restore psql pg_resetwal pg_controldata pg_upgrade"

# fn_upgrade_chain TARGET: the versions a test on TARGET upgrades from, oldest first
# (nothing: the test's upgrade is from TARGET to itself).
fn_upgrade_chain() {
  case "$1" in
    18) echo "15 17" ;;
    *) ;;
  esac
}

# The paths FLOWNODE_UPGRADE_FROM names for TARGET, and the LD_LIBRARY_PATH of its
# compat-lib directories, newest first: where two have a library of the same soname
# (libxml2.so.2 of Debian 12 and 13), the newer serves both, as sonames promise.
fn_upgrade_from_paths() {
  local v out=()
  for v in $(fn_upgrade_chain "$1"); do out+=("/usr/lib/postgresql/$v"); done
  echo "${out[*]}"
}
fn_upgrade_libpath() {
  local v out=()
  for v in $(fn_upgrade_chain "$1"); do out=("/usr/lib/postgresql/$v/compat-lib" "${out[@]}"); done
  local IFS=:
  echo "${out[*]}"
}

# fn_upgrade_run ROOT CMD...: CMD with a clean environment on the system at ROOT
# (/ is the machine itself, anything else a chroot).
fn_upgrade_run() {
  local root="$1"
  shift
  if [[ "$root" == / ]]; then
    env -i PATH="$FN_UPGRADE_PATH" LC_ALL=C.UTF-8 "$@"
  else
    chroot "$root" /usr/bin/env -i PATH="$FN_UPGRADE_PATH" LC_ALL=C.UTF-8 "$@"
  fi
}

# `ldd` of every ELF file under the directories given (a script run on the version's
# system): "## FILE" and then ldd's lines, for each.
# shellcheck disable=SC2016  # expanded by the shell that runs it
FN_UPGRADE_LDD_SCRIPT='
for d in "$@"; do
  find "$d" -type f \( -perm -u+x -o -name "*.so" -o -name "*.so.*" \) -print
done | while IFS= read -r f; do
  [ "$(head -c 4 "$f" | od -An -tx1 | tr -d " \n")" = 7f454c46 ] || continue
  echo "## $f"
  ldd "$f" 2>&1
done'

# The hash of the tree's sources that the build reads.
fn_upgrade_tree_hash() {
  (cd "$FN_ROOT" && find Makefile flownode.control sql src include -type f \
      ! -name '*.o' ! -name '*.bc' ! -name '*.so' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) \
    | sha256sum | cut -c1-16
}

# Copy the sources the build reads to DEST.
fn_upgrade_copy_tree() {
  mkdir -p "$1"
  (cd "$FN_ROOT" && tar --exclude='*.o' --exclude='*.bc' --exclude='*.so' \
      -cf - Makefile flownode.control sql src include) | tar -C "$1" -xf -
}

# fn_upgrade_origin V: the root of the system whose PostgreSQL V is copied: the
# machine for its own version, else the version's chroot (made if missing, under its
# lock, as run_in_chroot does; a complete one is used without waiting for the lock).
fn_upgrade_origin() {
  local v="$1" codename dir lk
  if [[ -x "/usr/lib/postgresql/$v/bin/postgres" && ! -e /.flownode-chroot ]]; then
    echo /
    return 0
  fi
  codename="$(fn_chroot_codename "$v")" || { echo "no chroot recipe for PostgreSQL $v" >&2; return 1; }
  dir="$FN_CHROOT_CACHE/$codename"
  if [[ "$(head -n 1 "$dir/.flownode-chroot" 2>/dev/null)" == \
        "recipe $FN_CHROOT_RECIPE; $(fn_chroot_required "$v"); optional: $(fn_chroot_optional "$v")" ]]; then
    echo "$dir"
    return 0
  fi
  mkdir -p "$FN_CHROOT_CACHE"
  exec {lk}>"$FN_CHROOT_CACHE/.$codename.lock"
  flock "$lk"
  fn_chroot_ensure "$v"
}

# fn_upgrade_key V ROOT: the cache key of V's staged installation.
fn_upgrade_key() {
  local v="$1" root="$2" pkg
  pkg="$(dpkg-query --admindir="${root%/}/var/lib/dpkg" -W -f '${Version}' "postgresql-$v" 2>/dev/null)" \
    || { echo "no postgresql-$v package in $root" >&2; return 1; }
  printf 'recipe %s; tree %s; postgresql-%s %s\n' "$FN_UPGRADE_RECIPE" "$(fn_upgrade_tree_hash)" "$v" "$pkg" \
    | sha256sum | cut -c1-16
}

# fn_upgrade_stage V: prints the directory of V's staged installation, built first if
# the cache has none with the current key. Fails (a message on stderr) if anything
# goes wrong; the build's output is shown only then.
fn_upgrade_stage() {
  local v="$1" root key dir tmp lock rootlock="" mounted=() m build="" log rc=0 pgc why=""
  local FN_UPGRADE_STAGE_DIR="$FN_CHROOT_CACHE/upgrade-stage"
  root="$(fn_upgrade_origin "$v")" || { echo "PostgreSQL $v: no system to copy it from" >&2; return 1; }
  key="$(fn_upgrade_key "$v" "$root")" || { echo "PostgreSQL $v: no package version in $root" >&2; return 1; }
  dir="$FN_UPGRADE_STAGE_DIR/$v-$key"
  mkdir -p "$FN_UPGRADE_STAGE_DIR"
  exec {lock}>"$FN_UPGRADE_STAGE_DIR/.lock"
  flock "$lock"
  if [[ -f "$dir/.complete" ]]; then
    flock -u "$lock"
    exec {lock}>&-
    echo "$dir"
    return 0
  fi
  fn_log "upgrade-env: building flownode for PostgreSQL $v (in ${root}) into $dir" >&2
  tmp="$dir.new"
  rm -rf "$tmp"
  mkdir -p "$tmp/root/usr/lib/postgresql" "$tmp/root/usr/share/postgresql" "$tmp/deps" "$tmp/overlay"
  log="$tmp/build.log"
  pgc="/usr/lib/postgresql/$v/bin/pg_config"
  if [[ "$root" != / ]]; then
    # the chroot's installation is shared with the runs of its version: their lock
    exec {rootlock}>"$FN_CHROOT_CACHE/.$(basename "$root").lock"
    flock "$rootlock"
    mapfile -t mounted < <(fn_chroot_mount_mine "$root")
  fi
  if ! build="$(mktemp -d "${root%/}/tmp/flownode-upgrade.XXXXXX")" || [[ -z "$build" ]]; then
    why="no temporary directory in ${root%/}/tmp"
  elif ! fn_upgrade_copy_tree "$build/src"; then
    why="copying the tree to $build failed"
  elif ! fn_upgrade_run "$root" bash -c "cd '${build#"${root%/}"}/src' && make -j2 WERROR=1 PG_CONFIG='$pgc' \
      && make install WERROR=1 PG_CONFIG='$pgc' DESTDIR='${build#"${root%/}"}/overlay'" >"$log" 2>&1; then
    echo "---- build of flownode for PostgreSQL $v failed (last 60 lines of $log) ----" >&2
    tail -n 60 "$log" >&2
    why="make WERROR=1 failed (see above)"
  elif ! { cp -a "$build/overlay/." "$tmp/overlay/" \
             && cp -a "${root%/}/usr/lib/postgresql/$v" "$tmp/root/usr/lib/postgresql/" \
             && cp -a "${root%/}/usr/share/postgresql/$v" "$tmp/root/usr/share/postgresql/"; }; then
    why="copying PostgreSQL $v's installation from $root failed"
  # every library the installation and flownode.so load, as found on their system
  elif ! fn_upgrade_run "$root" bash -c "$FN_UPGRADE_LDD_SCRIPT" _ \
      "/usr/lib/postgresql/$v" "${build#"${root%/}"}/overlay" >"$tmp/ldd.txt" 2>&1; then
    why="ldd over PostgreSQL $v's files failed"
  fi
  [[ -n "$build" && -d "$build" ]] && rm -rf --one-file-system "$build"
  if [[ -n "$rootlock" ]]; then
    fn_chroot_umount_these "${mounted[@]}"
    flock -u "$rootlock"
    exec {rootlock}>&-
  fi
  if [[ -z "$why" ]]; then
    local so path lib="$tmp/root/usr/lib/postgresql/$v" share="$tmp/root/usr/share/postgresql/$v"
    # flownode's files of the copy (a run may have installed another build) give way
    # to this tree's
    rm -rf "$lib/lib/flownode.so" "$lib/lib/bitcode/flownode" "$lib/lib/bitcode/flownode.index.bc" \
      "$share/extension"/flownode.control "$share/extension"/flownode--*.sql
    cp -a "$tmp/overlay/." "$tmp/root/" || why="laying flownode over PostgreSQL $v failed"
    [[ -f "$lib/lib/flownode.so" ]] || why="make install put no flownode.so in $lib/lib"
    while read -r so path; do
      [[ -e "$tmp/deps/$so" ]] || cp -L "${root%/}$path" "$tmp/deps/$so" || rc=$?
    done < <(awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' "$tmp/ldd.txt" | sort -u)
    ((rc == 0)) || why="copying the libraries of PostgreSQL $v failed"
  fi
  if [[ -n "$why" ]]; then
    flock -u "$lock"
    exec {lock}>&-
    echo "PostgreSQL $v: $why (kept for inspection: $tmp)" >&2
    return 1
  fi
  echo "$key" >"$tmp/.complete"
  rm -rf "$dir"
  mv "$tmp" "$dir"
  # keep the two newest other stagings of the version (another checkout's tree)
  find "$FN_UPGRADE_STAGE_DIR" -mindepth 1 -maxdepth 1 -type d -name "$v-*" ! -name "$v-$key" -printf '%T@ %p\n' \
    | sort -rn | tail -n +3 | cut -d' ' -f2- | while IFS= read -r m; do rm -rf --one-file-system "$m"; done
  flock -u "$lock"
  exec {lock}>&-
  echo "$dir"
}

# fn_upgrade_stage_all TARGET: stages every version of TARGET's chain; prints
# "V DIR" per version. Fails at the first that cannot be staged.
fn_upgrade_stage_all() {
  local v dir
  for v in $(fn_upgrade_chain "$1"); do
    dir="$(fn_upgrade_stage "$v")" || return 1
    echo "$v $dir"
  done
}

# fn_upgrade_install SID V STAGE: V's staged installation into the chroot SID (the
# caller holds its lock), and its compat-lib. Fails with a message on stderr.
fn_upgrade_install() {
  local sid="$1" v="$2" stage="$3" key sub owner want have missing errs round so
  key="$(cat "$stage/.complete")"
  local lib="$sid/usr/lib/postgresql/$v" compat="$sid/usr/lib/postgresql/$v/compat-lib"
  for sub in lib share; do
    owner="$(dpkg-query --admindir="$sid/var/lib/dpkg" -S "/usr/$sub/postgresql/$v" 2>/dev/null)" || owner=""
    if [[ -n "$owner" ]]; then
      echo "/usr/$sub/postgresql/$v in $sid belongs to a Debian package (${owner%%:*}): not replaced" >&2
      return 1
    fi
  done
  want="$key"
  have="$(cat "$lib/.flownode-upgrade-env" 2>/dev/null)" || have=""
  if [[ "$have" != "$want" ]]; then
    fn_log "upgrade-env: installing PostgreSQL $v with flownode into $sid" >&2
    rm -rf --one-file-system "$lib" "$sid/usr/share/postgresql/$v"
    cp -a "$stage/root/." "$sid/" || { echo "copying $stage into $sid failed" >&2; return 1; }
    echo "$want" >"$lib/.flownode-upgrade-env"
  fi
  # compat-lib: made again every time from what sid lacks now (its packages change)
  rm -rf "$compat"
  mkdir -p "$compat"
  for round in 1 2 3 4 5 6; do
    fn_upgrade_run "$sid" env LD_LIBRARY_PATH="/usr/lib/postgresql/$v/compat-lib" \
      bash -c "$FN_UPGRADE_LDD_SCRIPT" _ "/usr/lib/postgresql/$v" >"$compat.ldd" 2>&1
    missing="$(awk '$2 == "=>" && $3 == "not" {print $1}' "$compat.ldd" | sort -u)"
    errs="$(grep 'not found' "$compat.ldd" | grep -v '=> not found' | sort -u)"
    if [[ -n "$errs" ]]; then
      echo "in $sid, PostgreSQL $v's files need what no library there has:" >&2
      echo "$errs" | head -n 20 >&2
      return 1
    fi
    [[ -z "$missing" ]] && { rm -f "$compat.ldd"; return 0; }
    for so in $missing; do
      if [[ -e "$compat/$so" ]]; then
        echo "in $sid, $so is in $compat but still not found" >&2
        return 1
      fi
      [[ -e "$stage/deps/$so" ]] || { echo "PostgreSQL $v needs $so, which its own system does not have either" >&2; return 1; }
      cp -L "$stage/deps/$so" "$compat/$so"
    done
  done
  echo "in $sid, PostgreSQL $v's libraries did not resolve after $round rounds" >&2
  return 1
}

# fn_upgrade_check_binaries SID V LIBPATH: with LIBPATH (every version's compat-lib),
# ldd inside the chroot finds every library of V's files, and every binary of
# FN_UPGRADE_BINARIES prints V's version.
fn_upgrade_check_binaries() {
  local sid="$1" v="$2" libpath="$3" b out bad=()
  out="$(fn_upgrade_run "$sid" env LD_LIBRARY_PATH="$libpath" \
           bash -c "$FN_UPGRADE_LDD_SCRIPT" _ "/usr/lib/postgresql/$v" 2>&1 \
         | awk '/^## / {f = $2} /not found/ {gsub(/[ \t]+/, " "); print f ":" $0}' | head -n 5 \
         | paste -sd';')"
  [[ -z "$out" ]] || bad+=("with LD_LIBRARY_PATH=$libpath: $out")
  for b in $FN_UPGRADE_BINARIES; do
    out="$(fn_upgrade_run "$sid" env LD_LIBRARY_PATH="$libpath" "/usr/lib/postgresql/$v/bin/$b" -V 2>&1)" || true
    [[ "$out" == *"(PostgreSQL) $v."* ]] || bad+=("$b: ${out:-no output}")
  done
  if ((${#bad[@]})); then
    for b in "${bad[@]}"; do echo "PostgreSQL $v in the chroot: $b" >&2; done
    return 1
  fi
}

# fn_upgrade_check_cluster SID V LIBPATH: a cluster of V initialized and started as
# the chroot's postgres with flownode preloaded, CREATE EXTENSION flownode, stopped.
fn_upgrade_check_cluster() {
  local sid="$1" v="$2" libpath="$3" d port rc=0 bin
  bin="/usr/lib/postgresql/$v/bin"
  if ! d="$(mktemp -d "$sid/tmp/flownode-upgrade-check.XXXXXX")" || [[ -z "$d" ]]; then
    echo "PostgreSQL $v in the chroot: no temporary directory in $sid/tmp" >&2
    return 1
  fi
  chmod 755 "$d"
  fn_upgrade_run "$sid" chown postgres: "${d#"$sid"}" || return 1
  port="$(fn_free_port)"
  local in="${d#"$sid"}"
  cat >"$d/check.sh" <<'EOF_CHECK'
set -e
d="$1" port="$2" bin="$3"
cd /tmp
"$bin/initdb" -D "$d/data" -A trust -U postgres --no-sync >"$d/initdb.log" 2>&1
cat >>"$d/data/postgresql.conf" <<EOF_CONF
shared_preload_libraries = 'flownode'
port = $port
unix_socket_directories = '$d'
listen_addresses = ''
EOF_CONF
"$bin/pg_ctl" -D "$d/data" -l "$d/server.log" -w -t 60 start >/dev/null
trap '"$bin/pg_ctl" -D "$d/data" -m fast -w -t 60 stop >/dev/null' EXIT
"$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$d" -p "$port" -d postgres -At \
  -c "CREATE EXTENSION flownode" \
  -c "SELECT extversion FROM pg_extension WHERE extname = 'flownode'" \
  -c "SHOW shared_preload_libraries"
EOF_CHECK
  fn_upgrade_run "$sid" runuser -u postgres -- env LD_LIBRARY_PATH="$libpath" HOME=/tmp \
    bash "$in/check.sh" "$in" "$port" "$bin" >"$d/check.out" 2>&1 || rc=$?
  if ((rc != 0)); then
    echo "PostgreSQL $v in the chroot: a cluster with flownode failed (exit $rc):" >&2
    tail -n 20 "$d/check.out" >&2
    [[ -f "$d/initdb.log" ]] && tail -n 10 "$d/initdb.log" >&2
    [[ -f "$d/server.log" ]] && tail -n 20 "$d/server.log" >&2
  fi
  rm -rf --one-file-system "$d"
  return "$rc"
}

# fn_upgrade_install_all SID TARGET STAGED: installs and checks each version of
# STAGED ("V DIR" lines from fn_upgrade_stage_all) in SID (locked and mounted by the
# caller). Sets FN_UPGRADE_PASS, FN_UPGRADE_FAIL and FN_UPGRADE_NOTE (the first
# failure); fails if anything failed.
fn_upgrade_install_all() {
  local sid="$1" target="$2" staged="$3" v stage err libpath
  libpath="$(fn_upgrade_libpath "$target")"
  FN_UPGRADE_PASS=0 FN_UPGRADE_FAIL=0 FN_UPGRADE_NOTE=""
  err="$(mktemp)"
  while read -r v stage; do
    [[ -n "$v" ]] || continue
    if ! fn_upgrade_install "$sid" "$v" "$stage" 2>"$err"; then
      cat "$err" >&2
      FN_UPGRADE_FAIL=$((FN_UPGRADE_FAIL + 2))
      FN_UPGRADE_NOTE="${FN_UPGRADE_NOTE:-$(grep -v '^==>' "$err" | head -n 1)}"
      continue
    fi
    if fn_upgrade_check_binaries "$sid" "$v" "$libpath" 2>"$err"; then
      FN_UPGRADE_PASS=$((FN_UPGRADE_PASS + 1))
    else
      cat "$err" >&2
      FN_UPGRADE_FAIL=$((FN_UPGRADE_FAIL + 1))
      FN_UPGRADE_NOTE="${FN_UPGRADE_NOTE:-$(head -n 1 "$err")}"
    fi
    if fn_upgrade_check_cluster "$sid" "$v" "$libpath" 2>"$err"; then
      FN_UPGRADE_PASS=$((FN_UPGRADE_PASS + 1))
    else
      cat "$err" >&2
      FN_UPGRADE_FAIL=$((FN_UPGRADE_FAIL + 1))
      FN_UPGRADE_NOTE="${FN_UPGRADE_NOTE:-$(head -n 1 "$err")}"
    fi
  done <<<"$staged"
  rm -f "$err"
  ((FN_UPGRADE_FAIL == 0))
}

# By hand: bash test/pg_upgrade_env.sh [TARGET]  (default 18)
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -uo pipefail
  cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
  . test/common.sh
  . test/pg_chroot.sh
  fn_upgrade_target="${1:-18}"
  [[ -n "$(fn_upgrade_chain "$fn_upgrade_target")" ]] || fn_die "no upgrade chain for PostgreSQL $fn_upgrade_target"
  fn_upgrade_t0=$SECONDS
  fn_upgrade_staged="$(fn_upgrade_stage_all "$fn_upgrade_target")" || fn_die "staging failed"
  fn_log "staged in $((SECONDS - fn_upgrade_t0))s:"
  echo "$fn_upgrade_staged"
  exec {fn_upgrade_lock}>"$FN_CHROOT_CACHE/.$(fn_chroot_codename "$fn_upgrade_target").lock"
  flock "$fn_upgrade_lock"
  fn_upgrade_sid="$(fn_chroot_ensure "$fn_upgrade_target")" || exit 1
  mapfile -t fn_upgrade_mounted < <(fn_chroot_mount_mine "$fn_upgrade_sid")
  fn_upgrade_rc=0
  fn_upgrade_install_all "$fn_upgrade_sid" "$fn_upgrade_target" "$fn_upgrade_staged" || fn_upgrade_rc=1
  fn_chroot_umount_these "${fn_upgrade_mounted[@]}"
  flock -u "$fn_upgrade_lock"
  fn_log "upgrade-env: $FN_UPGRADE_PASS passed, $FN_UPGRADE_FAIL failed${FN_UPGRADE_NOTE:+ ($FN_UPGRADE_NOTE)} in $((SECONDS - fn_upgrade_t0))s"
  echo "inside $fn_upgrade_sid, for the test:"
  echo "  FLOWNODE_UPGRADE_FROM='$(fn_upgrade_from_paths "$fn_upgrade_target")'"
  echo "  LD_LIBRARY_PATH='$(fn_upgrade_libpath "$fn_upgrade_target")'"
  exit "$fn_upgrade_rc"
fi
