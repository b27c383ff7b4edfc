# shellcheck shell=bash
# ---- many flows on a bounded pool of workers -----------------------
# Sourced by run.sh (section "pool"); uses its helpers (rec, meta, log, section_*,
# $FB, $RAW, $MODE, $PGBENCH). Reported by report_pool.py. The section starts its own
# throwaway clusters, since it needs PostgreSQL's default max_worker_processes = 8
# (test/flownode.conf and the benchmark's cluster raise it):
#
# Cluster A (flownode.max_workers = 4, wal_level = logical):
#  1. POOL_FLOWS flows (adaptive cadence) over POOL_SOURCES sources; a burst of writes
#     to every source, then flush_flow of every flow in one session while a parallel
#     GROUP BY over POOL_BIG rows runs (EXPLAIN ANALYZE: workers planned and launched)
#     and a database of the same cluster publishes POOL_LR_ROWS rows to a subscription
#     in this one (the rows must arrive); then every sink against its query, counted
#     in one statement (test/tap/028_pool.pl's all_diffs).
#  3. The same flows idle for POOL_IDLE_S seconds: CPU of the pool's workers from
#     /proc/PID/stat (utime + stime) and their memory (PSS, /proc/PID/smaps_rollup).
# Cluster B (flownode.max_workers = 2):
#  2. FRESH_FLOWS flows with eval_interval 1 s, each source written at FRESH_RATE rows/s
#     by pgbench (an autocommit INSERT per source, rows stamped clock_timestamp());
#     a sampler reads every sink's newest row stamp (max(ts) of the rows it counts)
#     every 100 ms. A row's freshness: the first sample whose sink includes a stamp at
#     least the row's, minus the row's stamp.
#  4. The same flows under the same load; another session holds the first flow's
#     sink locked for SLOW_LOCK_S seconds (flownode.statement_timeout is twice that,
#     so that refresh waits it out). From the flows' runs, sampled every 100 ms: how
#     late each other flow's evaluation started against its schedule (the previous
#     start + eval_interval, not before the previous end).

if [[ $MODE == full ]]; then
  POOL_FLOWS=1000
  POOL_SOURCES=100
  POOL_BIG=2000000
  POOL_BURST=200 # rows per source in the burst
  POOL_LR_ROWS=10000
  POOL_IDLE_S=60
  FRESH_FLOWS=100
  FRESH_SECONDS=60
  SLOW_LOCK_S=30
else
  POOL_FLOWS=100
  POOL_SOURCES=10
  POOL_BIG=1000000
  POOL_BURST=100
  POOL_LR_ROWS=1000
  POOL_IDLE_S=10
  FRESH_FLOWS=20
  FRESH_SECONDS=15
  SLOW_LOCK_S=10
fi
FRESH_RATE=200      # rows/s per source
# shellcheck disable=SC2034  # read through SIZE_VARS (the report's target)
POOL_BUDGET_MS=1000 # one refresh's budget in time: the adaptive row budget is halved after a refresh over 1 s
SIZE_VARS+=" POOL_FLOWS POOL_SOURCES POOL_BIG POOL_BURST POOL_LR_ROWS POOL_IDLE_S FRESH_FLOWS FRESH_SECONDS FRESH_RATE SLOW_LOCK_S POOL_BUDGET_MS"

P_DIR=
P_PORT=
psp() { fn_psql "$P_DIR" "$P_PORT" -qtA "$@"; }

# pool_cluster CONF: a throwaway cluster of this section's own (test/flownode.conf,
# then CONF, which overrides it)
pool_cluster() {
  P_DIR="$(fn_workdir)"
  P_PORT="$(fn_free_port)"
  fn_start_cluster "$P_DIR" "$P_PORT" "$1"
  psp -c "CREATE EXTENSION flownode" >/dev/null
}
pool_cluster_stop() {
  fn_stop_cluster_quiet "$P_DIR"
  rm -rf "$P_DIR"
  P_DIR=
}

# pool_q I: flow I's query (its source I % POOL_SOURCES, its own factor)
pool_q() {
  echo "SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, count(*) AS n, sum(v * $1) AS s FROM pl_src_$(($1 % POOL_SOURCES)) GROUP BY 1"
}

# pool_diffs: rows in which the sinks and their queries differ, in one statement
pool_diffs() {
  local i
  {
    printf 'SELECT 0'
    for ((i = 1; i <= POOL_FLOWS; i++)); do
      printf '\n + (SELECT count(*) FROM (TABLE pl_sink_%d EXCEPT ALL (%s)) a) + (SELECT count(*) FROM ((%s) EXCEPT ALL TABLE pl_sink_%d) b)' \
        "$i" "$(pool_q "$i")" "$(pool_q "$i")" "$i"
    done
    echo ";"
  } | psp
}

# pool_wait_adopted: seconds until every flow has a worker (fails after 10 minutes)
pool_wait_adopted() {
  local t0 i
  t0=$(date +%s%N)
  for ((i = 0; i < 6000; i++)); do
    [[ $(psp -c "SELECT count(*) FILTER (WHERE worker_pid IS NULL) FROM flownode.flows") == 0 ]] && break
    sleep 0.1
  done
  ((i < 6000)) || fn_die "pool: flows without a worker after 10 minutes"
  awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN {printf "%.1f", (b - a) / 1e9}'
}

pool_setup() {
  local k i t0 t1 adopt
  {
    echo "SET client_min_messages = warning;"
    for ((k = 0; k < POOL_SOURCES; k++)); do
      echo "CREATE TABLE pl_src_$k (ts timestamptz NOT NULL, v int NOT NULL) WITH (autovacuum_enabled = off);"
      echo "CREATE INDEX ON pl_src_$k (ts);"
      echo "INSERT INTO pl_src_$k SELECT timestamptz '2024-03-01' + j * interval '1 minute', j FROM generate_series(1, 100) j;"
    done
  } | psp >/dev/null
  t0=$(date +%s%N)
  for ((i = 1; i <= POOL_FLOWS; i++)); do
    printf "SELECT flownode.create_flow('pl_f%d', 'pl_sink_%d', \$q\$%s\$q\$);\n" "$i" "$i" "$(pool_q "$i")"
  done | psp >/dev/null
  t1=$(date +%s%N)
  adopt=$(pool_wait_adopted)
  rec pool create - - 0 "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f", (b - a) / 1e9}')" "$adopt" \
    "$(psp -c "SELECT count(DISTINCT worker_pid) FROM flownode.flows")" \
    "$(psp -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'flownode flow'")" \
    "$(grep -c 'too few background worker processes' "$P_DIR/server.log" || true)"
}

# a database of the same cluster publishes lr to a subscription in postgres (the
# slot is made first: CREATE SUBSCRIPTION would wait for itself making it)
pool_replication_setup() {
  psp -c "CREATE DATABASE pool_pub" >/dev/null
  psp -d pool_pub >/dev/null <<'SQL'
CREATE TABLE lr (id bigint PRIMARY KEY, at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE PUBLICATION pool_pub FOR TABLE lr;
SELECT pg_create_logical_replication_slot('pool_sub', 'pgoutput');
SQL
  psp >/dev/null <<SQL
CREATE TABLE lr (id bigint PRIMARY KEY, at timestamptz NOT NULL);
CREATE SUBSCRIPTION pool_sub CONNECTION 'host=$P_DIR port=$P_PORT dbname=pool_pub user=postgres'
  PUBLICATION pool_pub WITH (create_slot = false, slot_name = 'pool_sub', copy_data = false);
SQL
}

# the burst: rows into every source at scattered minutes of March 2024, an UPDATE
# and a DELETE, one autocommit statement each
pool_burst() {
  local k
  for ((k = 0; k < POOL_SOURCES; k++)); do
    echo "INSERT INTO pl_src_$k SELECT timestamptz '2024-03-01' + (j * 7919 % 44640) * interval '1 minute', j FROM generate_series(1, $POOL_BURST) j;"
    echo "UPDATE pl_src_$k SET v = v + 1 WHERE v % 5 = 0;"
    echo "DELETE FROM pl_src_$k WHERE v % 7 = 0;"
  done | psp >/dev/null
}

# the table of the parallel query, and the subscription
pool_part1_setup() {
  psp -c "CREATE TABLE pl_big AS SELECT g AS id, g % 97 AS k FROM generate_series(1, $POOL_BIG) g" -c "VACUUM ANALYZE pl_big" >/dev/null
  pool_replication_setup
}

# pool_part1 TAG ROUND: the burst, then flush_flow of every flow while a parallel
# GROUP BY runs and the publisher writes POOL_LR_ROWS rows; the sinks against their
# queries. Cases are named with TAG (the pool's size)
pool_part1() {
  local tag=$1 round=$2 flush_pid lr_pid t0 ms r plan i n lo
  pool_burst
  rm -f "$P_DIR/flush.end"
  t0=$(date +%s%N)
  (psp -c "SELECT count(*) FROM flownode.flows f, LATERAL flownode.flush_flow(f.flow_name) x" >"$P_DIR/flush.out" 2>&1
    echo $? >"$P_DIR/flush.rc"; date +%s%N >"$P_DIR/flush.end") &
  flush_pid=$!
  lo=$(((round - 1) * POOL_LR_ROWS))
  (for ((i = 0; i < 10; i++)); do
    psp -d pool_pub -c "INSERT INTO lr (id) SELECT g FROM generate_series($lo + $i * $POOL_LR_ROWS / 10 + 1, $lo + ($i + 1) * $POOL_LR_ROWS / 10) g"
    sleep 0.2
  done) >/dev/null &
  lr_pid=$!
  # the background workers besides the parallel query's (max_worker_processes counts them)
  meta "pool_bgworkers$tag" "$(psp -c "SELECT string_agg(backend_type || ': ' || n, ', ' ORDER BY backend_type) FROM (SELECT backend_type, count(*) n
    FROM pg_stat_activity WHERE backend_type NOT IN ('client backend', 'checkpointer', 'background writer', 'walwriter',
    'autovacuum launcher', 'autovacuum worker', 'archiver', 'startup', 'walsender') GROUP BY 1) x")"
  for r in 1 2 3; do
    plan=$(psp -c "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT k, count(*) FROM pl_big GROUP BY k")
    rec pool "parallel$tag" - - "$r" "$(sed -n 's/.*Workers Planned: \([0-9]*\).*/\1/p' <<<"$plan" | head -1)" \
      "$(sed -n 's/.*Workers Launched: \([0-9]*\).*/\1/p' <<<"$plan" | head -1)" \
      "$(psp -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'flownode flow'")" \
      "$([[ -e $P_DIR/flush.end ]] && echo 0 || echo 1)"
  done
  wait "$lr_pid"
  wait "$flush_pid"
  ms=$(awk -v a="$t0" -v b="$(cat "$P_DIR/flush.end")" 'BEGIN {printf "%.0f", (b - a) / 1e6}')
  rec pool "flush$tag" - - 0 "$ms" "$(cat "$P_DIR/flush.rc")"
  t0=$(date +%s%N)
  for ((i = 0; i < 600; i++)); do
    n=$(($(psp -c "SELECT count(*) FROM lr WHERE id > $lo")))
    ((n >= POOL_LR_ROWS)) && break
    sleep 0.1
  done
  rec pool "lr$tag" - - 0 "$POOL_LR_ROWS" "$n" "$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN {printf "%.1f", (b - a) / 1e9}')" \
    "$(psp -c "SELECT count(*) FROM pg_stat_subscription WHERE pid IS NOT NULL")"
  rec pool "exact$tag" - - 0 "$(pool_diffs)"
}

# the pool lowered to flownode.max_workers = 2 with a reload (what the startup check
# asks for beside 2 parallel workers and a subscription in 8): seconds until the
# workers beyond it have handed their flows to the others
pool_lower() {
  local t0 i
  psp -c "ALTER SYSTEM SET flownode.max_workers = 2" -c "SELECT pg_reload_conf()" >/dev/null
  t0=$(date +%s%N)
  for ((i = 0; i < 1200; i++)); do
    [[ $(psp -c "SELECT (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'flownode flow') <= 2
      AND (SELECT count(*) FROM flownode.flows WHERE worker_pid IS NULL) = 0") == t ]] && break
    sleep 0.1
  done
  rec pool lower - - 0 "$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN {printf "%.1f", (b - a) / 1e9}')" \
    "$(psp -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'flownode flow'")"
}

# pool_memctx TAG PID: the memory contexts of one pool worker (pg_log_backend_memory_contexts
# into the server log), summed by name: the largest, and the grand total
pool_memctx() {
  local tag=$1 pid=$2 i from
  from=$(($(stat -c %s "$P_DIR/server.log") + 1)) # this dump only: the same worker may have logged one before
  psp -c "SELECT pg_log_backend_memory_contexts($pid)" >/dev/null
  for ((i = 0; i < 50; i++)); do
    tail -c +"$from" "$P_DIR/server.log" | grep -q "\[$pid\] LOG:  Grand total" && break
    sleep 0.1
  done
  tail -c +"$from" "$P_DIR/server.log" | grep "\[$pid\] LOG:  " >"$RAW/pool_memory_contexts$tag.txt" || true
  meta "pool_memctx_flows$tag" "$(psp -c "SELECT count(*) FROM flownode.flows WHERE worker_pid = $pid")"
  meta "pool_memctx$tag" "$(awk '
    /level: [0-9]+; [0-9]+ more child contexts containing/ { match($0, /level: [0-9]+/); l = substr($0, RSTART + 7, RLENGTH - 7)
      match($0, /containing [0-9]+/); n["(the children of " last[l] " beyond the first 100)"] += substr($0, RSTART + 11, RLENGTH - 11); next }
    /level: [0-9]+; / { match($0, /level: [0-9]+/); l = substr($0, RSTART + 7, RLENGTH - 7)
      sub(/.*level: [0-9]+; /, ""); name = $0; sub(/: [0-9]+ total in.*/, "", name); last[l] = name
      match($0, /: [0-9]+ total in/); v = substr($0, RSTART + 2, RLENGTH - 11); n[name] += v; c[name]++ }
    /Grand total: / { match($0, /Grand total: [0-9]+/); g = substr($0, RSTART + 13, RLENGTH - 13) }
    END { for (k in n) printf "%d\t%s\t%d\n", n[k], k, c[k]; printf "%d\tGRAND\t0\n", g }' "$RAW/pool_memory_contexts$tag.txt" \
    | sort -rn | head -8 | awk -F'\t' '{printf "%s%s %.1f MiB%s", (NR > 1 ? ", " : ""), $2, $1 / 1048576, ($3 > 1 ? " (" $3 " contexts)" : "")}')"
}

# the PSS, private, anonymous PSS and shared-memory PSS (KiB) of the processes in a
# file of pids
pool_pss() {
  local pid pss=0 priv=0 anon=0 shm=0 a b c d
  while read -r pid; do
    [[ -r /proc/$pid/smaps_rollup ]] || continue
    read -r a b c d < <(awk '/^Pss:/ {p += $2} /^Private_(Clean|Dirty):/ {v += $2} /^Pss_Anon:/ {n += $2}
      /^Pss_Shmem:/ {m += $2} END {print p + 0, v + 0, n + 0, m + 0}' "/proc/$pid/smaps_rollup")
    pss=$((pss + a)) priv=$((priv + b)) anon=$((anon + c)) shm=$((shm + d))
  done <"$1"
  echo "$pss $priv $anon $shm"
}

# pool_part3 TAG: the same flows idle (nothing dirty after the flush); cases named
# with TAG (the pool's size)
pool_part3() {
  local tag=$1 c0 c1 l0 l1 n runs pss0 pss1 priv1 anon1 shm1 same
  sleep 5 # the flush's last refreshes and the subscription's apply settle
  psp -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'flownode flow' ORDER BY pid" >"$P_DIR/pool.pids"
  psp -c "SELECT pid FROM pg_stat_activity WHERE backend_type IN ('flownode launcher', 'flownode db starter')" >"$P_DIR/other.pids"
  read -r c0 n < <("$FB" cpu "$P_DIR/pool.pids")
  read -r l0 _ < <("$FB" cpu "$P_DIR/other.pids")
  read -r pss0 _ < <(pool_pss "$P_DIR/pool.pids")
  runs=$(psp -c "SELECT sum(runs) FROM flownode.flow_info")
  sleep "$POOL_IDLE_S"
  read -r c1 _ < <("$FB" cpu "$P_DIR/pool.pids")
  read -r l1 _ < <("$FB" cpu "$P_DIR/other.pids")
  read -r pss1 priv1 anon1 shm1 < <(pool_pss "$P_DIR/pool.pids")
  runs=$(($(psp -c "SELECT sum(runs) FROM flownode.flow_info") - runs))
  same=$([[ "$(psp -c "SELECT pid FROM pg_stat_activity WHERE backend_type = 'flownode flow' ORDER BY pid")" == "$(cat "$P_DIR/pool.pids")" ]] && echo 1 || echo 0)
  rec pool "idle$tag" - - 0 "$(awk -v a="$c0" -v b="$c1" 'BEGIN {printf "%.3f", b - a}')" "$POOL_IDLE_S" "$n" \
    "$pss0" "$pss1" "$priv1" "$runs" "$(awk -v a="$l0" -v b="$l1" 'BEGIN {printf "%.3f", b - a}')" "$same" \
    "$(psp -c "SELECT count(*) FROM flownode.flows WHERE dirty_windows > 0")" "$anon1" "$shm1"
  pool_memctx "$tag" "$(head -1 "$P_DIR/pool.pids")"
}

# ---- cluster B: freshness, and a slow flow beside the others ----------------

fresh_setup() {
  local k
  {
    echo "SET client_min_messages = warning;"
    for ((k = 1; k <= FRESH_FLOWS; k++)); do
      echo "CREATE TABLE fr_src_$k (ts timestamptz NOT NULL, v int NOT NULL) WITH (autovacuum_enabled = off);"
      echo "CREATE INDEX ON fr_src_$k (ts);"
      printf "SELECT flownode.create_flow('fr_f%d', 'fr_sink_%d', \$q\$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, count(*) AS n, max(ts) AS last_ts FROM fr_src_%d GROUP BY 1\$q\$, eval_interval => '1 second');\n" "$k" "$k" "$k"
    done
    echo "CREATE TABLE fr_samples (t timestamptz NOT NULL, k int NOT NULL, wm timestamptz);"
    echo "CREATE TABLE sl_samples (t timestamptz NOT NULL, flow_name text NOT NULL, runs bigint, fin timestamptz, dur interval, worker int);"
  } | psp >/dev/null
  pool_wait_adopted >/dev/null
  # the sampler of sinks: every sink's newest stamp, every 100 ms, for SECS seconds
  {
    # shellcheck disable=SC2016  # $p$ is SQL's dollar quote
    printf 'CREATE PROCEDURE fr_sample(secs float8) LANGUAGE plpgsql AS $p$\nDECLARE stop timestamptz := clock_timestamp() + secs * interval %s;\nBEGIN\n  WHILE clock_timestamp() < stop LOOP\n    INSERT INTO fr_samples SELECT clock_timestamp(), k, m FROM (' "'1 second'"
    for ((k = 1; k <= FRESH_FLOWS; k++)); do
      ((k > 1)) && printf ' UNION ALL '
      printf 'SELECT %d AS k, (SELECT max(last_ts) FROM fr_sink_%d) AS m' "$k" "$k"
    done
    # shellcheck disable=SC2016
    printf ') x;\n    COMMIT;\n    PERFORM pg_sleep(0.1);\n  END LOOP;\nEND $p$;\n'
    # the sampler of the flows' runs (part 4), from flow_status(): it takes no lock on sinks
    cat <<'SQL'
CREATE PROCEDURE sl_sample(secs float8) LANGUAGE plpgsql AS $p$
DECLARE stop timestamptz := clock_timestamp() + secs * interval '1 second';
BEGIN
  WHILE clock_timestamp() < stop LOOP
    INSERT INTO sl_samples SELECT clock_timestamp(), f.flow_name, s.runs, s.last_run_at, s.last_run_duration, s.worker_pid
      FROM flownode.flow f JOIN flownode.flow_status() s USING (flow_id);
    COMMIT;
    PERFORM pg_sleep(0.1);
  END LOOP;
END $p$;
SQL
  } | psp >/dev/null
  # the load: each run of the script writes every source once, FRESH_RATE / 10 rows,
  # in its own autocommit INSERT (stamped just before its commit); 10 runs a second
  for ((k = 1; k <= FRESH_FLOWS; k++)); do
    echo "INSERT INTO fr_src_$k SELECT clock_timestamp(), 1 FROM generate_series(1, $((FRESH_RATE / 10)));"
  done >"$P_DIR/fresh.sql"
  chown postgres: "$P_DIR/fresh.sql"
}

# fresh_load SECONDS: the load generator (asynchronous commit: the WAL flush of
# the writer's commit is not the flow's lag); prints pgbench's output
fresh_load() {
  (cd / && PGOPTIONS='-c synchronous_commit=off' runuser -u postgres -- "$PGBENCH" -h "$P_DIR" -p "$P_PORT" -U postgres \
    -n -c 2 -j 2 -R 10 -T "$1" -f "$P_DIR/fresh.sql" postgres 2>&1)
}

# part 2: freshness under the load. Rows of the first 3 s (the flows' first
# refreshes under load) are left out; a row no sample shows is counted at 10^6 s.
pool_part2() {
  local t0 out samp k
  psp -c "TRUNCATE fr_samples" >/dev/null
  t0=$(psp -c "SELECT clock_timestamp() + interval '3 seconds'")
  psp -c "CALL fr_sample($FRESH_SECONDS + 4)" >/dev/null &
  samp=$!
  out=$(fresh_load "$FRESH_SECONDS")
  wait "$samp"
  echo "$out" >"$RAW/pool_fresh_pgbench.txt"
  psp -c "CREATE INDEX ON fr_samples (k, wm, t)" >/dev/null
  {
    printf "WITH r AS ("
    for ((k = 1; k <= FRESH_FLOWS; k++)); do
      ((k > 1)) && printf ' UNION ALL '
      printf "SELECT %d AS k, ts FROM fr_src_%d WHERE ts >= '%s'" "$k" "$k" "$t0"
    done
    cat <<'SQL'
), f AS (
  SELECT coalesce(extract(epoch FROM (SELECT s.t FROM fr_samples s WHERE s.k = r.k AND s.wm >= r.ts ORDER BY s.wm, s.t LIMIT 1) - r.ts) * 1000, 1e9) AS ms,
         r.ts
    FROM r)
SELECT count(*), round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)), round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)),
       round(max(ms)), count(*) FILTER (WHERE ms >= 1e9),
       round((count(*) / extract(epoch FROM max(ts) - min(ts)) / (SELECT count(DISTINCT k) FROM r))::numeric, 1)
  FROM f;
SQL
  } | psp -F ' ' | {
    read -r n p50 p99 mx cens rate
    rec pool fresh - - 0 "$n" "$p50" "$p99" "$mx" "$cens" "$rate"
  }
  # the sampling's own resolution: the median gap between two samples of a sink
  rec pool fresh_sampling - - 0 "$(psp -c "SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY g) * 1000) FROM (SELECT extract(epoch FROM t - lag(t) OVER (PARTITION BY k ORDER BY t)) AS g FROM fr_samples) x WHERE g IS NOT NULL")" \
    "$(tps_of <<<"$out")" "$(awk '/^latency average/ {print $4; exit}' <<<"$out")" \
    "$(psp -c "SELECT count(DISTINCT worker_pid) FROM flownode.flows")"
}

# part 4: the first flow's sink locked for SLOW_LOCK_S seconds under the same load
pool_part4() {
  local samp load lock w
  w=$(psp -c "SELECT worker_pid FROM flownode.flows WHERE flow_name = 'fr_f1'")
  psp -c "CALL sl_sample($SLOW_LOCK_S + 15)" >/dev/null &
  samp=$!
  fresh_load "$((SLOW_LOCK_S + 12))" >"$RAW/pool_slow_pgbench.txt" &
  load=$!
  sleep 5
  psp -F ' ' >"$P_DIR/lock.out" <<SQL &
BEGIN;
LOCK TABLE fr_sink_1 IN ACCESS EXCLUSIVE MODE;
SELECT 'from', clock_timestamp();
SELECT pg_sleep($SLOW_LOCK_S);
SELECT 'to', clock_timestamp();
COMMIT;
SQL
  lock=$!
  wait "$lock" "$load" "$samp"
  pool_slow_figures "$w" "$(awk '$1 == "from" {print $2, $3}' "$P_DIR/lock.out")" \
    "$(awk '$1 == "to" {print $2, $3}' "$P_DIR/lock.out")"
}

# pool_slow_figures WORKER FROM TO: every other flow's evaluations, each as late as
# its start is after its schedule (the previous start + eval_interval, not before
# the previous end; consecutive runs only), split by whether the flow shared the
# slow flow's worker, for the evaluations due while the sink was locked and in the
# 3 s before (the load runs from 5 s before the lock)
pool_slow_figures() {
  psp -F ' ' <<SQL | while read -r phase same n p99 mx; do rec pool slow "$phase" "$same" 0 "$n" "$p99" "$mx"; done
WITH d AS (SELECT DISTINCT flow_name, runs, fin, dur, worker FROM sl_samples WHERE fin IS NOT NULL),
r AS (SELECT flow_name, runs, fin - dur AS st, lag(runs) OVER w AS pruns,
             greatest(lag(fin - dur) OVER w + interval '1 second', lag(fin) OVER w) AS due, lag(worker) OVER w AS pworker
        FROM d WINDOW w AS (PARTITION BY flow_name ORDER BY runs)),
l AS (SELECT CASE WHEN due >= '$2' AND due < '$3' THEN 'locked'
                  WHEN due >= timestamptz '$2' - interval '3 seconds' AND due < '$2' THEN 'before' END AS phase,
             CASE WHEN pworker = $1 THEN 'same' ELSE 'other' END AS same,
             extract(epoch FROM st - due) * 1000 AS ms
        FROM r WHERE runs = pruns + 1 AND flow_name <> 'fr_f1')
SELECT phase, same, count(*), round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)), round(max(ms))
  FROM l WHERE phase IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2;
SQL
  rec pool slow_flow - - 0 "$(psp -c "SELECT round(extract(epoch FROM max(dur))::numeric, 1) FROM sl_samples WHERE flow_name = 'fr_f1'")" \
    "$(psp -c "SELECT count(*) FROM flownode.flows WHERE worker_pid = $1 AND flow_name <> 'fr_f1'")" \
    "$(psp -c "SELECT count(DISTINCT flow_name) FROM sl_samples WHERE worker = $1 AND flow_name <> 'fr_f1'")"
}

bench_pool() {
  section_start "pool: $POOL_FLOWS flows on 4 workers (max_worker_processes 8), $FRESH_FLOWS flows at ${FRESH_RATE} rows/s each on 2"
  pool_cluster "max_worker_processes = 8
flownode.max_workers = 4
flownode.max_flows = $((POOL_FLOWS + 100))
flownode.verify_folds = off
wal_level = logical"
  pool_setup
  log "   $POOL_FLOWS flows adopted; burst, flush, parallel query, replication"
  pool_part1_setup
  pool_part1 "" 1
  log "   idle for ${POOL_IDLE_S}s"
  pool_part3 ""
  log "   the pool lowered to 2 workers; burst, flush, parallel query, replication again"
  pool_lower
  pool_part1 _w2 2
  log "   idle for ${POOL_IDLE_S}s on 2 workers"
  pool_part3 _w2
  pool_cluster_stop
  pool_cluster "max_worker_processes = 8
flownode.max_workers = 2
flownode.max_flows = $((FRESH_FLOWS + 100))
flownode.verify_folds = off
flownode.statement_timeout = '$((SLOW_LOCK_S * 2))s'"
  fresh_setup
  log "   freshness: ${FRESH_SECONDS}s of load"
  pool_part2
  log "   a sink locked for ${SLOW_LOCK_S}s"
  pool_part4
  pool_cluster_stop
  section_end pool
}
