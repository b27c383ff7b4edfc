# shellcheck shell=bash
# ---- flow servers fed by logical replication ------------------------
# Sourced by run.sh (section "servers"); uses its helpers (rec, meta, log, section_*,
# $RAW, $MODE, $PGBENCH). Reported by report_flow_servers.py. The section starts
# its own throwaway clusters (wal_level = logical): primaries that take the writes
# and carry no flownode extension, and flow servers that subscribe to them
# (docs/operations.md, "Flow servers"). All of them share this machine's cores: the
# figures are about cost, not about adding CPUs.
#
#  1. The primary's cost per written row: FS_COST_ROWS rows in multi-row INSERTs of
#     1,000 rows (autocommit) into a table with no flow, a table with FS_FLOWS flows
#     on the primary, and a published table whose FS_FLOWS flows run on a flow
#     server, alternated for FS_COST_ROUNDS rounds (order rotated). Timed: the
#     writes' wall time; counted: the CPU time of every process of the primary
#     (postmaster, backends, walsenders, flownode's workers: utime + stime from
#     /proc, exited children through the postmaster's cutime + cstime) from before
#     the writes until the work they cause is done (flows on the primary: flush_flow
#     of each; on a flow server: its wait_for_publishers, so the walsender has
#     decoded every row). No callgrind here: the primary's backend runs the same code
#     with the flows on a flow server as with none; what differs is the walsender's
#     decoding, which the CPU time counts.
#  2. Freshness over two primaries: pgbench writes FS_RATE rows/s in all (half on
#     each, FS_BATCH rows a transaction, stamped clock_timestamp()) for FS_SECONDS;
#     the flow server's flow (eval_interval 1 s) keeps max(ts) per shard, which a
#     session on the flow server samples every 100 ms. A row's freshness: the first
#     sample whose sink holds a stamp at least the row's, minus the row's stamp,
#     over stamps every millisecond of the run after a 3 s warm-up (the rate is
#     constant, so this weighs every row alike). The rate reached is the rows
#     written over the time they took; after the writes stop, wait_for_publishers
#     measures the backlog left.
#  3. A new flow server catching up on FS_CATCHUP_ROWS rows (half on each primary):
#     from CREATE SUBSCRIPTION (copy_data = true) until wait_for_publishers of its
#     flows returns; then its sinks against their queries.

if [[ $MODE == full ]]; then
  FS_COST_ROWS=200000
  FS_COST_ROUNDS=3
  FS_SECONDS=20
  FS_CATCHUP_ROWS=2000000
else
  FS_COST_ROWS=50000
  FS_COST_ROUNDS=1
  FS_SECONDS=8
  FS_CATCHUP_ROWS=200000
fi
FS_RATE=20000 # rows/s over both primaries (the issue's target)
FS_BATCH=100  # rows per pgbench transaction
FS_FLOWS=2
SIZE_VARS+=" FS_COST_ROWS FS_COST_ROUNDS FS_SECONDS FS_CATCHUP_ROWS FS_RATE FS_BATCH FS_FLOWS"

FS_DIRS=() # every cluster of this section, for fs_cleanup
FS_CONF="wal_level = logical
max_wal_senders = 10
max_replication_slots = 10
shared_buffers = 256MB
max_wal_size = 4GB
wal_retrieve_retry_interval = 1s
timezone = 'UTC'"

# fs_cluster NAME: a throwaway cluster; sets NAME_DIR and NAME_PORT
fs_cluster() {
  local d p
  d="$(fn_workdir)"
  p="$(fn_free_port)"
  FS_DIRS+=("$d")
  fn_start_cluster "$d" "$p" "$FS_CONF"
  printf -v "${1}_DIR" '%s' "$d"
  printf -v "${1}_PORT" '%s' "$p"
}
fs_cleanup() {
  local d
  for d in "${FS_DIRS[@]}"; do
    fn_stop_cluster_quiet "$d"
    rm -rf "$d"
  done
  FS_DIRS=()
}
# fsq NAME [psql args]: psql on cluster NAME
fsq() {
  local d="${1}_DIR" p="${1}_PORT"
  shift
  fn_psql "${!d}" "${!p}" -qtA "$@"
}
fs_conninfo() {
  local d="${1}_DIR" p="${1}_PORT"
  echo "host=${!d} port=${!p} dbname=postgres user=postgres"
}

# fs_cpu NAME: CPU clock ticks used so far by every process of the cluster
fs_cpu() {
  local d="${1}_DIR" pm c t=0
  pm=$(head -1 "${!d}/data/postmaster.pid")
  # fields after the command's closing parenthesis: utime is the 12th, cutime the 14th
  t=$(sed 's/.*) //' "/proc/$pm/stat" | awk '{print $12 + $13 + $14 + $15}')
  for c in $(pgrep -P "$pm"); do
    t=$((t + $(sed 's/.*) //' "/proc/$c/stat" 2>/dev/null | awk '{print $12 + $13}' || echo 0)))
  done
  echo "$t"
}

# fs_since T0: seconds since T0 (date +%s%N)
fs_since() { awk -v a="$1" -v b="$(date +%s%N)" 'BEGIN {printf "%.3f", (b - a) / 1e9}'; }

# fs_table NAME TABLE: the metrics table (shard, device, ts, v) and its time index
fs_table() {
  fsq "$1" -c "CREATE TABLE $2 (shard int NOT NULL, device int NOT NULL, ts timestamptz NOT NULL, v int NOT NULL); CREATE INDEX ON $2 (ts)" >/dev/null
}

# fs_flows NAME TABLE EVAL: the FS_FLOWS flows over TABLE (sinks TABLE_s1, ...)
fs_flows() {
  local q=("SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, shard, count(*) AS n, sum(v) AS total, max(ts) AS hi FROM $2 GROUP BY 1, 2"
    "SELECT date_trunc('hour', ts) AS hour, device, count(*) AS n, max(v) AS hi FROM $2 GROUP BY 1, 2") k
  for ((k = 1; k <= FS_FLOWS; k++)); do
    fsq "$1" -c "SELECT flownode.create_flow('${2}_f$k', '${2}_s$k', \$q\$${q[$(((k - 1) % 2))]}\$q\$, eval_interval => $3)" >/dev/null
  done
}

# fs_wait NAME TABLE: wait_for_publishers of each flow of TABLE on NAME; prints seconds
fs_wait() {
  local k t0
  t0=$(date +%s%N)
  for ((k = 1; k <= FS_FLOWS; k++)); do
    fsq "$1" -c "SELECT flownode.wait_for_publishers('${2}_f$k', timeout => '30 minutes')" >/dev/null
  done
  fs_since "$t0"
}

# fs_insert NAME TABLE ROWS SHARD: multi-row INSERTs of 1,000 rows, autocommit
fs_insert() {
  local k
  for ((k = 0; k < $3 / 1000; k++)); do
    echo "INSERT INTO $2 SELECT $4, g % 100, timestamptz '2024-01-01' + (g + $k * 1000) * interval '1 second', g FROM generate_series(1, 1000) g;"
  done | fsq "$1" >/dev/null
}

# 1. the primary's cost per written row: none / local / remote
fs_cost_run() {
  local v=$1 r=$2 c0 t0 wall c1 k
  fsq PA -c "TRUNCATE cost_$v" >/dev/null
  [[ $v == remote ]] && fs_wait FS cost_remote >/dev/null
  [[ $v == local ]] && for ((k = 1; k <= FS_FLOWS; k++)); do fsq PA -c "SELECT flownode.flush_flow('cost_local_f$k')" >/dev/null; done
  c0=$(fs_cpu PA)
  t0=$(date +%s%N)
  fs_insert PA "cost_$v" "$FS_COST_ROWS" 0
  wall=$(fs_since "$t0")
  case $v in
    local) for ((k = 1; k <= FS_FLOWS; k++)); do fsq PA -c "SELECT flownode.flush_flow('cost_local_f$k')" >/dev/null; done ;;
    remote) fs_wait FS cost_remote >/dev/null ;;
  esac
  c1=$(fs_cpu PA)
  rec servers cost "$v" wall "$r" "$wall"
  rec servers cost "$v" cpu "$r" "$(awk -v a="$c0" -v b="$c1" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.3f", (b - a) / hz}')"
}

fs_cost() {
  local r v
  fs_table PA cost_none
  fs_table PA cost_local
  fs_flows PA cost_local NULL
  fs_table PA cost_remote
  fsq PA -c "CREATE PUBLICATION cost_pub FOR TABLE cost_remote" >/dev/null
  fs_table FS cost_remote
  fs_flows FS cost_remote NULL
  fsq FS -c "CREATE SUBSCRIPTION cost_sub CONNECTION '$(fs_conninfo PA)' PUBLICATION cost_pub" >/dev/null
  fs_wait FS cost_remote >/dev/null
  for ((r = 1; r <= FS_COST_ROUNDS; r++)); do
    for v in $(rotate "$r" none local remote); do fs_cost_run "$v" "$r"; done
  done
  fsq FS -c "DROP SUBSCRIPTION cost_sub" >/dev/null
}

# 2. freshness over two primaries
fs_fresh() {
  local s rate_tx sampler
  for s in PA PB; do
    fs_table "$s" fr_metrics
    fsq "$s" -c "CREATE PUBLICATION fr_pub FOR TABLE fr_metrics" >/dev/null
  done
  fs_table FS fr_metrics
  fsq FS -c "SELECT flownode.create_flow('fr_f', 'fr_sink', \$q\$SELECT date_bin('10 seconds', ts, timestamptz '2000-01-01') AS w, shard, count(*) AS n, max(ts) AS hi FROM fr_metrics GROUP BY 1, 2\$q\$, eval_interval => '1 second')" >/dev/null
  fsq FS -c "CREATE TABLE fr_samples (t timestamptz, shard int, hi timestamptz)" >/dev/null
  for s in PA PB; do
    fsq FS -c "CREATE SUBSCRIPTION fr_sub_$s CONNECTION '$(fs_conninfo "$s")' PUBLICATION fr_pub" >/dev/null
  done
  fsq FS -c "SELECT flownode.wait_for_publishers('fr_f')" >/dev/null
  # the sampler: every 100 ms, each shard's newest stamp in the sink, until told to stop
  fsq FS -c "DO \$\$ BEGIN FOR i IN 1..$(((FS_SECONDS + 60) * 10)) LOOP
    INSERT INTO fr_samples SELECT clock_timestamp(), shard, max(hi) FROM fr_sink GROUP BY shard;
    COMMIT; EXIT WHEN EXISTS (SELECT FROM fr_samples WHERE shard = -1); PERFORM pg_sleep(0.1); END LOOP; END \$\$" >/dev/null &
  sampler=$!
  rate_tx=$((FS_RATE / 2 / FS_BATCH))
  for s in PA PB; do
    local d="${s}_DIR" p="${s}_PORT" shard=1
    [[ $s == PB ]] && shard=2
    echo "INSERT INTO fr_metrics SELECT $shard, g % 100, clock_timestamp(), g FROM generate_series(1, $FS_BATCH) g;" >"$RAW/fs_pgbench_$s.sql"
    chmod a+r "$RAW/fs_pgbench_$s.sql"
    (cd / && runuser -u postgres -- "$PGBENCH" -h "${!d}" -p "${!p}" -U postgres -n -c 2 -j 2 -R "$rate_tx" -T "$FS_SECONDS" \
      -f "$RAW/fs_pgbench_$s.sql" postgres >"$RAW/fs_pgbench_$s.log" 2>&1) &
  done
  wait_pgbench_jobs "$sampler"
  rec servers fresh drain - 1 "$(fs_wait_one FS fr_f)"
  fsq FS -c "INSERT INTO fr_samples VALUES (clock_timestamp(), -1, NULL)" >/dev/null
  wait "$sampler" || true
  fs_fresh_figures
  for s in PA PB; do fsq FS -c "DROP SUBSCRIPTION fr_sub_$s" >/dev/null; done
}

# waits for every background job but the sampler
wait_pgbench_jobs() {
  local j
  for j in $(jobs -p); do [[ $j == "$1" ]] || wait "$j" || true; done
}

fs_wait_one() {
  local t0
  t0=$(date +%s%N)
  fsq "$1" -c "SELECT flownode.wait_for_publishers('$2', timeout => '30 minutes')" >/dev/null
  fs_since "$t0"
}

# the rate reached and the freshness percentiles (see the top of this file)
fs_fresh_figures() {
  local s rows span
  : >"$RAW/fs_spans.tsv"
  for s in PA PB; do
    read -r rows span < <(fsq "$s" -F ' ' -c "SELECT count(*), extract(epoch FROM max(ts) - min(ts)) FROM fr_metrics")
    rec servers fresh rows "$s" 1 "$rows"
    rec servers fresh span "$s" 1 "$span"
    fsq "$s" -F $'\t' -c "SELECT extract(epoch FROM min(ts)) + 3, extract(epoch FROM max(ts)) FROM fr_metrics" >>"$RAW/fs_spans.tsv"
  done
  fsq FS -F $'\t' -c "SELECT shard, extract(epoch FROM t), extract(epoch FROM hi) FROM fr_samples WHERE shard > 0 AND hi IS NOT NULL ORDER BY shard, t" >"$RAW/fs_samples.tsv"
  python3 - "$RAW/fs_samples.tsv" "$RAW/fs_spans.tsv" >>"$RAW/measurements.tsv" <<'PY'
import bisect, sys
samples = {}
for line in open(sys.argv[1]):
    shard, t, hi = line.split("\t")
    samples.setdefault(int(shard), []).append((float(t), float(hi)))
spans = [tuple(map(float, l.split("\t"))) for l in open(sys.argv[2]) if l.strip()]
fresh = []
for shard, (lo, hi_end) in zip((1, 2), spans):
    ss = samples.get(shard, [])
    # the newest stamp only grows: the first sample holding stamp s is a bisection
    his = [h for _, h in ss]
    for i in range(max(0, int((hi_end - lo) * 1000))):
        s = lo + i / 1000
        k = bisect.bisect_left(his, s)
        if k < len(ss):
            fresh.append(ss[k][0] - s)
fresh.sort()
if fresh:
    for p in (50, 99):
        print(f"servers\tfresh\tp{p}\t-\t1\t{fresh[min(len(fresh) - 1, len(fresh) * p // 100)]:.3f}")
    print(f"servers\tfresh\tmax\t-\t1\t{fresh[-1]:.3f}")
PY
}

# 3. a new flow server catching up
fs_catchup() {
  local s shard t0 secs diff k
  for s in PA PB; do
    shard=1
    [[ $s == PB ]] && shard=2
    fs_table "$s" cu_metrics
    fsq "$s" -c "INSERT INTO cu_metrics SELECT $shard, g % 100, timestamptz '2024-01-01' + g * interval '1 second', g % 1000 FROM generate_series(1, $((FS_CATCHUP_ROWS / 2))) g; CREATE PUBLICATION cu_pub FOR TABLE cu_metrics" >/dev/null
  done
  fs_cluster FS2
  fsq FS2 -c "CREATE EXTENSION flownode" >/dev/null
  fs_table FS2 cu_metrics
  fs_flows FS2 cu_metrics NULL
  t0=$(date +%s%N)
  for s in PA PB; do
    fsq FS2 -c "CREATE SUBSCRIPTION cu_sub_$s CONNECTION '$(fs_conninfo "$s")' PUBLICATION cu_pub" >/dev/null
  done
  fs_wait FS2 cu_metrics >/dev/null
  secs=$(fs_since "$t0")
  rec servers catchup seconds - 1 "$secs"
  rec servers catchup rows - 1 "$(fsq FS2 -c 'SELECT count(*) FROM cu_metrics')"
  diff=0
  local q=("SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, shard, count(*) AS n, sum(v) AS total, max(ts) AS hi FROM cu_metrics GROUP BY 1, 2"
    "SELECT date_trunc('hour', ts) AS hour, device, count(*) AS n, max(v) AS hi FROM cu_metrics GROUP BY 1, 2")
  for ((k = 1; k <= FS_FLOWS; k++)); do
    diff=$((diff + $(fsq FS2 -c "SELECT count(*) FROM ((TABLE cu_metrics_s$k EXCEPT ALL ${q[$(((k - 1) % 2))]}) UNION ALL (${q[$(((k - 1) % 2))]} EXCEPT ALL TABLE cu_metrics_s$k)) d")))
  done
  rec servers catchup diff - 1 "$diff"
}

bench_servers() {
  section_start "flow servers: primary cost per row ($FS_COST_ROWS rows x $FS_COST_ROUNDS), freshness at $FS_RATE rows/s for ${FS_SECONDS}s over two primaries, catch-up of $FS_CATCHUP_ROWS rows"
  fs_cluster PA
  fs_cluster PB
  fs_cluster FS
  fsq PA -c "CREATE EXTENSION flownode" >/dev/null # the flows-on-the-primary case only
  fsq FS -c "CREATE EXTENSION flownode" >/dev/null
  fs_cost
  log "  freshness"
  fs_fresh
  log "  catch-up"
  fs_catchup
  fs_cleanup
  section_end servers
}
