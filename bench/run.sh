#!/usr/bin/env bash
# flownode benchmark suite: `make bench` (full, about 12 minutes on 2 cores) or
# `bash bench/run.sh --quick` / `make -C bench quick` (under 3 minutes).
#
# Run as root on Debian 12 (it installs what is missing with apt-get and installs
# flownode with `make install`); PostgreSQL runs as the `postgres` user in one
# throwaway cluster (its own directory and port) that is removed at the end.
# Writes bench/results/report.md, bench/results/freshness.svg and the raw
# measurements (bench/results/raw/), and prints the table; --quick writes to
# bench/results/quick/ instead.
#
# Every figure is a ratio against a baseline measured in the same run: each case
# alternates the baseline and the flow variant (the order rotates every round),
# and the reported ratio is the median of the per-round ratios.
# `--only 'copy refresh'` runs some sections only (micro copy multirow single
# record refresh freshness catchup idle busy read callgrind); the report then shows what
# ran. callgrind (instruction counts of the write path, bench/callgrind.sh) is part
# of the full run only.
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../test/common.sh
. "$BENCH/../test/common.sh"

MODE=full
SECTIONS="micro copy multirow single record refresh freshness catchup idle busy dimension read callgrind"
while (($#)); do
  a=$1
  shift
  case "$a" in
    --quick)
      MODE=quick
      [[ $SECTIONS == *callgrind* ]] && SECTIONS=${SECTIONS/ callgrind/}
      ;;
    --only)
      SECTIONS=${1:?--only needs a list, e.g. --only 'refresh freshness'}
      shift
      ;;
    -h | --help)
      sed -n '2,15p' "$0"
      exit 0
      ;;
    *) fn_die "unknown argument: $a (use --quick, --only LIST)" ;;
  esac
done
[[ $(id -u) -eq 0 ]] || fn_die "run as root (installs packages and the extension; the cluster runs as postgres)"

# ---- sizes -------------------------------------------------------------------
if [[ $MODE == full ]]; then
  COPY_ROWS=500000  # item 1: rows per COPY
  COPY_ROUNDS=6     #   rounds (each: no flow, 1 flow, 5 flows; a multiple of 3, so
                    #   each table runs first, second and third equally often)
  MULTI_ROWS=200000 # item 1: rows per multi-row run, 1,000 per statement
  MULTI_ROUNDS=6
  PGB_SECONDS=2 # item 1: pgbench duration of one single-row run
  PGB_ROUNDS=6
  REC_TX=100000 # item 6: transactions per durable-record run
  REC_ROUNDS=5
  R_ROWS=2000000 # item 2: rows (100 per 1-minute window)
  R_ROUNDS=15    #   flush/floor pairs
  R_MV_ROUNDS=3  #   REFRESH MATERIALIZED VIEW runs
  F_SECONDS=120  # item 3: duration (two periods of the flow's 1-minute window)
  F_RATE=20000   #   rows/s, 4 writers together
  Y_PER_MIN=10   # item 4: rows per minute over the year (10: 5.27M rows)
  Y_PAIRS=3      #   create_flow / INSERT ... SELECT pairs
  B_PAIRS=3      #   backfill rounds (a month each), plus one with a tuned setting
  IDLE_FLOWS=100 # item 5
  IDLE_SECONDS=60 #  with the default cadence (the issue's 60 s)
  IDLE_FAST_SECONDS=30 # then with eval_interval 1 s
  BUSY_FLOWS=20
  BUSY_ROWS=300000
  BUSY_PAIRS=3
else
  COPY_ROWS=100000
  COPY_ROUNDS=3
  MULTI_ROWS=50000
  MULTI_ROUNDS=3
  PGB_SECONDS=1
  PGB_ROUNDS=2
  REC_TX=20000
  REC_ROUNDS=2
  R_ROWS=2000000
  R_ROUNDS=5
  R_MV_ROUNDS=1
  F_SECONDS=15
  F_RATE=20000
  Y_PER_MIN=1
  Y_PAIRS=1
  B_PAIRS=1
  IDLE_FLOWS=100
  IDLE_SECONDS=8
  IDLE_FAST_SECONDS=8
  BUSY_FLOWS=20
  BUSY_ROWS=100000
  BUSY_PAIRS=1
fi
SIZE_VARS="COPY_ROWS COPY_ROUNDS MULTI_ROWS MULTI_ROUNDS PGB_SECONDS PGB_ROUNDS REC_TX REC_ROUNDS R_ROWS
  R_ROUNDS R_MV_ROUNDS F_SECONDS F_RATE Y_PER_MIN Y_PAIRS B_PAIRS IDLE_FLOWS IDLE_SECONDS IDLE_FAST_SECONDS BUSY_FLOWS BUSY_ROWS
  BUSY_PAIRS"
# issue 21.2 (read_flow): its section, sizes and bench_read
# shellcheck source=read_flow.sh
. "$BENCH/read_flow.sh"

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
SO="$(pg_config --pkglibdir)/flownode.so"
SO_ID="$(stat -c '%d:%i:%Y' "$SO")"
FB="$BENCH/bin/fnbench"
PGBENCH="$(fn_pg_bindir)/pgbench"

rm -rf "$RAW"
mkdir -p "$RAW"
DIR="$(fn_workdir)"
PORT="$(fn_free_port)"
cleanup() {
  local rc=$?
  if ((rc != 0)) && [[ -f "$DIR/server.log" ]]; then
    echo "---- last lines of the server log ----" >&2
    tail -n 30 "$DIR/server.log" >&2
  fi
  fn_stop_cluster_quiet "$DIR"
  rm -rf "$DIR"
  exit "$rc"
}
trap cleanup EXIT

# Benchmark settings on top of test/flownode.conf; everything else is PostgreSQL's
# default (fsync, synchronous_commit, wal_level, work_mem, autovacuum ...).
BENCH_CONF="shared_buffers = 1GB
max_wal_size = 4GB
checkpoint_timeout = 30min
max_worker_processes = 128
flownode.max_flows = 128"

# glibc's malloc returns freed memory at the top of the heap to the kernel, and a
# backend then page-faults it back in at its next statement. Whether that happens
# depends on incidental heap layout: in this benchmark the table without a flow
# re-faulted the parse tree of every multi-row statement (8,500 minor faults per
# 20,000 rows against 2,000 with a flow) and came out 20% slower than the table
# with a flow. Fixed thresholds take that accident out of both sides.
MALLOC_ENV="MALLOC_TRIM_THRESHOLD_=268435456 MALLOC_MMAP_THRESHOLD_=268435456"

log "starting a throwaway cluster in $DIR (port $PORT)"
FN_PG_ENV="$MALLOC_ENV" fn_start_cluster "$DIR" "$PORT" "$BENCH_CONF"

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
for g in flownode.max_windows_per_refresh flownode.min_refresh_interval flownode.local_ranges_per_flow \
  flownode.dirty_ranges_per_flow work_mem synchronous_commit; do
  meta "show_$g" "$(sql -c "SHOW $g")"
done

# ---- helpers ----------------------------------------------------------------

# flow_query K TABLE: the K-th flow of a table. 1-5 are the five flows of item 1
# (different windows, keys and aggregates); K > 5 is a (K-5)-minute date_bin (item 5).
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

# ---- item 6a: the marking path in isolation (Google Benchmark) ----------------
bench_micro() {
  section_start "6. marking path micro-benchmark (Google Benchmark)"
  "$BENCH/bin/marking_bench" --benchmark_min_time=$([[ $MODE == full ]] && echo 0.3 || echo 0.05) \
    --benchmark_repetitions=$([[ $MODE == full ]] && echo 3 || echo 1) --benchmark_report_aggregates_only=true \
    --benchmark_out="$RAW/marking_bench.json" --benchmark_out_format=json >/dev/null 2>"$RAW/marking_bench.err"
  section_end micro
}

# ---- item 1: ingest slowdown ------------------------------------------------
# Three tables: ing_base (no flow), ing_f1 (one flow), ing_f5 (five flows),
# created afresh for every case. Their flows have eval_interval 1 day: no refresh
# runs during the runs, so what is measured is the writer's cost (trigger, commit-time
# publication, durable record); refreshing is measured in items 2-5.
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
  section_start "1. ingest: COPY of $COPY_ROWS rows, $COPY_ROUNDS rounds"
  ingest_case copy "$COPY_ROWS" "$COPY_ROUNDS"
  section_end ingest_copy
}

bench_multirow() {
  section_start "1. ingest: multi-row INSERT of $MULTI_ROWS rows (1,000 per statement), $MULTI_ROUNDS rounds"
  ingest_case multirow "$MULTI_ROWS" "$MULTI_ROUNDS"
  section_end ingest_multirow
}

# Single-row autocommit INSERTs with pgbench: in time order (ts = now()) and
# scattered over 2024; TRUNCATE + CHECKPOINT before every run.
bench_single() {
  local clients order r v tps
  section_start "1. ingest: single-row INSERT (pgbench, 1 and 4 clients, ${PGB_SECONDS}s runs, $PGB_ROUNDS rounds)"
  for v in base f1 f5; do
    cat >"$PGB/inorder_$v.sql" <<EOF
\set h random(0, 9)
\set v random(0, 399)
INSERT INTO ing_$v (ts, host, v) VALUES (now(), 'host-' || :h, :v * 0.25);
EOF
    cat >"$PGB/scattered_$v.sql" <<EOF
\set s random(0, 31622399)
\set h random(0, 9)
\set v random(0, 399)
INSERT INTO ing_$v (ts, host, v) VALUES (timestamptz '2024-01-01 00:00:00+00' + :s * interval '1 second', 'host-' || :h, :v * 0.25);
EOF
  done
  for clients in 1 4; do
    for order in inorder scattered; do
      ingest_tables
      for ((r = 1; r <= PGB_ROUNDS; r++)); do
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

# ---- item 6b: per-transaction cost of the durable record --------------------
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
  section_start "6. durable record per transaction ($REC_TX transactions per run, $REC_ROUNDS rounds)"
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

# ---- item 2: one-window refresh ----------------------------------------------
bench_refresh() {
  local rq i kf kl ka flush floor floora diff
  section_start "2. one-window refresh: $R_ROWS rows, $((R_ROWS / 100)) windows"
  rq="SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, host, count(*) AS n, sum(v) AS sum_v, max(v) AS max_v FROM r_src GROUP BY 1, 2"
  sql >/dev/null <<EOF
SET client_min_messages = warning;
CREATE TABLE r_src (ts timestamptz NOT NULL, host text NOT NULL, v float8 NOT NULL) WITH (autovacuum_enabled = off);
INSERT INTO r_src SELECT timestamptz '2024-01-01 00:00:00+00' + i * interval '600 milliseconds',
       'host-' || (i % 10), (i % 400) * 0.25 FROM generate_series(0, $R_ROWS - 1) i;
CREATE INDEX ON r_src (ts);
VACUUM ANALYZE r_src;
SELECT flownode.create_flow('r_flow', 'r_sink', \$q\$$rq\$q\$, eval_interval => '1 hour');
CREATE TABLE r_floor (minute timestamptz NOT NULL, host text NOT NULL, n bigint, sum_v float8, max_v float8,
                      PRIMARY KEY (minute, host));
INSERT INTO r_floor $rq;
CREATE MATERIALIZED VIEW r_mv AS $rq;
VACUUM ANALYZE r_sink;
VACUUM ANALYZE r_floor;
CHECKPOINT;
EOF
  wait_active r_src 1
  wts() { date -u -d "2024-01-01 00:00:00 UTC + $1 minutes" '+%Y-%m-%d %H:%M:%S+00'; }
  late_row() { echo "INSERT INTO r_src VALUES (timestamptz '$(wts "$1")' + interval '30 seconds', 'host-3', 1.5);"; }
  floor_stmt() { echo "INSERT INTO r_floor AS s (minute, host, n, sum_v, max_v) SELECT date_bin('1 minute', ts, timestamptz '2000-01-01'), host, count(*), sum(v), max(v) FROM r_src WHERE ts >= '$(wts "$1")' AND ts < '$(wts $(($1 + 1)))' GROUP BY 1, 2 ON CONFLICT (minute, host) DO UPDATE SET n = EXCLUDED.n, sum_v = EXCLUDED.sum_v, max_v = EXCLUDED.max_v;"; }
  {
    # warm-up (untimed): the first refresh of the worker and of this session
    for i in 1 2 3; do
      late_row $((10 * i))
      echo "SELECT flownode.flush_flow('r_flow');"
      late_row $((10 * i + 5))
      floor_stmt $((10 * i + 5))
      echo "SELECT flownode.flush_flow('r_flow');"
    done
    for ((i = 1; i <= R_ROUNDS; i++)); do
      kf=$((100 + 97 * i))      # the window refreshed by flush_flow this round
      kl=$((100 + 97 * i + 41)) # the window refreshed by the hand-written statement
      ka=$((100 + 97 * i + 67)) # the window refreshed by the hand-written statement, committed asynchronously
      flush="@flush_$i SELECT flownode.flush_flow('r_flow');"
      floor="@floor_$i $(floor_stmt "$kl")"
      floora="@floorasync_$i $(floor_stmt "$ka")"
      if ((i % 2)); then
        late_row "$kf"
        echo "$flush"
        late_row "$kl"
        echo "$floor"
        late_row "$ka"
        echo "SET synchronous_commit = off;"
        echo "$floora"
        echo "RESET synchronous_commit;"
        echo "SELECT flownode.flush_flow('r_flow');"
      else
        late_row "$ka"
        echo "SET synchronous_commit = off;"
        echo "$floora"
        echo "RESET synchronous_commit;"
        late_row "$kl"
        echo "$floor"
        echo "SELECT flownode.flush_flow('r_flow');"
        late_row "$kf"
        echo "$flush"
      fi
      if ((i <= R_MV_ROUNDS)); then echo "@mv_$i REFRESH MATERIALIZED VIEW r_mv;"; fi
    done
  } | "$FB" sql "$CONN" >"$RAW/refresh.tsv"
  awk -F'\t' '{split($1, a, "_"); print "refresh\t" a[1] "\t-\t-\t" a[2] "\t" $2}' "$RAW/refresh.tsv" >>"$RAW/measurements.tsv"
  # the sink must equal the materialized view (refreshed last, after every late row)
  sql -c "REFRESH MATERIALIZED VIEW r_mv" >/dev/null
  diff=$(sql -c "SELECT count(*) FROM ((SELECT * FROM r_sink EXCEPT SELECT * FROM r_mv) UNION ALL (SELECT * FROM r_mv EXCEPT SELECT * FROM r_sink)) d")
  rec refresh check - - 0 "$diff"
  sql -c "SET client_min_messages = warning; DROP MATERIALIZED VIEW r_mv; DROP TABLE r_src; DROP TABLE r_sink, r_floor" >/dev/null
  section_end refresh
}

# ---- item 3: freshness under load --------------------------------------------
bench_freshness() {
  local wpid cpu0 cpu1 summary
  section_start "3. freshness: $F_RATE rows/s, 4 writers, ${F_SECONDS}s, eval_interval 1 s"
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
  wpid=$(sql -c "SELECT worker_pid FROM flownode.flows WHERE flow_name = 'fr_flow'")
  echo "$wpid" >"$DIR/fr.pids"
  cpu0=$("$FB" cpu "$DIR/fr.pids" | cut -d' ' -f1)
  summary=$("$FB" freshness "$CONN" fr_src fr_sink fr_flow "$F_RATE" 4 "$F_SECONDS" 100 "$RAW/freshness.csv")
  cpu1=$("$FB" cpu "$DIR/fr.pids" | cut -d' ' -f1)
  meta freshness_summary "$summary"
  meta freshness_worker_cpu_s "$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN {printf "%.2f", b - a}')"
  meta freshness_runs "$(sql -c "SELECT runs FROM flownode.flows WHERE flow_name = 'fr_flow'")"
  sql -c "SET client_min_messages = warning; DROP TABLE fr_src; DROP TABLE fr_sink" >/dev/null
  section_end freshness
}

# ---- item 4: backlog catch-up ------------------------------------------------
# A year (2024) of 1-minute data; flow over date_bin('1 minute') (527,040 windows).
# (a) create_flow over it (it fills the sink from the rows already there) vs one
#     INSERT ... SELECT ... GROUP BY into an empty table with the same key.
# (b) backfill: a month of late rows (before the year) into the existing flow; the
#     flow's catch-up (flush_flow: its worker refreshes every dirty window, at most
#     flownode.max_windows_per_refresh per refresh) vs one INSERT ... SELECT ...
#     GROUP BY of the same rows. The last round runs with max_windows_per_refresh
#     = 10000 (default 20).
bench_catchup() {
  local yrows yq r v lo hi wpid tuned flush plain name ms rss hwm diff
  yrows=$((366 * 1440 * Y_PER_MIN))
  section_start "4. catch-up: a year of 1-minute data ($yrows rows)"
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

  section_start "4. catch-up: backfill of a month of late rows, $B_PAIRS rounds + 1 tuned"
  month_lo() { date -u -d "2024-01-01 00:00:00 UTC - $1 months" '+%Y-%m-%d %H:%M:%S+00'; }
  for ((r = 1; r <= B_PAIRS + 1; r++)); do
    tuned=$((r > B_PAIRS))
    if ((tuned)); then
      sql -c "ALTER SYSTEM SET flownode.max_windows_per_refresh = 10000" -c "SELECT pg_reload_conf()" >/dev/null
      sleep 1
    fi
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
      if ((tuned)); then name="${name}_tuned"; fi
      rec catchup "$name" - - "$r" "$ms" "${rss:-}" "${hwm:-}"
    done
    if ((tuned)); then
      sql -c "ALTER SYSTEM RESET flownode.max_windows_per_refresh" -c "SELECT pg_reload_conf()" >/dev/null
    fi
  done
  diff=$(sql -c "SELECT count(*) FROM ((SELECT * FROM y_sink EXCEPT $yq GROUP BY 1) UNION ALL ($yq GROUP BY 1 EXCEPT SELECT * FROM y_sink)) d")
  rec catchup check - - 0 "$diff"
  sql -c "SET client_min_messages = warning; DROP TABLE y_src; DROP TABLE y_sink, y_plain, y_plain_month" >/dev/null
  section_end catchup_backfill
}

# ---- item 5: many flows ------------------------------------------------------
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
  runs=$(sql -c "SELECT sum(runs) FROM flownode.flows WHERE flow_name LIKE 'idle_f%'")
  sleep "$secs"
  read -r cpu1 _ < <("$FB" cpu "$DIR/idle.pids")
  runs=$(($(sql -c "SELECT sum(runs) FROM flownode.flows WHERE flow_name LIKE 'idle_f%'") - runs))
  rec idle "$cadence" - - 0 "$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN {printf "%.4f", b - a}')" "$npids" "$secs" "$runs"
}

bench_idle() {
  local k
  section_start "5. $IDLE_FLOWS idle flows, ${IDLE_SECONDS}s with the default cadence, ${IDLE_FAST_SECONDS}s with eval_interval 1 s"
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

# 20 flows (date_bin of 1..20 minutes, eval_interval 1 s) on one table against the
# same table without flows: multi-row INSERT in time order; the workers' CPU during
# the load, then the time until every sink is exact (flush_flow of each in turn).
bench_busy() {
  local r v c0 c1 secs cpu catch k
  section_start "5. $BUSY_FLOWS busy flows on one table (eval_interval 1 s), multi-row INSERT of $BUSY_ROWS rows"
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
  section_start "1/6. instruction counts of the write path (callgrind, own cluster)"
  fn_stop_cluster_quiet "$DIR"
  FN_BENCH_NO_BUILD=1 bash "$BENCH/callgrind.sh" >"$RAW/callgrind.log" 2>&1 \
    || { tail -20 "$RAW/callgrind.log" >&2; fn_die "callgrind.sh failed"; }
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
  section_start "joins: one dimension-row update against a fact table of $rows rows"
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
meta finished "$(date -u '+%Y-%m-%d %H:%M:%S UTC')"
meta total_seconds "$(($(date +%s) - T0))"
log "writing $RESULTS/report.md and $RESULTS/freshness.svg"
python3 "$BENCH/report.py" "$RAW" "$RESULTS"
