# shellcheck shell=bash
# Helpers shared by flownode's test scripts (run_all.sh, demo.sh). Source it:
#   . "$(dirname "$0")/common.sh"
# Everything here runs as root on Debian 12; PostgreSQL itself runs as the
# `postgres` OS user because initdb refuses to run as root.

# Repository root: the parent of this file's directory.
FN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FN_PG_MAJOR=15

# A locale that exists on every Debian system, so initdb works on minimal machines
# and sort order / messages are the same everywhere.
export LC_ALL=C.UTF-8 LANG=C.UTF-8

fn_log() { printf '==> %s\n' "$*"; }
fn_die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

# PostgreSQL 15 server binaries (initdb, pg_ctl, psql, ...): those of $PG_CONFIG
# when it is set (a private copy of the installation, so that two checkouts can
# each install and test their own build), else Debian's.
fn_pg_bindir() {
  local d="/usr/lib/postgresql/$FN_PG_MAJOR/bin"
  if [[ -n "${PG_CONFIG:-}" ]]; then "$PG_CONFIG" --bindir
  elif [[ -x "$d/pg_ctl" ]]; then echo "$d"; else pg_config --bindir; fi
}

# Install the build and test dependencies that are missing. apt-get runs only
# if something is missing, and `apt-get update` at most once.
# postgresql-server-dev-15 brings PGXS, pg_regress, pg_isolation_regress, the
# TAP Perl modules and clang/llvm for the bitcode build; on Debian 12 the contrib
# modules are part of postgresql-15, so postgresql-contrib is not needed. perl
# (for prove) normally comes with libipc-run-perl; it is listed to be explicit.
# postgresql-15-hll and postgresql-15-tdigest: sql/types.sql keeps their aggregate
# states in sinks. postgresql-15-partman (pg_partman 4.7): sql/partman.sql manages a
# flow's partitioned source with it.
# Inside a chroot of test/pg_chroot.sh (FN_IN_CHROOT=1) the list is that chroot's
# (fn_chroot_required): its version's server and what its suites need.
fn_install_deps() {
  [[ $(id -u) -eq 0 ]] || fn_die "fn_install_deps must run as root"
  local pkgs=(postgresql-15 postgresql-server-dev-15 libipc-run-perl perl g++ make
              libgtest-dev googletest libbenchmark-dev libpq-dev
              clang-14 libclang-rt-14-dev clang-format-14 clang-tidy-14
              postgresql-15-hll postgresql-15-tdigest postgresql-15-partman)
  if [[ "${FN_IN_CHROOT:-}" == 1 ]]; then
    # shellcheck disable=SC2207  # a list of package names
    pkgs=($(fn_chroot_required "$FN_PG_MAJOR"))
  fi
  local missing=() p
  for p in "${pkgs[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if ((${#missing[@]} == 0)); then
    fn_log "dependencies already installed"
  else
    fn_log "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  fn_sync_private_pg
}

# A private copy of the installation (test/private_pg.sh, named by $PG_CONFIG) made
# before an extension package was installed lacks that package's files: copy in
# every file of Debian's installation that the copy does not have. Nothing is
# replaced (cp -n), so the flownode installed in the copy stays.
fn_sync_private_pg() {
  local tail="/usr/lib/postgresql/$FN_PG_MAJOR/bin/pg_config" root
  [[ -n "${PG_CONFIG:-}" && "$PG_CONFIG" == *"$tail" ]] || return 0
  root="${PG_CONFIG%"$tail"}"
  [[ -n "$root" && -d "$root/usr/lib/postgresql/$FN_PG_MAJOR" ]] || return 0
  cp -an "/usr/lib/postgresql/$FN_PG_MAJOR/." "$root/usr/lib/postgresql/$FN_PG_MAJOR/"
  cp -an "/usr/share/postgresql/$FN_PG_MAJOR/." "$root/usr/share/postgresql/$FN_PG_MAJOR/"
}

# Build and install the extension from the repository root (as root); arguments go
# to make (run_all.sh passes WERROR=1). Output is shown only if the build fails.
fn_build_install() {
  local log rc=0
  log="$(mktemp)"
  fn_log "building and installing flownode${*:+ ($*)}"
  ( cd "$FN_ROOT" && make -j2 "$@" && make install "$@" ) >"$log" 2>&1 || rc=$?
  if ((rc != 0)); then
    cat "$log" >&2
    rm -f "$log"
    fn_die "build/install failed"
  fi
  rm -f "$log"
}

# Create a temporary directory owned by `postgres` and print its path.
fn_workdir() {
  local d
  d="$(mktemp -d /tmp/flownode-test.XXXXXX)"
  chown postgres: "$d"
  echo "$d"
}

# Run a command as the postgres OS user, keeping the environment.
fn_as_postgres() { runuser -u postgres -- "$@"; }

# fn_start_cluster DIR PORT [CONF]: initdb DIR/data (with test/flownode.conf, so the
# extension is preloaded, then the lines of CONF), listen only on a Unix socket in
# DIR, start it. $FN_PG_ENV (VAR=value ...) is the server's extra environment.
fn_start_cluster() {
  local dir="$1" port="$2" conf="${3:-}" bin
  bin="$(fn_pg_bindir)"
  fn_as_postgres "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync >"$dir/initdb.log" 2>&1 \
    || { cat "$dir/initdb.log" >&2; fn_die "initdb failed"; }
  {
    echo
    echo "# added by test/common.sh"
    cat "$FN_ROOT/test/flownode.conf"
    echo "port = $port"
    echo "unix_socket_directories = '$dir'"
    echo "listen_addresses = ''"
    [[ -n "$conf" ]] && printf '%s\n' "$conf"
  } >>"$dir/data/postgresql.conf"
  # from /: the caller's directory may be one postgres cannot enter (pg_ctl says so)
  # shellcheck disable=SC2086  # FN_PG_ENV is a list of VAR=value words
  (cd / && env ${FN_PG_ENV:-} runuser -u postgres -- "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null) \
    || { cat "$dir/server.log" >&2; fn_die "cluster did not start"; }
}

# fn_stop_cluster DIR: fast shutdown; fails if the server does not stop.
fn_stop_cluster() {
  (cd / && fn_as_postgres "$(fn_pg_bindir)/pg_ctl" -D "$1/data" -m fast -w -t 60 stop >/dev/null)
}

# Trap-friendly variant: does nothing if no server runs there, never fails.
fn_stop_cluster_quiet() {
  [[ -n "${1:-}" && -f "$1/data/postmaster.pid" ]] || return 0
  fn_stop_cluster "$1" >/dev/null 2>&1 || true
}

# fn_psql DIR PORT [psql args...]: psql as postgres against the cluster in DIR.
fn_psql() {
  local dir="$1" port="$2"
  shift 2
  (cd / && fn_as_postgres "$(fn_pg_bindir)/psql" -X -v ON_ERROR_STOP=1 -h "$dir" -p "$port" -d postgres "$@")
}

# Print a TCP port that nothing listens on (the clusters listen on a Unix socket
# only, but a distinct port keeps socket and lock file names apart anyway).
fn_free_port() {
  local port hex
  while :; do
    port=$((20000 + RANDOM % 20000))
    hex="$(printf ':%04X ' "$port")"
    if ! grep -qi "$hex" /proc/net/tcp /proc/net/tcp6 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
}
