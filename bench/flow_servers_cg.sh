# shellcheck shell=bash
# ---- the primary's instructions per written row (callgrind) -------------------
# Sourced by flow_servers.sh (section "servers"; uses its fs_* helpers and rec);
# the valgrind mechanism is bench/callgrind_lib.sh, as in bench/callgrind.sh. A
# walsender cannot stream to a single-user backend, so here the whole primary runs
# under callgrind (its postmaster, and so every process it forks), counting only
# inside ExecuteCallStmt (the writing backend: a procedure's COPY of FS_CG_ROWS rows
# and its COMMIT, or a loop of FS_CG_TX single-row INSERT transactions) and, for the
# walsender, XLogReadRecord and LogicalDecodingProcessRecord (reading the WAL,
# decoding it, pgoutput's sending; not its idle loop). Four cases, the flows of the
# timed part, and a baseline without flownode:
#   plain  wal_level = replica, no flownode (shared_preload_libraries empty)
#   none   wal_level = replica, flownode preloaded, a table with no flow
#   local  the same cluster, a table with FS_FLOWS flows (flownode's triggers)
#   remote wal_level = logical, no flownode on the primary; the table is published and
#          the flow server's subscription streams it (its FS_FLOWS flows run there)
# The walsender's figure is the difference between a run with the writes and one
# without just before it (the subscription disabled after each, so the walsender
# exits and writes its profile): a restarted walsender decodes from its slot's
# restart point, the same in both.

if [[ $MODE == full ]]; then
  FS_CG_ROWS=50000
  FS_CG_TX=2000
else
  FS_CG_ROWS=10000
  FS_CG_TX=500
fi
SIZE_VARS+=" FS_CG_ROWS FS_CG_TX"
# shellcheck source=callgrind_lib.sh
. "$BENCH/callgrind_lib.sh"
FS_CG_CONF="huge_pages = off
autovacuum = off"

# fs_cg_tables NAME TABLE...: the tables, their COPY and INSERT-loop procedures
fs_cg_tables() {
  local c=$1 t
  shift
  for t in "$@"; do
    fs_table "$c" "$t"
    fsq "$c" <<SQL >/dev/null
CREATE PROCEDURE copy_$t(f text) LANGUAGE plpgsql AS \$\$
BEGIN EXECUTE format('COPY $t FROM %L (FORMAT csv)', f); COMMIT; END \$\$;
CREATE PROCEDURE loop_$t(n int) LANGUAGE plpgsql AS \$\$
BEGIN
  FOR i IN 1..n LOOP -- a second apart after the COPY's rows: a new minute every 60
    INSERT INTO $t VALUES (0, i % 100, timestamptz '2025-01-01' + i * interval '1 second', i);
    COMMIT;
  END LOOP;
END \$\$;
SQL
  done
}

# fs_cg_start NAME: restart cluster NAME's postmaster under callgrind
fs_cg_start() {
  local d="${1}_DIR" p="${1}_PORT" k
  fn_stop_cluster "${!d}"
  cg_cmd "$FS_CG_OUT/$1.%p.out" ExecuteCallStmt XLogReadRecord LogicalDecodingProcessRecord
  (cd / && runuser -u postgres -- "${CG_CMD[@]}" "$(fn_pg_bindir)/postgres" -D "${!d}/data" >"${!d}/valgrind.log" 2>&1 &)
  for ((k = 0; k < 300; k++)); do
    "$(fn_pg_bindir)/pg_isready" -q -h "${!d}" -p "${!p}" && return 0
    sleep 1
  done
  fn_die "$1 did not start under callgrind (${!d}/valgrind.log)"
}

# fs_cg_exited NAME PID: waits for PID to exit; prints the instructions it counted
fs_cg_exited() {
  local k
  for ((k = 0; k < 600 && $(kill -0 "$2" 2>/dev/null && echo 1 || echo 0); k++)); do sleep 0.2; done
  for ((k = 0; k < 100; k++)); do
    [[ -s "$FS_CG_OUT/$1.$2.out" ]] && grep -Eq '^(summary|totals):' "$FS_CG_OUT/$1.$2.out" && break
    sleep 0.2
  done
  cg_total "$FS_CG_OUT/$1.$2.out"
}

# fs_cg_call NAME TABLE STATEMENT: a session that runs STATEMENT; prints its
# backend's count. A single-row INSERT into TABLE, rolled back and not counted, goes
# first: the backend's one-time loads (the table's relcache entry, its flows) are
# not per row, and over a short run they would weigh on every row.
fs_cg_call() {
  local pid
  pid=$(fsq "$1" -c "SELECT pg_backend_pid()" -c "BEGIN" \
    -c "INSERT INTO $2 VALUES (0, 0, timestamptz '2023-06-01', 0)" -c "ROLLBACK" -c "$3" | head -1)
  fs_cg_exited "$1" "$pid"
}

# fs_cg_walsender STATEMENT: on CB with the subscription enabled, STATEMENT (or
# nothing) until the flow server has it all; prints the walsender's count (the
# backend's goes to $FS_CG_OUT/backend: this runs in a command substitution)
fs_cg_walsender() {
  local pid k
  fsq FS -c "ALTER SUBSCRIPTION cg_sub ENABLE" >/dev/null
  for ((k = 0; k < 600; k++)); do
    pid=$(fsq CB -c "SELECT pid FROM pg_stat_replication WHERE application_name = 'cg_sub' AND state = 'streaming'")
    [[ -n $pid ]] && break
    sleep 0.2
  done
  [[ -n $pid ]] || fn_die "the walsender of cg_sub did not start"
  if [[ -n $1 ]]; then fs_cg_call CB cg_remote "$1" >"$FS_CG_OUT/backend"; fi
  fs_wait FS cg_remote >/dev/null
  fsq FS -c "ALTER SUBSCRIPTION cg_sub DISABLE" >/dev/null
  fs_cg_exited CB "$pid"
}

fs_callgrind() {
  local csv idle w t
  cg_require
  FS_CG_OUT="$(fn_workdir)"
  FS_DIRS+=("$FS_CG_OUT")
  fs_cluster CA "wal_level = replica
$FS_CG_CONF"
  fs_cluster CB "shared_preload_libraries = ''
$FS_CG_CONF"
  fs_cluster CC "wal_level = replica
shared_preload_libraries = ''
$FS_CG_CONF"
  csv="$FS_CG_OUT/rows.csv"
  fsq CA -c "CREATE EXTENSION flownode" >/dev/null
  fs_cg_tables CA cg_none cg_local
  fs_flows CA cg_local NULL
  fs_cg_tables CB cg_remote
  fs_cg_tables CC cg_plain
  fsq CB -c "CREATE PUBLICATION cg_pub FOR TABLE cg_remote" >/dev/null
  fs_table FS cg_remote
  fs_flows FS cg_remote NULL
  fsq FS -c "CREATE SUBSCRIPTION cg_sub CONNECTION '$(fs_conninfo CB)' PUBLICATION cg_pub WITH (enabled = false)" >/dev/null
  # the timed part's rows: shard 0, 100 devices, a second apart
  fsq CA -c "COPY (SELECT 0, g % 100, timestamptz '2024-01-01' + g * interval '1 second', g FROM generate_series(1, $FS_CG_ROWS) g) TO '$csv' (FORMAT csv)"
  fs_cg_start CA
  for t in none local; do
    rec servers cg "$t" copy 1 "$(fs_cg_call CA "cg_$t" "CALL copy_cg_$t('$csv')")"
    rec servers cg "$t" tx 1 "$(fs_cg_call CA "cg_$t" "CALL loop_cg_$t($FS_CG_TX)")"
  done
  fn_stop_cluster "$CA_DIR"
  fs_cg_start CC
  rec servers cg plain copy 1 "$(fs_cg_call CC cg_plain "CALL copy_cg_plain('$csv')")"
  rec servers cg plain tx 1 "$(fs_cg_call CC cg_plain "CALL loop_cg_plain($FS_CG_TX)")"
  fn_stop_cluster "$CC_DIR"
  fs_cg_start CB
  for t in copy tx; do
    idle=$(fs_cg_walsender "")
    if [[ $t == copy ]]; then
      w=$(fs_cg_walsender "CALL copy_cg_remote('$csv')")
    else
      w=$(fs_cg_walsender "CALL loop_cg_remote($FS_CG_TX)")
    fi
    rec servers cg remote "$t" 1 "$(cat "$FS_CG_OUT/backend")"
    rec servers cg walsender "$t" 1 "$((w - idle))"
  done
}
