#!/usr/bin/env bash
# The statements a pool worker keeps per flow (each flow keeps its own
# task, plans included; src/refresh/refresh_plans.c). One worker
# (flownode.max_workers = 1) serves PLANS_FLOWS + PLANS_BEYOND flows; each refresh is one row
# written at now() and flush_flow of its flow, and its cost is the worker's time on
# a CPU for it (/proc/PID/schedstat, in nanoseconds: not the time it waited for a CPU
# on a shared machine), averaged over the PLANS_FLOWS refreshes of a case's run. Three cases, alternated in
# every round (the order rotated):
#   beyond - PLANS_BEYOND flows round-robin, PLANS_FLOWS refreshes per round: more
#            flows than the worker keeps sets for (FN_KEPT_FLOWS), so every
#            refresh analyses and prepares its statements again, as every refresh
#            of a worker serving several flows did with one set per process: the
#            baseline
#   rr     - PLANS_FLOWS other flows round-robin, one refresh each
#   one    - one flow refreshed PLANS_FLOWS times (its statements and its fold
#            stay either way)
# Each source holds PLANS_ROWS rows in today's window, and each refresh adds one
# there: a refresh that keeps the flow's fold (refresh/fold_refresh.c) folds the new
# row into what the older ones aggregated to; one that lost it recomputes the window
# from all of its rows.
# Reports the median per refresh and the ratios to beyond (within each round, the
# median over rounds; the first two rounds, where flows analyse their queries for
# the first time, are left out). PLANS_FLOWS stays small enough that the sets of rr
# and one outlive two rounds of beyond (3 x PLANS_FLOWS + 1 <= FN_KEPT_FLOWS). With one set per process rr costs what beyond does; with a
# set per flow its statements stay prepared.
# Writes results/plans.md. PG_CONFIG picks the installation; FN_BENCH_NO_BUILD=1
# measures what is installed. Run as root on Debian 12.
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../test/common.sh
. "$BENCH/../test/common.sh"
[[ $(id -u) -eq 0 ]] || fn_die "run as root"

N=${PLANS_FLOWS:-8}
BEYOND=${PLANS_BEYOND:-48}
R=${PLANS_ROUNDS:-25}
ROWS=${PLANS_ROWS:-20000} # per source, all of them in today's window
[[ -n ${FN_BENCH_NO_BUILD:-} ]] || fn_build_install

DIR="$(fn_workdir)"
PORT="$(fn_free_port)"
trap 'fn_stop_cluster_quiet "$DIR"; rm -rf "$DIR"' EXIT
fn_start_cluster "$DIR" "$PORT" "flownode.max_workers = 1
flownode.verify_folds = off"
sql() { fn_psql "$DIR" "$PORT" -qtA "$@"; }

{
  echo "SET client_min_messages = warning; CREATE EXTENSION flownode;"
  for k in $(seq 1 $((N + BEYOND))); do
    echo "CREATE TABLE src_$k (ts timestamptz NOT NULL, host text NOT NULL, v int NOT NULL);"
    echo "INSERT INTO src_$k SELECT date_trunc('day', now()) + random() * (now() - date_trunc('day', now())), 'h' || (i % 20), i FROM generate_series(1, $ROWS) i;"
    echo "CREATE INDEX ON src_$k (ts); ANALYZE src_$k;"
    echo "SELECT flownode.create_flow('f$k', 'sink_$k', \$q\$SELECT date_trunc('day', ts) AS d, host, count(*) AS n, sum(v) AS s, min(v) AS lo, max(v) AS hi FROM src_$k GROUP BY 1, 2\$q\$, eval_interval => '1 day');"
  done
} | sql >/dev/null
for _ in $(seq 1 120); do
  [[ $(sql -c "SELECT count(*) FILTER (WHERE worker_pid IS NULL) FROM flownode.flows") == 0 ]] && break
  sleep 1
done

# one refresh of flow k: a row, and the flush (the worker refreshes that flow)
refresh_sql() {
  echo "INSERT INTO src_$1 VALUES (now(), 'h1', 1);"
  echo "SELECT count(*) FROM flownode.flush_flow('f$1');"
}

# the worker's time on a CPU so far, in nanoseconds (the scheduler's own count: the
# time it waited for a CPU on this shared machine is not in it)
WPID=$(sql -c "SELECT min(worker_pid) FROM flownode.flows")
cpu_ns() { cut -d' ' -f1 "/proc/$WPID/schedstat"; }

RAW="$DIR/raw.tsv"
: >"$RAW"
next_beyond=0
for round in $(seq 1 "$R"); do
  cases=(beyond rr one)
  for i in 0 1 2; do
    c=${cases[$(((i + round) % 3))]}
    for j in $(seq 1 "$N"); do
      case $c in
      one) refresh_sql 1 ;;
      rr) refresh_sql "$j" ;;
      beyond)
        refresh_sql $((N + 1 + next_beyond))
        next_beyond=$(((next_beyond + 1) % BEYOND))
        ;;
      esac
    done >"$DIR/case.sql"
    before=$(cpu_ns)
    sql -f "$DIR/case.sql" >/dev/null
    after=$(cpu_ns)
    echo -e "$c\t$round\t$(((after - before) / N / 1000))" >>"$RAW"
  done
done

mkdir -p "$BENCH/results"
python3 - "$RAW" "$N" "$BEYOND" "$R" >"$BENCH/results/plans.md" <<'PY'
import statistics, sys
raw, n, beyond, rounds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
per = {}
for line in open(raw):
    c, r, us = line.split('\t')
    if int(r) > 2:  # two rounds warm up: every flow's first refresh analyses
        per.setdefault(c, {})[int(r)] = int(us)
med = {c: statistics.median(rs.values()) for c, rs in per.items()}
# the ratio within each round, then the median over rounds
def ratio(c):
    return statistics.median(per[c][r] / per['beyond'][r] for r in per['beyond'])
print(f"# Kept statements per flow on one pool worker\n")
print(f"{n} flows round-robin (rr) and one flow (one) against {beyond} other flows round-robin (beyond:")
print(f"more than a worker keeps statements for); {rounds} rounds (the first two left out) of {n} refreshes per case; the worker's CPU time per refresh")
print("(/proc/PID/schedstat), averaged over each run of a case.\n")
print("| case | worker CPU per refresh (median of rounds) | ratio to beyond (median of rounds) |\n|---|---|---|")
for c in ('beyond', 'rr', 'one'):
    print(f"| {c} | {med[c] / 1000:.2f} ms | {ratio(c):.2f}x |")
PY
cat "$BENCH/results/plans.md"
