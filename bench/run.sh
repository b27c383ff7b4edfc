#!/usr/bin/env bash
# flownode benchmark suite: `make bench` (full, at most 15 minutes on 2 cores) or
# `bash bench/run.sh --quick` / `make -C bench quick` (at most 3 minutes).
#
# Run as root on Debian 12 (it installs what is missing with apt-get and installs
# flownode with `make install`); PostgreSQL runs as the `postgres` user in one
# throwaway cluster (its own directory and port) that is removed at the end.
# Writes bench/results/report.md, bench/results/freshness.svg and the raw
# measurements (bench/results/raw/), and prints the table; --quick writes to
# bench/results/quick/ instead.
#
# Every timed figure is a ratio against a baseline measured in the same run: each
# case alternates the baseline and the flow variant (the order rotates every round),
# and the report gives the median of the per-round ratios with their min and max.
# `--only 'copy refresh'` runs some sections only, in the order of SECTIONS below;
# the report then shows what ran. callgrind (instruction counts, bench/callgrind.sh)
# is part of the full run only; it runs beside the generation of the large tables
# (untimed) when a section needs them, since instruction counts do not depend on
# the load. Each section is one function, bench_NAME; add new ones to SECTIONS.
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../test/common.sh
. "$BENCH/../test/common.sh"

MODE=full
SECTIONS="micro copy multirow single record sparse backfill refresh jit scattered interrupt freshness catchup idle busy shmem pool dimension read chain servers granular callgrind"
ONLY=
while (($#)); do
  a=$1
  shift
  case "$a" in
    --quick) MODE=quick ;;
    --only)
      ONLY=${1:?--only needs a list, e.g. --only 'refresh freshness'}
      shift
      ;;
    -h | --help)
      sed -n '2,19p' "$0"
      exit 0
      ;;
    *) fn_die "unknown argument: $a (use --quick, --only LIST)" ;;
  esac
done
if [[ -n $ONLY ]]; then
  for b in $ONLY; do [[ " $SECTIONS " == *" $b "* ]] || fn_die "unknown section: $b (sections: $SECTIONS)"; done
  SECTIONS=$(for b in $SECTIONS; do if [[ " $ONLY " == *" $b "* ]]; then echo "$b"; fi; done | tr '\n' ' ')
elif [[ $MODE == quick ]]; then
  SECTIONS=${SECTIONS/ callgrind/}
fi
[[ $(id -u) -eq 0 ]] || fn_die "run as root (installs packages and the extension; the cluster runs as postgres)"
has_section() { [[ " $SECTIONS " == *" $1 "* ]]; }

# ---- sizes -------------------------------------------------------------------
# Scaled for this 2-core machine (the full run must stay within 15
# minutes, also while other work shares the machine): the targets' 2M/20M/60M-row tables
# alone take longer than that to generate, index and read there, so the one-window
# refresh runs at 1M/4M/12M rows (flat over 12x instead of 30x), the scattered late
# rows, JIT and interrupt cases at 4M, the backfill at 12M; the sparse transaction has
# 50,000 rows (521,671 in the target, scaled); freshness runs 30 s at each rate; COPY
# 100k x 3 rounds, multi-row 50k x 3, pgbench 3 rounds (1 client: 1), the durable
# record 30k x 2, the catch-up year at 2 rows per minute, idle 15 + 10 s, busy 100k x 2;
# callgrind counts 20,000 COPY rows, 5,000 multi-row rows and 1,000 transactions. Any
# size can be set from the environment as BENCH_<NAME> (e.g. BENCH_SC_BIG=60000000
# BENCH_SC_MID=20000000 BENCH_SC_SMALL=2000000 for the targets' sizes on a bigger machine).
if [[ $MODE == full ]]; then
  COPY_ROWS=100000  # copy: rows per COPY
  COPY_ROUNDS=3     #   rounds (each: no flow, 1 flow, 5 flows)
  MULTI_ROWS=50000  # multirow: rows per multi-row run, 1,000 per statement
  MULTI_ROUNDS=3
  PGB_SECONDS=2 # single: pgbench duration of one single-row run
  PGB_ROUNDS=3  #   rounds with 4 clients (the 0.95 tps target)
  PGB_ROUNDS_C1=1 # rounds with 1 client
  REC_TX=30000  # record: transactions per durable-record run
  REC_ROUNDS=2
  SP_ROWS=50000  # sparse: rows of the sparse transaction (years 1-9999)
  SP_ROUNDS=2    #   timed pairs (plus one watched round)
  SC_SMALL=1000000  # refresh: the one-window refresh at three sizes (rows; 100 per 1-minute window)
  SC_MID=4000000    #   also the table of the scattered late rows, JIT and interrupt cases
  SC_BIG=12000000   #   also the backfill
  R_ROUNDS=10       # refresh: one-window rounds
  R_MV_ROUNDS=2     #   REFRESH MATERIALIZED VIEW runs (on the small table)
  BF_PLAIN=2        # backfill: INSERT ... SELECT runs around the one backfill (before and after)
  JIT_WINDOWS=3000  # jit: separate windows per refresh
  JIT_ROUNDS=2      #   pairs (jit on / off)
  SC_LATE=1000      # scattered: late rows per batch
  SC_ROUNDS=3       #   pairs with the time index
  SC_NOIDX_ROUNDS=1 #   pairs without it
  INT_ROUNDS=2      # interrupt: pg_terminate_backend rounds (then one fast shutdown)
  F_SCHEDULE="20000:30,50000:30,100000:30" # freshness: rows/s:seconds, 4 writers
  F_ALIGN=0         #   1: a warm-up until the next minute first (each rate then starts a window)
  Y_DAYS=366     # catchup: days of data from 2024-01-01 (a year)
  Y_PER_MIN=2    #   rows per minute (2: 1.05M rows)
  Y_PAIRS=2      #   create_flow / INSERT ... SELECT pairs
  B_PAIRS=2      #   backfill rounds (a month each)
  IDLE_FLOWS=100 # idle: flows, one table each
  IDLE_SECONDS=15 #  with the default cadence
  IDLE_FAST_SECONDS=10 # then with eval_interval 1 s
  BUSY_FLOWS=20
  BUSY_ROWS=100000
  BUSY_PAIRS=2
  CG_ROWS=20000  # callgrind.sh: COPY rows per run
  CG_MULTI_ROWS=5000 #   multi-row INSERT rows
  CG_TX=1000     #   single-row transactions
else
  # quick: every section at a small size, one or two rounds each (meant for 3 minutes on
  # a quiet 2-core machine; indicative only, and never written over the full results)
  COPY_ROWS=20000
  COPY_ROUNDS=2
  MULTI_ROWS=10000
  MULTI_ROUNDS=2
  PGB_SECONDS=1
  PGB_ROUNDS=1
  PGB_ROUNDS_C1=0 # no 1-client runs
  REC_TX=10000
  REC_ROUNDS=1
  SP_ROWS=20000
  SP_ROUNDS=1
  SC_SMALL=100000
  SC_MID=1000000
  SC_BIG=1000000
  R_ROUNDS=4
  R_MV_ROUNDS=1
  BF_PLAIN=1
  JIT_WINDOWS=3000
  JIT_ROUNDS=1
  SC_LATE=1000
  SC_ROUNDS=1
  SC_NOIDX_ROUNDS=1
  INT_ROUNDS=1
  F_SCHEDULE="20000:5,50000:5,100000:5"
  F_ALIGN=0
  Y_DAYS=30
  Y_PER_MIN=1
  Y_PAIRS=1
  B_PAIRS=1
  IDLE_FLOWS=10
  IDLE_SECONDS=3
  IDLE_FAST_SECONDS=3
  BUSY_FLOWS=10
  BUSY_ROWS=30000
  BUSY_PAIRS=1
  CG_ROWS=20000 # (callgrind is not part of the quick run; --only callgrind uses these)
  CG_MULTI_ROWS=5000
  CG_TX=1000
fi
SIZE_VARS="COPY_ROWS COPY_ROUNDS MULTI_ROWS MULTI_ROUNDS PGB_SECONDS PGB_ROUNDS PGB_ROUNDS_C1 REC_TX REC_ROUNDS
  SP_ROWS SP_ROUNDS SC_SMALL SC_MID SC_BIG R_ROUNDS R_MV_ROUNDS BF_PLAIN JIT_WINDOWS JIT_ROUNDS SC_LATE SC_ROUNDS
  SC_NOIDX_ROUNDS INT_ROUNDS F_SCHEDULE F_ALIGN Y_DAYS Y_PER_MIN Y_PAIRS B_PAIRS IDLE_FLOWS IDLE_SECONDS IDLE_FAST_SECONDS
  BUSY_FLOWS BUSY_ROWS BUSY_PAIRS CG_ROWS CG_MULTI_ROWS CG_TX"
# read_flow: its section, sizes and bench_read
# shellcheck source=read_flow.sh
. "$BENCH/read_flow.sh"
# chains and epoch time: its section, sizes and bench_chain
# shellcheck source=chain.sh
. "$BENCH/chain.sh"
# the pool of workers: its section, sizes and bench_pool
# shellcheck source=pool.sh
. "$BENCH/pool.sh"
# flow servers fed by logical replication: its section, sizes, bench_servers
# shellcheck source=flow_servers.sh
. "$BENCH/flow_servers.sh"
# key marks: its section, sizes and bench_granular
# shellcheck source=granular.sh
. "$BENCH/granular.sh"
# BENCH_<NAME> in the environment overrides a size
for v in $SIZE_VARS; do
  o=BENCH_$v
  if [[ -n ${!o:-} ]]; then printf -v "$v" '%s' "${!o}"; fi
done
export CALLGRIND_ROWS=$CG_ROWS CALLGRIND_MULTI_ROWS=$CG_MULTI_ROWS CALLGRIND_TX=$CG_TX

# a quick run is indicative only: it never replaces the full run's results
if [[ $MODE == quick ]]; then RESULTS="$BENCH/results/quick"; else RESULTS="$BENCH/results"; fi
RAW="$RESULTS/raw"
T0=$(date +%s)

log() { printf '[%4ds] %s\n' "$(($(date +%s) - T0))" "$*"; }

# ---- dependencies, build, cluster --------------------------------------------
fn_install_deps # includes libpq-dev and libbenchmark-dev
extra=()
command -v python3 >/dev/null 2>&1 || extra+=(python3)
[[ -x "$(fn_pg_bindir)/pgbench" ]] || extra+=(postgresql-client-15)
if ((${#extra[@]})); then
  fn_log "installing: ${extra[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${extra[@]}" >/dev/null
fi
fn_build_install
make -s -C "$BENCH" bins >/dev/null
# The server loads flownode.so again (by file identity) in new backends and workers:
# a reinstall while the benchmark runs would mix two builds. Checked at the end.
SO="$("${PG_CONFIG:-pg_config}" --pkglibdir)/flownode.so"
SO_ID="$(stat -c '%d:%i:%Y' "$SO")"
FB="$BENCH/bin/fnbench"
PGBENCH="$(fn_pg_bindir)/pgbench"

rm -rf "$RAW"
mkdir -p "$RAW"
DIR="$(fn_workdir)"
PORT="$(fn_free_port)"
CG_PID= # bench/callgrind.sh when it runs in the background
cleanup() {
  local rc=$?
  if ((rc != 0)) && [[ -f "$DIR/server.log" ]]; then
    echo "---- last lines of the server log ----" >&2
    tail -n 30 "$DIR/server.log" >&2
  fi
  # a background callgrind.sh stops its own cluster when it ends: let it end
  if [[ -n $CG_PID ]]; then wait "$CG_PID" 2>/dev/null || true; fi
  # the clusters of the flow servers section, if it stopped half-way
  fs_cleanup
  # the pool section's own cluster, if it stopped half-way
  if [[ -n ${P_DIR:-} ]]; then
    fn_stop_cluster_quiet "$P_DIR"
    rm -rf "$P_DIR"
  fi
  fn_stop_cluster_quiet "$DIR"
  rm -rf "$DIR"
  exit "$rc"
}
trap cleanup EXIT

# Benchmark settings on top of test/flownode.conf; everything else is PostgreSQL's
# default (fsync, synchronous_commit, wal_level, work_mem, autovacuum, jit ...).
BENCH_CONF="shared_buffers = 1GB
max_wal_size = 4GB
checkpoint_timeout = 30min
max_worker_processes = 128
flownode.max_flows = 128
flownode.verify_folds = off
flownode.fold_open_window = ${BENCH_FOLD:-on}"

# glibc's malloc returns freed memory at the top of the heap to the kernel, and a
# backend then page-faults it back in at its next statement. Whether that happens
# depends on incidental heap layout: in this benchmark the table without a flow
# re-faulted the parse tree of every multi-row statement (8,500 minor faults per
# 20,000 rows against 2,000 with a flow) and came out 20% slower than the table
# with a flow. Fixed thresholds take that accident out of both sides.
MALLOC_ENV="MALLOC_TRIM_THRESHOLD_=268435456 MALLOC_MMAP_THRESHOLD_=268435456"

log "starting a throwaway cluster in $DIR (port $PORT)"
FN_PG_ENV="$MALLOC_ENV" fn_start_cluster "$DIR" "$PORT" "$BENCH_CONF"
# start_cluster: start the initialised cluster again (after a stop), same environment
start_cluster() {
  # shellcheck disable=SC2086  # MALLOC_ENV is a list of VAR=value words
  (cd / && env $MALLOC_ENV runuser -u postgres -- "$(fn_pg_bindir)/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" \
    -w -t 60 start >/dev/null) || fn_die "the cluster did not start again"
}

CONN="host=$DIR port=$PORT dbname=postgres user=postgres"
sql() { fn_psql "$DIR" "$PORT" -qtA "$@"; }
pgb() { "$PGBENCH" -h "$DIR" -p "$PORT" -U postgres -n -M prepared "$@" postgres 2>&1; }
rec() {
  local IFS=$'\t'
  echo "$*" >>"$RAW/measurements.tsv"
}
meta() { printf '%s\t%s\n' "$1" "$2" >>"$RAW/meta.tsv"; }
section_start() {
  SECTION_T=$(date +%s)
  log "$1"
}
section_end() { meta "seconds_$1" "$(($(date +%s) - SECTION_T))"; }

sql -c "CREATE EXTENSION flownode" >/dev/null

meta mode "$MODE"
meta started "$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
meta cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')"
meta cores "$(nproc)"
meta memory "$(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
meta kernel "$(uname -r)"
meta postgres "$(sql -c 'SHOW server_version')"
meta flownode_commit "$(git -C "$BENCH/.." rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$BENCH/.." diff --quiet HEAD -- src include sql 2>/dev/null || echo ' (with uncommitted changes)')"
meta settings "$(printf '%s\n%s' "$(grep -v '^#' "$FN_ROOT/test/flownode.conf")" "$BENCH_CONF" | tr '\n' ';')"
meta malloc_env "$MALLOC_ENV"
for v in $SIZE_VARS; do meta "$v" "${!v}"; done
meta sections "$SECTIONS"
meta loadavg_start "$(cut -d' ' -f1-3 /proc/loadavg)"
for g in flownode.max_rows_per_refresh flownode.min_refresh_interval flownode.local_ranges_per_flow \
  flownode.dirty_ranges_per_flow work_mem synchronous_commit jit; do
  meta "show_$g" "$(sql -c "SHOW $g")"
done

# ---- helpers ----------------------------------------------------------------

# flow_query K TABLE: the K-th flow of a table. 1-5 are the five flows of the ingest
# sections (different windows, keys and aggregates); K > 5 is a (K-5)-minute date_bin
# (section busy).
flow_query() {
  local k=$1 t=$2 origin="timestamptz '2000-01-01'"
  case $k in
    1) echo "SELECT date_bin('1 minute', ts, $origin) AS minute, host, count(*) AS n, sum(v) AS sum_v, max(v) AS max_v FROM $t GROUP BY 1, 2" ;;
    2) echo "SELECT date_bin('1 minute', ts, $origin) AS minute, count(*) AS n, avg(v) AS avg_v FROM $t GROUP BY 1" ;;
    3) echo "SELECT date_bin('5 minutes', ts, $origin) AS w, host, min(v) AS min_v, max(v) AS max_v FROM $t GROUP BY 1, 2" ;;
    4) echo "SELECT date_trunc('hour', ts) AS hour, host, count(*) AS n, sum(v) AS sum_v FROM $t GROUP BY 1, 2" ;;
    5) echo "SELECT date_trunc('day', ts) AS day, count(*) AS n, max(v) AS max_v FROM $t GROUP BY 1" ;;
    *) echo "SELECT date_bin('$((k - 5)) minutes', ts, $origin) AS w, host, count(*) AS n, sum(v) AS sum_v, max(v) AS max_v FROM $t GROUP BY 1, 2" ;;
  esac
}

# make_source TABLE NFLOWS [FIRST_QUERY] [EVAL_INTERVAL]: (re)creates TABLE(ts, host,
# v) with an index on ts and NFLOWS flows (queries FIRST_QUERY..; sinks TABLE_s1..),
# and waits until every flow's worker runs. The benchmark's source tables have
# autovacuum off: otherwise an ANALYZE of one table lands in another table's run
# (on 2 cores that is a third of the machine); they are truncated between runs.
make_source() {
  local t=$1 n=$2 first=${3:-1} eval=${4:-NULL} k
  {
    echo "SET client_min_messages = warning;"
    echo "DROP TABLE IF EXISTS $t;"
    for ((k = 1; k <= 25; k++)); do echo "DROP TABLE IF EXISTS ${t}_s$k;"; done
    echo "CREATE TABLE $t (ts timestamptz NOT NULL, host text NOT NULL, v float8 NOT NULL) WITH (autovacuum_enabled = off);"
    echo "CREATE INDEX ON $t (ts);"
    for ((k = 1; k <= n; k++)); do
      printf "SELECT flownode.create_flow('%s_f%d', '%s_s%d', \$q\$%s\$q\$, eval_interval => %s);\n" \
        "$t" "$k" "$t" "$k" "$(flow_query $((first + k - 1)) "$t")" "$eval"
    done
  } | sql >/dev/null
  wait_active "$t" "$n"
}

drop_source() {
  local t=$1 k
  {
    echo "SET client_min_messages = warning;"
    echo "DROP TABLE IF EXISTS $t;"
    for ((k = 1; k <= 25; k++)); do echo "DROP TABLE IF EXISTS ${t}_s$k;"; done
  } | sql >/dev/null
}

# wait_active TABLE N: until N flows of TABLE have a running worker.
wait_active() {
  local i
  for ((i = 0; i < 300; i++)); do
    [[ $(sql -c "SELECT count(*) FROM flownode.flows WHERE source_table = '$1'::regclass AND state = 'active' AND worker_pid IS NOT NULL") -ge $2 ]] && return 0
    sleep 0.05
  done
  fn_die "the flows of $1 did not start"
}

# rotate ROUND ITEMS...: the items, rotated by ROUND (the order changes every round).
rotate() {
  local r=$1
  shift
  local a=("$@") n=$# i
  for ((i = 0; i < n; i++)); do echo "${a[$(((i + r) % n))]}"; done
}

tps_of() { awk '/^tps = / {print $3; exit}'; }
PGB="$DIR/pgbench"
mkdir -p "$PGB"

# ---- micro: the marking path in isolation (Google Benchmark) ------------------
bench_micro() {
  section_start "micro: the marking path alone (Google Benchmark)"
  "$BENCH/bin/marking_bench" --benchmark_min_time="$([[ $MODE == full ]] && echo 0.3 || echo 0.05)" \
    --benchmark_repetitions="$([[ $MODE == full ]] && echo 3 || echo 1)" --benchmark_report_aggregates_only=true \
    --benchmark_out="$RAW/marking_bench.json" --benchmark_out_format=json >/dev/null 2>"$RAW/marking_bench.err"
  section_end micro
}

# ---- copy, multirow, single: ingest slowdown ---------------------------------
# Three tables: ing_base (no flow), ing_f1 (one flow), ing_f5 (five flows),
# created afresh for every case. Their flows have eval_interval 1 day: no refresh
# runs during the runs, so what is measured is the writer's cost (trigger, commit-time
# publication, durable record); refreshing is measured by the sections from sparse on.
ingest_tables() {
  make_source ing_base 0
  make_source ing_f1 1 1 "'1 day'"
  make_source ing_f5 5 1 "'1 day'"
}
drop_ingest_tables() {
  drop_source ing_base
  drop_source ing_f1
  drop_source ing_f5
}

# ingest_case METHOD ROWS ROUNDS: COPY or multi-row, in time order then scattered;
# fnbench alternates the three tables (TRUNCATE + CHECKPOINT before every run).
ingest_case() {
  local method=$1 nrows=$2 rounds=$3 order r t secs cpu
  for order in inorder scattered; do
    ingest_tables
    "$FB" ingest "$CONN" "$method" "$order" "$nrows" "$rounds" ing_base ing_f1 ing_f5 \
      | while IFS=$'\t' read -r r t secs cpu; do rec ingest "$method" "$order" "${t#ing_}" "$r" "$secs" "$cpu"; done
    drop_ingest_tables
  done
}

bench_copy() {
  section_start "copy: ingest, COPY of $COPY_ROWS rows, $COPY_ROUNDS rounds"
  ingest_case copy "$COPY_ROWS" "$COPY_ROUNDS"
  section_end ingest_copy
}

bench_multirow() {
  section_start "multirow: ingest, multi-row INSERT of $MULTI_ROWS rows (1,000 per statement), $MULTI_ROUNDS rounds"
  ingest_case multirow "$MULTI_ROWS" "$MULTI_ROUNDS"
  section_end ingest_multirow
}

# Single-row autocommit INSERTs with pgbench: in time order (ts = now()) and at
# random times within one day (late data: 1,440 windows, each recorded once until
# the flow refreshes it); TRUNCATE + CHECKPOINT before every run.
bench_single() {
  local clients order r v tps rounds
  section_start "single: ingest, single-row INSERT (pgbench, 1 and 4 clients, ${PGB_SECONDS}s runs, $PGB_ROUNDS_C1 / $PGB_ROUNDS rounds)"
  for v in base f1 f5; do
    cat >"$PGB/inorder_$v.sql" <<EOF
\set h random(0, 9)
\set v random(0, 399)
INSERT INTO ing_$v (ts, host, v) VALUES (now(), 'host-' || :h, :v * 0.25);
EOF
    cat >"$PGB/day_$v.sql" <<EOF
\set s random(0, 86399999)
\set h random(0, 9)
\set v random(0, 399)
INSERT INTO ing_$v (ts, host, v) VALUES (timestamptz '2024-06-01 00:00:00+00' + :s * interval '1 millisecond', 'host-' || :h, :v * 0.25);
EOF
  done
  for clients in 1 4; do
    rounds=$PGB_ROUNDS
    ((clients == 1)) && rounds=$PGB_ROUNDS_C1
    ((rounds > 0)) || continue
    for order in inorder day; do
      ingest_tables
      for ((r = 1; r <= rounds; r++)); do
        for v in $(rotate "$r" base f1 f5); do
          sql -c "TRUNCATE ing_$v" -c "CHECKPOINT" >/dev/null
          tps=$(pgb -f "$PGB/${order}_$v.sql" -c "$clients" -j "$clients" -T "$PGB_SECONDS" | tps_of)
          rec ingest "single_c$clients" "$order" "$v" "$r" "$tps"
        done
      done
      drop_ingest_tables
    done
  done
  section_end ingest_single
}

# ---- record: per-transaction cost of the durable record ----------------------
# A procedure commits REC_TX single-row transactions in a loop (COMMIT inside
# PL/pgSQL: every iteration is a real transaction with flownode's commit path, and
# no client round trip in the way). ts = 2000-01-01 + m minutes with m random over
# 190 years (every commit marks a new window, so it writes a row to
# flownode.pending) or m fixed (the window is already recorded: the record is
# skipped), against a table without a flow. synchronous_commit = off in this
# session: the record adds no flush of its own (it is part of the same commit), and
# the WAL flush of every commit, the same in all three cases, would drown it.
bench_record() {
  local r v t name val kind
  section_start "record: the durable record per transaction ($REC_TX transactions per run, $REC_ROUNDS rounds)"
  make_source rec_plain 0
  make_source rec_flow 1 1 "'1 day'"
  for t in rec_plain rec_flow; do
    sql >/dev/null <<EOF
CREATE PROCEDURE fnb_loop_$t(n int, same_window bool) LANGUAGE plpgsql AS \$\$
BEGIN
  FOR i IN 1..n LOOP
    INSERT INTO $t (ts, host, v) VALUES (timestamptz '2000-01-01 00:00:00+00'
      + (CASE WHEN same_window THEN 12345678 ELSE (random() * 100000000)::bigint END) * interval '1 minute',
      'host-1', 1.5);
    COMMIT;
  END LOOP;
END \$\$;
EOF
  done
  {
    echo "SET synchronous_commit = off;"
    echo "CALL fnb_loop_rec_plain(200, false);" # warm-up
    echo "CALL fnb_loop_rec_flow(200, true);"
    for ((r = 1; r <= REC_ROUNDS; r++)); do
      for v in $(rotate "$r" plain newwin samewin); do
        t=rec_$([[ $v == plain ]] && echo plain || echo flow)
        echo "TRUNCATE $t;"
        echo "CHECKPOINT;"
        echo "=pre_${v}_$r SELECT count(*) FROM flownode.pending"
        echo "@run_${v}_$r CALL fnb_loop_$t($REC_TX, $([[ $v == samewin ]] && echo true || echo false));"
        echo "=post_${v}_$r SELECT count(*) FROM flownode.pending"
      done
    done
  } | "$FB" sql "$CONN" | while IFS=$'\t' read -r name val; do
    IFS=_ read -r kind v r <<<"$name"
    rec record "$kind" - "$v" "$r" "$val"
  done
  sql -c "DROP PROCEDURE fnb_loop_rec_plain, fnb_loop_rec_flow" >/dev/null
  drop_source rec_plain
  drop_source rec_flow
  section_end record
}

# fb_rec KIND: records the lines of `fnbench sql` ("case_round<TAB>values...") as
# measurements of KIND (round = the part after the last underscore).
fb_rec() {
  local kind=$1 name rest
  while IFS=$'\t' read -r name rest; do
    # shellcheck disable=SC2086  # rest: the values, one field each
    rec "$kind" "${name%_*}" - - "${name##*_}" $rest
  done
}

flow_value() { sql -c "SELECT $2 FROM flownode.flows NATURAL JOIN (SELECT flow_id, runs, folded_refreshes FROM flownode.flow_info) i WHERE flow_name = '$1'"; }

# ---- one sparse transaction --------------------------------------
# One INSERT of SP_ROWS rows spread evenly over years 1-9999 (a user's report of
# 521,671 rows 7 days apart, scaled) into a source with a time index and a 1-minute flow
# (eval_interval 1 hour: only flush_flow refreshes). Timed: flush_flow against one
# INSERT ... SELECT ... GROUP BY of the same rows into an empty table with the same
# key, alternating, each round on a new table and flow (a new worker: its row budget
# starts again at 50,000). One more round, untimed, polls the flows view and the
# sink every 20 ms while the flush runs (the poller would slow a timed flush): the
# view must never say dirty_windows = 0 while the sink misses rows, unless a refresh
# is in flight (whose windows it does not count, as the user guide says).
SPQ="SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, count(*) AS n, sum(v) AS sum_v, max(v) AS max_v FROM sp_src GROUP BY 1"
sparse_setup() {
  sql >/dev/null <<EOF
SET client_min_messages = warning;
SELECT flownode.drop_flow('sp_flow', if_exists => true);
DROP TABLE IF EXISTS sp_src, sp_sink, sp_plain;
CREATE TABLE sp_src (ts timestamptz NOT NULL, v int4 NOT NULL) WITH (autovacuum_enabled = off);
CREATE INDEX ON sp_src (ts);
CREATE TABLE sp_plain (minute timestamptz PRIMARY KEY, n bigint, sum_v bigint, max_v int4);
SELECT flownode.create_flow('sp_flow', 'sp_sink', \$q\$$SPQ\$q\$, eval_interval => '1 hour');
EOF
  wait_active sp_src 1
}
sparse_insert() { # the one sparse transaction, then VACUUM (hint bits: neither side pays them)
  echo "@insert_$1 INSERT INTO sp_src SELECT timestamptz '0001-01-01 00:00:00+00' + (i::float8 / $SP_ROWS) * (timestamptz '9999-12-31 00:00:00+00' - timestamptz '0001-01-01 00:00:00+00'), i % 400 FROM generate_series(0, $SP_ROWS - 1) i;"
  echo "VACUUM ANALYZE sp_src;"
  echo "CHECKPOINT;"
  echo "=dirty_$1 SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'sp_flow'"
}
sparse_check() { echo "=check_$1 SELECT count(*) FROM ((SELECT * FROM sp_sink EXCEPT $SPQ) UNION ALL ($SPQ EXCEPT SELECT * FROM sp_sink)) d"; }

bench_sparse() {
  local r pp
  section_start "sparse: one transaction of $SP_ROWS rows over years 1-9999, $SP_ROUNDS pairs + 1 watched round"
  for ((r = 1; r <= SP_ROUNDS; r++)); do
    sparse_setup
    {
      sparse_insert "$r"
      flush="@flush_$r +value SELECT flownode.flush_flow('sp_flow');"
      plain="@plain_$r INSERT INTO sp_plain $SPQ;"
      if ((r % 2)); then printf '%s\nCHECKPOINT;\n%s\n' "$flush" "$plain"; else printf '%s\nCHECKPOINT;\n%s\n' "$plain" "$flush"; fi
      echo "=runs_$r SELECT runs FROM flownode.flow_info WHERE flow_name = 'sp_flow'"
      sparse_check "$r"
    } | "$FB" sql "$CONN" | fb_rec sparse
  done
  # the watched round
  sparse_setup
  sparse_insert 0 | "$FB" sql "$CONN" | fb_rec sparse
  rm -f "$DIR/sparse.stop"
  "$FB" poll "$CONN" 20 "$DIR/sparse.stop" "SELECT f.dirty_windows, (SELECT coalesce(sum(n), 0) FROM sp_sink), coalesce(a.state, ''), i.runs
     FROM flownode.flows f JOIN flownode.flow_info i USING (flow_id) LEFT JOIN pg_stat_activity a ON a.pid = f.worker_pid WHERE f.flow_name = 'sp_flow'" >"$RAW/sparse_watch.tsv" &
  pp=$!
  sleep 0.3
  { echo "@watchedflush_0 +value SELECT flownode.flush_flow('sp_flow');"; sparse_check 0; } | "$FB" sql "$CONN" | fb_rec sparse
  sleep 0.1
  touch "$DIR/sparse.stop"
  wait "$pp"
  sql -c "SET client_min_messages = warning; SELECT flownode.drop_flow('sp_flow'); DROP TABLE sp_src, sp_sink, sp_plain" >/dev/null
  section_end sparse
}

# ---- the large tables ----------------------------------
# sc_N: N rows (ts, v), one every 0.6 s from 2024-01-01 (100 per 1-minute window),
# UNLOGGED (no WAL while they are generated: what is measured reads them, and reading
# does not depend on it), with the flow sc_N_f (date_bin 1 minute -> count, sum, max;
# eval_interval 1 hour: only flush_flow refreshes) created before the rows, so the
# rows are a backfill waiting for it. One INSERT each (generate_series in the select
# list: no tuplestore), the tables in parallel, the time index built after,
# VACUUM ANALYZE. callgrind.sh (instruction counts, unaffected by the load) runs
# beside the generation when it is part of the run; what follows is timed, so it
# waits for it.
SCQ="SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, count(*) AS n, sum(v) AS sum_v, max(v) AS max_v FROM %s GROUP BY 1"
# shellcheck disable=SC2059
scq() { printf "$SCQ" "$1"; }
SC_T0="2024-01-01 00:00:00+00"
scale_sizes() {
  local s=()
  if has_section refresh; then s+=("$SC_SMALL" "$SC_MID" "$SC_BIG"); fi
  if has_section jit || has_section scattered || has_section interrupt; then s+=("$SC_MID"); fi
  if has_section backfill; then s+=("$SC_BIG"); fi
  printf '%s\n' "${s[@]}" | sort -nu
}
callgrind_bg_start() {
  [[ -z $CG_PID ]] && has_section callgrind || return 0
  log "   callgrind.sh starts in the background (its own cluster; instruction counts do not depend on the load)"
  FN_BENCH_NO_BUILD=1 bash "$BENCH/callgrind.sh" >"$RAW/callgrind.log" 2>&1 &
  CG_PID=$!
}
callgrind_wait() {
  [[ -n $CG_PID ]] || return 0
  log "   waiting for callgrind.sh"
  local t0
  t0=$(date +%s)
  wait "$CG_PID" || { tail -20 "$RAW/callgrind.log" >&2; fn_die "callgrind.sh failed"; }
  meta callgrind_wait_s "$(($(date +%s) - t0))"
  CG_PID=finished
}
ensure_scale() {
  local n t0 missing=() pids=()
  [[ -z ${SCALE_READY:-} ]] || return 0
  for n in $(scale_sizes); do
    [[ $(sql -c "SELECT to_regclass('sc_$n') IS NULL") == t ]] && missing+=("$n")
  done
  if ((${#missing[@]})); then
    log "   generating ${missing[*]} rows (untimed)"
    callgrind_bg_start
    for n in "${missing[@]}"; do
      sql >/dev/null <<EOF
SET client_min_messages = warning;
DROP TABLE IF EXISTS sc_${n}_s;
CREATE UNLOGGED TABLE sc_$n (ts timestamptz NOT NULL, v int4 NOT NULL) WITH (autovacuum_enabled = off);
SELECT flownode.create_flow('sc_${n}_f', 'sc_${n}_s', \$q\$$(scq "sc_$n")\$q\$, eval_interval => '1 hour');
EOF
      wait_active "sc_$n" 1
    done
    t0=$(date +%s)
    for n in "${missing[@]}"; do
      sql -c "INSERT INTO sc_$n SELECT generate_series(timestamptz '$SC_T0', timestamptz '$SC_T0' + ($n - 1) * interval '600 milliseconds', interval '600 milliseconds'), 1" >/dev/null &
      pids+=($!)
    done
    for n in "${pids[@]}"; do wait "$n" || fn_die "generating the large tables failed"; done
    meta "scale_generate_s" "$(($(date +%s) - t0))"
    t0=$(date +%s)
    for n in "${missing[@]}"; do sql -c "CREATE INDEX ON sc_$n (ts)" -c "VACUUM ANALYZE sc_$n" >/dev/null; done
    sql -c "CHECKPOINT" >/dev/null
    meta "scale_index_vacuum_s" "$(($(date +%s) - t0))"
  fi
  callgrind_wait
  SCALE_READY=1
}
# settle N: the table's flow refreshed (untimed; the first time, its backfill)
settle() { sql -c "SELECT flownode.flush_flow('sc_${1}_f')" >/dev/null; }
# scale_index N on|off: the time index of sc_N
scale_index() {
  if [[ $2 == on ]]; then
    [[ $(sql -c "SELECT count(*) FROM pg_index WHERE indrelid = 'sc_$1'::regclass") -gt 0 ]] || sql -c "CREATE INDEX ON sc_$1 (ts)" -c "ANALYZE sc_$1" >/dev/null
  else
    echo "SELECT format('DROP INDEX %s', indexrelid::regclass) FROM pg_index WHERE indrelid = 'sc_$1'::regclass \gexec" | sql >/dev/null
  fi
}
# wts N K: the start of the K-th window of sc_N
wts() { date -u -d "2024-01-01 00:00:00 UTC + $2 minutes" '+%Y-%m-%d %H:%M:%S+00'; }

# ---- a backfill of SC_BIG rows ------------------------------------
# The flow of sc_SC_BIG has every window of its rows dirty (created before them).
# Timed: its catch-up (flush_flow: refreshes of at most flownode.max_rows_per_refresh
# source rows) against one INSERT ... SELECT ... GROUP BY of the same rows into an
# empty table with the same key, run before and after it (BF_PLAIN runs): one
# backfill per run, so the pairs share it. Then the sink is compared with that table.
bench_backfill() {
  local n=$SC_BIG wpid k
  section_start "backfill: a backfill of $SC_BIG rows, flush_flow vs INSERT ... SELECT ... GROUP BY"
  ensure_scale
  if [[ $(flow_value "sc_${n}_f" dirty_windows) == 0 ]]; then
    log "   skipped: sc_$n was refreshed already"
    section_end backfill
    return 0
  fi
  sql -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS bf_plain" -c "CREATE TABLE bf_plain (minute timestamptz PRIMARY KEY, n bigint, sum_v bigint, max_v int4)" >/dev/null
  wpid=$(flow_value "sc_${n}_f" worker_pid)
  {
    echo "=dirty_0 SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'sc_${n}_f'"
    echo "=runs0_0 SELECT runs FROM flownode.flow_info WHERE flow_name = 'sc_${n}_f'"
    for ((k = 1; k <= BF_PLAIN; k++)); do
      echo "TRUNCATE bf_plain;"
      echo "CHECKPOINT;"
      echo "@plain_$k +self INSERT INTO bf_plain $(scq "sc_$n");"
      if ((k == 1)); then
        echo "CHECKPOINT;"
        echo "@flush_1 +pid=$wpid SELECT flownode.flush_flow('sc_${n}_f');"
        echo "=runs1_0 SELECT runs FROM flownode.flow_info WHERE flow_name = 'sc_${n}_f'"
      fi
    done
    echo "=check_0 SELECT count(*) FROM ((SELECT * FROM sc_${n}_s EXCEPT SELECT * FROM bf_plain) UNION ALL (SELECT * FROM bf_plain EXCEPT SELECT * FROM sc_${n}_s)) d"
  } | "$FB" sql "$CONN" | fb_rec backfill
  rec backfill rows - - 0 "$n"
  sql -c "DROP TABLE bf_plain" >/dev/null
  section_end backfill
}

# ---- one-window refresh at three sizes ------------------------------
# Each round commits one late row into a window of each table and times its
# flush_flow (the call returns once the worker has refreshed and committed the
# window), and on the small table the hand-written floor (the single-window upsert,
# committing durably and asynchronously, on a copy of the sink; its window then
# flushed untimed). The order rotates every round. REFRESH MATERIALIZED VIEW of the
# small table's query in the first R_MV_ROUNDS rounds. Flat: the flush at the middle
# and the large table against the small one, per round.
bench_refresh() {
  local n sizes i items it k diff
  sizes=$(printf '%s\n' "$SC_SMALL" "$SC_MID" "$SC_BIG" | sort -nu | tr '\n' ' ')
  section_start "refresh: one-window refresh at $sizes rows"
  ensure_scale
  for n in $sizes; do
    scale_index "$n" on
    settle "$n"
  done
  sql >/dev/null <<EOF
SET client_min_messages = warning;
DROP TABLE IF EXISTS r_floor;
DROP MATERIALIZED VIEW IF EXISTS r_mv;
CREATE TABLE r_floor AS SELECT * FROM sc_${SC_SMALL}_s;
ALTER TABLE r_floor ADD PRIMARY KEY (minute);
CREATE MATERIALIZED VIEW r_mv AS $(scq "sc_$SC_SMALL");
VACUUM ANALYZE r_floor;
$(for n in $sizes; do echo "VACUUM ANALYZE sc_${n}_s;"; done)
CHECKPOINT;
EOF
  late_row() { echo "INSERT INTO sc_$1 VALUES (timestamptz '$(wts "$1" "$2")' + interval '30 seconds', 2);"; }
  floor_stmt() { echo "INSERT INTO r_floor AS s (minute, n, sum_v, max_v) SELECT date_bin('1 minute', ts, timestamptz '2000-01-01'), count(*), sum(v), max(v) FROM sc_$SC_SMALL WHERE ts >= '$(wts "$SC_SMALL" "$1")' AND ts < '$(wts "$SC_SMALL" $(($1 + 1)))' GROUP BY 1 ON CONFLICT (minute) DO UPDATE SET n = EXCLUDED.n, sum_v = EXCLUDED.sum_v, max_v = EXCLUDED.max_v;"; }
  items="floor floorasync"
  for n in $sizes; do items="$items f$n"; done
  {
    # warm-up (untimed): the first refresh of each worker and of this session
    for n in $sizes; do
      late_row "$n" 10
      echo "SELECT flownode.flush_flow('sc_${n}_f');"
    done
    for ((i = 1; i <= R_ROUNDS; i++)); do
      k=$((100 + 97 * i))
      # shellcheck disable=SC2086
      for it in $(rotate "$i" $items); do
        case $it in
          floor)
            late_row "$SC_SMALL" $((k + 41))
            echo "@floor_$i $(floor_stmt $((k + 41)))"
            echo "SELECT flownode.flush_flow('sc_${SC_SMALL}_f');"
            ;;
          floorasync)
            late_row "$SC_SMALL" $((k + 67))
            echo "SET synchronous_commit = off;"
            echo "@floorasync_$i $(floor_stmt $((k + 67)))"
            echo "RESET synchronous_commit;"
            echo "SELECT flownode.flush_flow('sc_${SC_SMALL}_f');"
            ;;
          f*)
            late_row "${it#f}" "$k"
            echo "@flush${it#f}_$i SELECT flownode.flush_flow('sc_${it#f}_f');"
            ;;
        esac
      done
      if ((i <= R_MV_ROUNDS)); then echo "@mv_$i REFRESH MATERIALIZED VIEW r_mv;"; fi
    done
  } | "$FB" sql "$CONN" | fb_rec refresh
  # the small sink must equal the materialized view (refreshed last, after every late row)
  sql -c "REFRESH MATERIALIZED VIEW r_mv" >/dev/null
  diff=$(sql -c "SELECT count(*) FROM ((SELECT * FROM sc_${SC_SMALL}_s EXCEPT SELECT * FROM r_mv) UNION ALL (SELECT * FROM r_mv EXCEPT SELECT * FROM sc_${SC_SMALL}_s)) d")
  rec refresh check - - 0 "$diff"
  sql -c "SET client_min_messages = warning; DROP MATERIALIZED VIEW r_mv; DROP TABLE r_floor" >/dev/null
  section_end refresh
}

# ---- JIT -------------------------------------------------------------
# JIT_WINDOWS late rows in separate windows of sc_SC_MID (one INSERT), then a timed
# flush_flow, with jit = on and jit = off for the whole server (ALTER SYSTEM and a
# reload; the flush wakes the worker, which reads the configuration first),
# alternating. flownode's refresh statements run with jit off whatever the server
# says; this checks that nothing else in a refresh compiles.
bench_jit() {
  local n=$SC_MID r mode step off j0
  section_start "jit: refresh of $JIT_WINDOWS separate windows of $n rows, jit on vs off, $JIT_ROUNDS pairs"
  ensure_scale
  scale_index "$n" on
  settle "$n"
  step=$((n / 100 / JIT_WINDOWS))
  rec jit available - - 0 "$([[ $(sql -c "SET jit = on" -c "SELECT pg_jit_available()") == t ]] && echo 1 || echo 0)"
  j0=0
  for ((r = 1; r <= JIT_ROUNDS; r++)); do
    for mode in $(rotate "$r" on off); do
      sql -c "ALTER SYSTEM SET jit = $mode" -c "SELECT pg_reload_conf()" >/dev/null
      sleep 0.5
      off=$(((j0 * 7 + 3) % step))
      j0=$((j0 + 1))
      {
        echo "INSERT INTO sc_$n SELECT timestamptz '$SC_T0' + ((j * $step + $off) * 60 + 30) * interval '1 second', 4 FROM generate_series(0, $JIT_WINDOWS - 1) j;"
        echo "=runs0${mode}_$r SELECT runs FROM flownode.flow_info WHERE flow_name = 'sc_${n}_f'"
        echo "@jit${mode}_$r +value SELECT flownode.flush_flow('sc_${n}_f');"
        echo "=runs1${mode}_$r SELECT runs FROM flownode.flow_info WHERE flow_name = 'sc_${n}_f'"
      } | "$FB" sql "$CONN" | fb_rec jit
    done
  done
  sql -c "ALTER SYSTEM RESET jit" -c "SELECT pg_reload_conf()" >/dev/null
  section_end jit
}

# ---- scattered late rows ---------------------------------------------
# Each batch: SC_LATE late rows at random times (seeded) over the span of sc_SC_MID,
# one INSERT. Timed, alternating: flush_flow of one batch (it returns the windows
# refreshed) and the floor, a hand-written refresh of exactly the windows of another
# batch on a copy of the sink (one statement: each window read through the time
# index, then one upsert); the floor's batch is then flushed untimed. Then the same
# without the time index: the floor reads the table once (a hash semi-join on the
# windows), and so must each refresh.
sc_batch() { # sc_batch N B: batch B of late rows into sc_N
  echo "SELECT setseed(0.$((1000 + $2)));"
  echo "INSERT INTO sc_late SELECT $2, timestamptz '$SC_T0' + (random() * ($1 * 0.6 - 60)) * interval '1 second', 3 FROM generate_series(1, $SC_LATE);"
  echo "INSERT INTO sc_$1 SELECT ts, v FROM sc_late WHERE batch = $2;"
}
sc_windows() { echo "SELECT DISTINCT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w FROM sc_late WHERE batch $1"; }
sc_upsert() { echo "ON CONFLICT (minute) DO UPDATE SET n = EXCLUDED.n, sum_v = EXCLUDED.sum_v, max_v = EXCLUDED.max_v;"; }
sc_floor_idx() { # N B: through the index, window by window
  echo "INSERT INTO sc_floor AS s (minute, n, sum_v, max_v) SELECT date_bin('1 minute', t.ts, timestamptz '2000-01-01'), count(*), sum(t.v), max(t.v) FROM ($(sc_windows "= $2")) l, LATERAL (SELECT ts, v FROM sc_$1 WHERE ts >= l.w AND ts < l.w + interval '1 minute') t GROUP BY 1 $(sc_upsert)"
}
sc_floor_scan() { # N B: one scan
  echo "INSERT INTO sc_floor AS s (minute, n, sum_v, max_v) SELECT date_bin('1 minute', ts, timestamptz '2000-01-01'), count(*), sum(v), max(v) FROM sc_$1 WHERE date_bin('1 minute', ts, timestamptz '2000-01-01') IN ($(sc_windows "= $2")) GROUP BY 1 $(sc_upsert)"
}
# sc_check N: the sink against the query, in every window a late row touched
sc_check() {
  local q w
  w="$(sc_windows "IS NOT NULL")"
  q="SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, count(*) AS n, sum(v) AS sum_v, max(v) AS max_v FROM sc_$1 WHERE date_bin('1 minute', ts, timestamptz '2000-01-01') IN ($w) GROUP BY 1"
  echo "SELECT count(*) FROM ((SELECT * FROM sc_$1_s WHERE minute IN ($w) EXCEPT $q) UNION ALL ($q EXCEPT SELECT * FROM sc_$1_s WHERE minute IN ($w))) d"
}
sc_late_table() {
  sql -c "SET client_min_messages = warning" -c "CREATE TABLE IF NOT EXISTS sc_late (batch int NOT NULL, ts timestamptz NOT NULL, v int4 NOT NULL)" >/dev/null
  SC_BATCH=$(sql -c "SELECT coalesce(max(batch), 0) FROM sc_late")
}
# sc_pair N INDEX ROUND: one flush and one floor, alternating
sc_pair() {
  local n=$1 idx=$2 r=$3 a b fl
  a=$((SC_BATCH + 1))
  b=$((SC_BATCH + 2))
  SC_BATCH=$b
  # the floor runs with jit off, as flownode's refresh statements do (its estimates for
  # the per-window ranges are defaults, and JIT chosen on them compiles for longer than
  # the statement runs)
  fl="@floor${idx}_$r $(if [[ $idx == idx ]]; then sc_floor_idx "$n" "$b"; else sc_floor_scan "$n" "$b"; fi)"
  {
    flush() {
      sc_batch "$n" "$a"
      echo "=touched${idx}_$r SELECT count(*) FROM ($(sc_windows "= $a")) w"
      echo "=runs0${idx}_$r SELECT runs FROM flownode.flow_info WHERE flow_name = 'sc_${n}_f'"
      echo "@flush${idx}_$r +value SELECT flownode.flush_flow('sc_${n}_f');"
      echo "=runs1${idx}_$r SELECT runs FROM flownode.flow_info WHERE flow_name = 'sc_${n}_f'"
      echo "CHECKPOINT;"
    }
    floor() {
      sc_batch "$n" "$b"
      echo "SET jit = off;"
      echo "$fl"
      echo "RESET jit;"
      echo "SELECT flownode.flush_flow('sc_${n}_f');"
      echo "CHECKPOINT;"
    }
    if ((r % 2)); then flush; floor; else floor; flush; fi
  } | "$FB" sql "$CONN" | fb_rec scattered
}
bench_scattered() {
  local n=$SC_MID r
  section_start "scattered: $SC_LATE late rows into $n rows, $SC_ROUNDS pairs with the time index, $SC_NOIDX_ROUNDS without"
  ensure_scale
  scale_index "$n" on
  settle "$n"
  sc_late_table
  sql >/dev/null <<EOF
SET client_min_messages = warning;
DROP TABLE IF EXISTS sc_floor;
CREATE TABLE sc_floor AS SELECT * FROM sc_${n}_s;
ALTER TABLE sc_floor ADD PRIMARY KEY (minute);
VACUUM ANALYZE sc_floor;
CHECKPOINT;
EOF
  for ((r = 1; r <= SC_ROUNDS; r++)); do sc_pair "$n" idx "$r"; done
  scale_index "$n" off
  sql -c "CHECKPOINT" >/dev/null
  for ((r = 1; r <= SC_NOIDX_ROUNDS; r++)); do sc_pair "$n" scan "$r"; done
  rec scattered check - - 0 "$(sql -c "$(sc_check "$n")")"
  sql -c "DROP TABLE sc_floor" >/dev/null
  section_end scattered
}

# ---- interrupts in the middle of the largest refresh ------------------
# The largest refresh of the run: SC_LATE late rows scattered over sc_SC_MID without
# its time index: refresh statements that each read the whole table. One such
# flush_flow, uninterrupted, gives its duration and how many refreshes it ran; then the
# worker is terminated (pg_terminate_backend) INT_ROUNDS times half-way through one of
# those statements, and the server is stopped once (pg_ctl stop -m fast) the same way. Timed: from the signal
# until the worker process is gone. After each, the sink must be exact.
bench_interrupt() {
  local n=$SC_MID r ms delay line bin
  section_start "interrupt: pg_terminate_backend and a fast shutdown in the middle of a refresh of $n rows"
  ensure_scale
  settle "$n"
  scale_index "$n" off
  sc_late_table
  SC_BATCH=$((SC_BATCH + 1))
  local runs0 runs1
  runs0=$(flow_value "sc_${n}_f" runs)
  ms=$({
    sc_batch "$n" "$SC_BATCH"
    echo "@full_0 SELECT flownode.flush_flow('sc_${n}_f');"
  } | "$FB" sql "$CONN" | cut -f2)
  runs1=$(flow_value "sc_${n}_f" runs)
  rec interrupt full - - 0 "$ms" "$((runs1 - runs0))"
  # half-way through one refresh statement (a flush can be several)
  delay=$(awk -v m="$ms" -v k="$((runs1 - runs0))" 'BEGIN {if (k < 1) k = 1; printf "%.0f", m / k / 2}')
  # interrupt_once MODE [COMMAND]: a new batch of late rows, then fnbench interrupt; when
  # the flush ends before a refresh statement lasted the delay (fnbench exits 3, nothing
  # sent), again with half the delay
  interrupt_once() {
    local try rc
    for ((try = 1; try <= 4; try++)); do
      SC_BATCH=$((SC_BATCH + 1))
      sc_batch "$n" "$SC_BATCH" | "$FB" sql "$CONN" >/dev/null
      rc=0
      line=$("$FB" interrupt "$CONN" "sc_${n}_f" "$delay" "$@") || rc=$?
      ((rc == 0)) && return 0
      ((rc == 3)) || fn_die "fnbench interrupt failed ($rc)"
      delay=$((delay / 2))
      log "   the flush ended first: again with a delay of $delay ms"
    done
    fn_die "no refresh statement lasted $delay ms"
  }
  for ((r = 1; r <= INT_ROUNDS; r++)); do
    interrupt_once terminate
    # shellcheck disable=SC2086
    rec interrupt terminate - - "$r" $line
    wait_active "sc_$n" 1
  done
  rec interrupt check_terminate - - 0 "$(sql -c "$(sc_check "$n")")"
  bin="$(fn_pg_bindir)"
  interrupt_once command "cd / && runuser -u postgres -- '$bin/pg_ctl' -D '$DIR/data' -m fast -w -t 120 stop >/dev/null"
  # shellcheck disable=SC2086
  rec interrupt stop - - 1 $line
  start_cluster
  wait_active "sc_$n" 1
  sql -c "SELECT flownode.flush_flow('sc_${n}_f')" >/dev/null
  rec interrupt check_stop - - 0 "$(sql -c "$(sc_check "$n")")"
  section_end interrupt
}

# ---- freshness under load at three rates ----------------------------
# 4 writers, 100-row transactions, F_SCHEDULE (rows/s:seconds); in the full run each
# rate covers one whole 1-minute window (a warm-up at the first rate until the
# minute starts). The flow: date_bin 1 minute, writer -> max(seq), count;
# eval_interval 1 s. It folds: each refresh of the open window reads the rows
# written since the last one (BENCH_FOLD=off measures the recompute instead).
bench_freshness() {
  local wpid summary
  section_start "freshness: $F_SCHEDULE (rows/s:seconds), 4 writers, eval_interval 1 s"
  sql >/dev/null <<'EOF'
SET client_min_messages = warning;
CREATE TABLE fr_src (ts timestamptz NOT NULL, writer int NOT NULL, seq bigint NOT NULL, v float8 NOT NULL)
  WITH (autovacuum_enabled = off);
CREATE INDEX ON fr_src (ts);
SELECT flownode.create_flow('fr_flow', 'fr_sink',
  $q$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, writer, max(seq) AS max_seq, count(*) AS n
       FROM fr_src GROUP BY 1, 2$q$, eval_interval => '1 second');
CHECKPOINT;
EOF
  wait_active fr_src 1
  summary=$("$FB" freshness "$CONN" fr_src fr_sink fr_flow "$F_SCHEDULE" 4 100 "$RAW/freshness.csv" "$F_ALIGN")
  meta freshness_summary "$summary"
  meta freshness_runs "$(flow_value fr_flow runs)"
  meta freshness_folds "$(flow_value fr_flow folded_refreshes)"
  sql -c "SET client_min_messages = warning; DROP TABLE fr_src; DROP TABLE fr_sink" >/dev/null
  section_end freshness
}

# ---- catchup: backlog catch-up -----------------------------------------------
# A year (2024) of 1-minute data; flow over date_bin('1 minute') (527,040 windows).
# (a) create_flow over it (it fills the sink from the rows already there) vs one
#     INSERT ... SELECT ... GROUP BY into an empty table with the same key.
# (b) backfill: a month of late rows (before the year) into the existing flow; the
#     flow's catch-up (flush_flow: its worker refreshes every dirty window, each
#     refresh at most flownode.max_rows_per_refresh source rows) vs one INSERT ...
#     SELECT ... GROUP BY of the same rows.
bench_catchup() {
  local yrows yq r v lo hi wpid flush plain name ms rss hwm diff
  yrows=$((Y_DAYS * 1440 * Y_PER_MIN))
  section_start "catchup: $Y_DAYS days of 1-minute data ($yrows rows)"
  yq="SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, count(*) AS n, sum(v) AS sum_v, min(v) AS min_v, max(v) AS max_v FROM y_src"
  sql >/dev/null <<EOF
SET client_min_messages = warning;
CREATE TABLE y_src (ts timestamptz NOT NULL, host text NOT NULL, v float8 NOT NULL) WITH (autovacuum_enabled = off);
INSERT INTO y_src SELECT timestamptz '2024-01-01 00:00:00+00' + (i / $Y_PER_MIN) * interval '1 minute'
       + (i % $Y_PER_MIN) * interval '1 second', 'host-' || (i % $Y_PER_MIN), (i % 400) * 0.25
  FROM generate_series(0, $yrows - 1) i;
CREATE INDEX ON y_src (ts);
VACUUM ANALYZE y_src;
CREATE TABLE y_plain (minute timestamptz PRIMARY KEY, n bigint, sum_v float8, min_v float8, max_v float8);
CREATE TABLE y_plain_month (minute timestamptz PRIMARY KEY, n bigint, sum_v float8, min_v float8, max_v float8);
CHECKPOINT;
EOF
  for ((r = 1; r <= Y_PAIRS; r++)); do
    for v in $(rotate "$r" plain create); do
      if [[ $v == plain ]]; then
        printf '%s\n' "TRUNCATE y_plain;" "CHECKPOINT;" "@plain +self INSERT INTO y_plain $yq GROUP BY 1;"
      else
        printf '%s\n' "SET client_min_messages = warning;" "SELECT flownode.drop_flow('y_flow', if_exists => true);" \
          "DROP TABLE IF EXISTS y_sink;" "CHECKPOINT;" \
          "@create +self SELECT flownode.create_flow('y_flow', 'y_sink', \$q\$$yq GROUP BY 1\$q\$, eval_interval => '1 hour');"
      fi | "$FB" sql "$CONN" | while IFS=$'\t' read -r name ms rss hwm; do
        rec catchup "$name" - - "$r" "$ms" "$rss" "$hwm"
      done
    done
  done
  wait_active y_src 1
  section_end catchup_create

  section_start "catchup: backfill of a month of late rows, $B_PAIRS rounds"
  month_lo() { date -u -d "2024-01-01 00:00:00 UTC - $1 months" '+%Y-%m-%d %H:%M:%S+00'; }
  for ((r = 1; r <= B_PAIRS; r++)); do
    lo=$(month_lo "$r")
    hi=$(month_lo $((r - 1)))
    wpid=$(sql -c "SELECT worker_pid FROM flownode.flows WHERE flow_name = 'y_flow'")
    {
      echo "TRUNCATE y_plain_month;"
      echo "@backfill_insert INSERT INTO y_src SELECT g + (i % $Y_PER_MIN) * interval '1 second', 'host-' || (i % $Y_PER_MIN), (i % 400) * 0.25 FROM generate_series(timestamptz '$lo', timestamptz '$hi' - interval '1 minute', interval '1 minute') g, generate_series(0, $Y_PER_MIN - 1) i;"
      echo "VACUUM ANALYZE y_src;"
      echo "CHECKPOINT;"
      flush="@backfill_flow +pid=$wpid SELECT flownode.flush_flow('y_flow');"
      plain="@backfill_plain +self INSERT INTO y_plain_month $yq WHERE ts >= '$lo' AND ts < '$hi' GROUP BY 1;"
      if ((r % 2)); then
        printf '%s\nCHECKPOINT;\n%s\n' "$flush" "$plain"
      else
        printf '%s\nCHECKPOINT;\n%s\n' "$plain" "$flush"
      fi
      echo "=backfill_rows SELECT count(*) FROM y_src WHERE ts >= '$lo' AND ts < '$hi'"
    } | "$FB" sql "$CONN" | while IFS=$'\t' read -r name ms rss hwm; do
      rec catchup "$name" - - "$r" "$ms" "${rss:-}" "${hwm:-}"
    done
  done
  diff=$(sql -c "SELECT count(*) FROM ((SELECT * FROM y_sink EXCEPT $yq GROUP BY 1) UNION ALL ($yq GROUP BY 1 EXCEPT SELECT * FROM y_sink)) d")
  rec catchup check - - 0 "$diff"
  sql -c "SET client_min_messages = warning; DROP TABLE y_src; DROP TABLE y_sink, y_plain, y_plain_month" >/dev/null
  section_end catchup_backfill
}

# ---- idle, shmem, busy: many flows --------------------------------------------
# idle_phase CADENCE EVAL SECONDS: IDLE_FLOWS tables with one row and one flow each;
# once every worker runs, the CPU of all flow workers and the launcher over SECONDS.
idle_phase() {
  local cadence=$1 eval=$2 secs=$3 k i cpu0 cpu1 npids runs
  {
    echo "SET client_min_messages = warning;"
    for ((k = 1; k <= IDLE_FLOWS; k++)); do
      echo "SELECT flownode.drop_flow('idle_f$k', if_exists => true);"
      echo "DROP TABLE IF EXISTS idle_s$k;"
      printf "SELECT flownode.create_flow('idle_f%d', 'idle_s%d', \$q\$%s\$q\$, eval_interval => %s);\n" \
        "$k" "$k" "$(flow_query 1 "idle_$k")" "$eval"
    done
  } | sql >/dev/null
  for ((i = 0; i < 300; i++)); do
    [[ $(sql -c "SELECT count(*) FROM flownode.flows WHERE flow_name LIKE 'idle_f%' AND state = 'active' AND worker_pid IS NOT NULL") -ge $IDLE_FLOWS ]] && break
    sleep 0.1
  done
  sleep 2 # let the workers' start-up work pass
  sql -c "SELECT pid FROM pg_stat_activity WHERE backend_type IN ('flownode flow', 'flownode launcher')" >"$DIR/idle.pids"
  read -r cpu0 npids < <("$FB" cpu "$DIR/idle.pids")
  runs=$(sql -c "SELECT sum(runs) FROM flownode.flow_info WHERE flow_name LIKE 'idle_f%'")
  sleep "$secs"
  read -r cpu1 _ < <("$FB" cpu "$DIR/idle.pids")
  runs=$(($(sql -c "SELECT sum(runs) FROM flownode.flow_info WHERE flow_name LIKE 'idle_f%'") - runs))
  rec idle "$cadence" - - 0 "$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN {printf "%.4f", b - a}')" "$npids" "$secs" "$runs"
}

bench_idle() {
  local k
  section_start "idle: $IDLE_FLOWS idle flows, ${IDLE_SECONDS}s with the default cadence, ${IDLE_FAST_SECONDS}s with eval_interval 1 s"
  {
    echo "SET client_min_messages = warning;"
    for ((k = 1; k <= IDLE_FLOWS; k++)); do
      echo "DROP TABLE IF EXISTS idle_$k;"
      echo "CREATE TABLE idle_$k (ts timestamptz NOT NULL, host text NOT NULL, v float8 NOT NULL);"
      echo "INSERT INTO idle_$k VALUES (now(), 'host-1', 1);"
    done
  } | sql >/dev/null
  idle_phase default NULL "$IDLE_SECONDS"
  idle_phase 1s "'1 second'" "$IDLE_FAST_SECONDS"
  {
    echo "SET client_min_messages = warning;"
    for ((k = 1; k <= IDLE_FLOWS; k++)); do echo "DROP TABLE idle_$k; DROP TABLE idle_s$k;"; done
  } | sql >/dev/null
  section_end idle
}

# The shared memory a server with flownode.max_flows = 10,000 takes at
# start, in a second throwaway cluster (no flow: it is all fixed at start). The
# slots, the pool the dirty sets grow into, and the server's whole shared memory,
# against what the slots took when each held both sets at dirty_ranges_per_flow.
bench_shmem() {
  local d port q slots pool total ranges
  section_start "shmem: shared memory at flownode.max_flows = 10,000"
  d="$(fn_workdir)"
  port="$(fn_free_port)"
  fn_start_cluster "$d" "$port" "flownode.max_flows = 10000"
  q="SELECT (SELECT size FROM pg_shmem_allocations WHERE name = 'flownode slots'),
    (SELECT coalesce(sum(size), 0) FROM pg_shmem_allocations WHERE name = 'flownode dirty sets'),
    (SELECT setting::bigint * 1048576 FROM pg_settings WHERE name = 'shared_memory_size'),
    current_setting('flownode.dirty_ranges_per_flow')"
  IFS='|' read -r slots pool total ranges < <(fn_psql "$d" "$port" -qtA -c "$q")
  fn_stop_cluster_quiet "$d"
  rm -rf "$d"
  rec shmem 10000 - - 0 "$slots" "$pool" "$total" "$((10000 * ranges * 32))"
  section_end shmem
}

# 20 flows (date_bin of 1..20 minutes, eval_interval 1 s) on one table against the
# same table without flows: multi-row INSERT in time order; the workers' CPU during
# the load, then the time until every sink is exact (flush_flow of each in turn).
bench_busy() {
  local r v c0 c1 secs cpu catch k
  section_start "busy: $BUSY_FLOWS busy flows on one table (eval_interval 1 s), multi-row INSERT of $BUSY_ROWS rows"
  for ((r = 1; r <= BUSY_PAIRS; r++)); do
    for v in $(rotate "$r" base f20); do
      if [[ $v == base ]]; then make_source busy_base 0; else make_source busy_f20 "$BUSY_FLOWS" 6 "'1 second'"; fi
      sql -c "CHECKPOINT" >/dev/null
      sql -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'flownode flow'" >"$DIR/busy.pids"
      read -r c0 _ < <("$FB" cpu "$DIR/busy.pids")
      read -r secs cpu < <("$FB" multirow "$CONN" "busy_$v" "$BUSY_ROWS" 1000 inorder "$r")
      read -r c1 _ < <("$FB" cpu "$DIR/busy.pids")
      catch=0
      if [[ $v == f20 ]]; then
        catch=$(for ((k = 1; k <= BUSY_FLOWS; k++)); do echo "@f$k SELECT flownode.flush_flow('busy_f20_f$k');"; done \
          | "$FB" sql "$CONN" | awk -F'\t' '{s += $2} END {printf "%.1f", s}')
      fi
      rec busy "$v" - - "$r" "$secs" "$cpu" "$(awk -v a="$c0" -v b="$c1" 'BEGIN {printf "%.3f", b - a}')" "$catch"
      drop_source "busy_$v"
    done
  done
  section_end busy
}

# ---- instruction counts (callgrind) ------------------------------------------
# On its own throwaway cluster (a single-user backend under valgrind); this
# cluster is stopped first so the two do not compete.
bench_callgrind() {
  section_start "callgrind: instruction counts of the write path (own cluster)"
  if [[ $CG_PID == finished ]]; then
    log "   ran beside the generation of the large tables"
  elif [[ -n $CG_PID ]]; then
    callgrind_wait
  else
    fn_stop_cluster_quiet "$DIR"
    FN_BENCH_NO_BUILD=1 bash "$BENCH/callgrind.sh" >"$RAW/callgrind.log" 2>&1 \
      || { tail -20 "$RAW/callgrind.log" >&2; fn_die "callgrind.sh failed"; }
  fi
  section_end callgrind
}

# ---- joins: one dimension-row update against a large fact table --------------
# A fact table of 20M rows (2M with --quick), a row every 0.1 s from 1,000 hosts,
# indexed on ts and on host, joined to a dimension of 1,001 hosts; the flow groups by
# minute and the host's region. Per round: the commit of an UPDATE of one host's
# region (its trigger collects the value; the commit looks up the windows of the
# host's fact rows through the index on host) timed against the same UPDATE of a copy
# of the dimension no flow joins, then flush_flow (the refresh of those windows);
# for host-7, whose rows lie all over the table, and for host-1000, whose rows lie in
# the last hour. REFRESH MATERIALIZED VIEW of the query is the full recompute. The
# sink is compared with the view at the end.
bench_dimension() {
  local rows rounds q r h v out
  if [[ $MODE == full ]]; then rows=20000000 rounds=2; else rows=2000000 rounds=1; fi
  section_start "dimension: one dimension-row update against a fact table of $rows rows"
  q="SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, dm_hosts.region, count(*) AS n, sum(v) AS sum_v FROM dm_cpu JOIN dm_hosts USING (host) GROUP BY 1, 2"
  sql >/dev/null <<EOF
SET client_min_messages = warning;
CREATE TABLE dm_hosts (host text PRIMARY KEY, region text NOT NULL);
INSERT INTO dm_hosts SELECT 'host-' || i, 'region-' || (i % 10) FROM generate_series(0, 1000) i;
CREATE TABLE dm_hosts_plain (host text PRIMARY KEY, region text NOT NULL);
INSERT INTO dm_hosts_plain SELECT * FROM dm_hosts;
CREATE TABLE dm_cpu (ts timestamptz NOT NULL, host text NOT NULL, v float8 NOT NULL) WITH (autovacuum_enabled = off);
INSERT INTO dm_cpu SELECT timestamptz '2024-01-01 00:00:00+00' + i * interval '100 milliseconds',
       'host-' || (i % 1000), (i % 400) * 0.25 FROM generate_series(0, $rows - 1) i;
INSERT INTO dm_cpu SELECT timestamptz '2024-01-01 00:00:00+00' + ($rows - 1) * interval '100 milliseconds'
       - i * interval '10 seconds', 'host-1000', 1 FROM generate_series(0, 359) i;
CREATE INDEX ON dm_cpu (ts);
CREATE INDEX ON dm_cpu (host);
VACUUM ANALYZE dm_cpu;
VACUUM ANALYZE dm_hosts;
VACUUM ANALYZE dm_hosts_plain;
CHECKPOINT;
EOF
  out=$(echo "@create_0 SELECT flownode.create_flow('dm_flow', 'dm_sink', \$q\$$q\$q\$, eval_interval => '1 hour');" \
    | "$FB" sql "$CONN")
  wait_active dm_cpu 1
  sql -c "VACUUM ANALYZE dm_sink" >/dev/null
  {
    # warm-up (untimed): the session's first dimension write and flush
    echo "UPDATE dm_hosts SET region = 'warm' WHERE host = 'host-1000';"
    echo "UPDATE dm_hosts_plain SET region = 'warm' WHERE host = 'host-1000';"
    echo "SELECT flownode.flush_flow('dm_flow');"
    for ((r = 1; r <= rounds; r++)); do
      for h in 7 1000; do
        v="moved-$r"
        if ((r % 2)); then
          echo "@mark${h}plain_$r UPDATE dm_hosts_plain SET region = '$v' WHERE host = 'host-$h';"
          echo "@mark${h}flow_$r UPDATE dm_hosts SET region = '$v' WHERE host = 'host-$h';"
        else
          echo "@mark${h}flow_$r UPDATE dm_hosts SET region = '$v' WHERE host = 'host-$h';"
          echo "@mark${h}plain_$r UPDATE dm_hosts_plain SET region = '$v' WHERE host = 'host-$h';"
        fi
        echo "=dirty${h}_$r SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'dm_flow';"
        echo "@flush${h}_$r SELECT flownode.flush_flow('dm_flow');"
      done
    done
    echo "@mv_1 CREATE MATERIALIZED VIEW dm_mv AS $q;"
    echo "@mv_2 REFRESH MATERIALIZED VIEW dm_mv;"
  } | "$FB" sql "$CONN" >"$RAW/dimension.tsv"
  echo "$out" >>"$RAW/dimension.tsv"
  awk -F'\t' '{split($1, a, "_"); print "dimension\t" a[1] "\t-\t-\t" a[2] "\t" $2}' "$RAW/dimension.tsv" >>"$RAW/measurements.tsv"
  rec dimension rows - - 0 "$rows"
  rec dimension check - - 0 "$(sql -c "SELECT count(*) FROM ((SELECT * FROM dm_sink EXCEPT SELECT * FROM dm_mv) UNION ALL (SELECT * FROM dm_mv EXCEPT SELECT * FROM dm_sink)) d")"
  sql -c "SET client_min_messages = warning; SELECT flownode.drop_flow('dm_flow'); DROP MATERIALIZED VIEW dm_mv; DROP TABLE dm_cpu, dm_hosts, dm_hosts_plain, dm_sink" >/dev/null
  section_end dimension
}

# ---- run --------------------------------------------------------------------
# Between sections flownode.pending is vacuumed: the previous section dropped its
# flows, and their records are dead rows there (autovacuum would remove them within
# a minute; a refresh must not pay for another section's leftovers).
for b in $SECTIONS; do
  [[ $b == callgrind ]] || sql -c "VACUUM flownode.pending" >/dev/null
  "bench_$b"
done

if [[ "$(stat -c '%d:%i:%Y' "$SO")" != "$SO_ID" ]]; then
  meta warning "flownode.so was replaced (reinstalled) while the benchmark ran: the figures may mix two builds"
  log "WARNING: $SO was replaced while the benchmark ran"
fi
meta loadavg_end "$(cut -d' ' -f1-3 /proc/loadavg)"
meta finished "$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
meta total_seconds "$(($(date +%s) - T0))"
log "writing $RESULTS/report.md and $RESULTS/freshness.svg"
python3 "$BENCH/report.py" "$RAW" "$RESULTS"
