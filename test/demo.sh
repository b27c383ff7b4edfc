#!/usr/bin/env bash
# flownode demo: builds and installs the extension, starts a throwaway cluster,
# creates the flow of the README's example (eval_interval 1 second), writes to the source
# with INSERT, COPY, UPDATE and DELETE, and waits (without flush_flow) until the
# background worker has brought the sink up to date. Exits non-zero if the sink
# does not converge within 30 seconds. Run as root on Debian 12, from any directory.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. test/common.sh

say() { printf '\n--- %s\n' "$*"; }

fn_install_deps
fn_build_install

DIR="$(fn_workdir)"
PORT="$(fn_free_port)"

# Stop the cluster and remove everything, also on failure (then show the log).
cleanup() {
  local rc=$?
  if ((rc != 0)) && [[ -f "$DIR/server.log" ]]; then
    echo "---- last lines of the server log ----" >&2
    tail -n 40 "$DIR/server.log" >&2
  fi
  fn_stop_cluster_quiet "$DIR"
  rm -rf "$DIR"
  exit "$rc"
}
trap cleanup EXIT

# The flow's query, exactly as in the README's example.
FLOW_QUERY="SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, host,
       avg(usage) AS avg_usage, max(usage) AS max_usage, count(*) AS n
  FROM cpu GROUP BY 1, 2"

# psql against the demo cluster; the flow query is available as :q / :'q'.
sql() { fn_psql "$DIR" "$PORT" -v q="$FLOW_QUERY" "$@"; }

# Number of rows by which the sink and the flow query differ (EXCEPT both ways).
sink_diff() {
  sql -tA <<'SQL'
SELECT count(*) FROM (
  (SELECT minute, host, avg_usage, max_usage, n FROM cpu_1m EXCEPT :q)
  UNION ALL
  (:q EXCEPT SELECT minute, host, avg_usage, max_usage, n FROM cpu_1m)) AS d;
SQL
}

say "Starting a throwaway PostgreSQL 15 cluster in $DIR (port $PORT, flownode preloaded)"
fn_start_cluster "$DIR" "$PORT"

say "Creating the extension and a source table cpu(ts, host, usage) with an index on ts"
sql <<'SQL'
CREATE EXTENSION flownode;
CREATE TABLE cpu (ts timestamptz NOT NULL, host text, usage float8);
CREATE INDEX cpu_ts_idx ON cpu (ts);
SQL

# Usages are multiples of 0.25, so sums (and averages) are exact whatever the
# order of aggregation, and the sink can be compared with the query exactly.
say "Inserting history: 3 hosts, one sample every 10 seconds for 30 minutes"
sql <<'SQL'
INSERT INTO cpu
SELECT timestamptz '2024-01-01 00:00:00+00' + i * interval '10 seconds',
       'host-' || h, ((i * 37 + h * 11) % 400) / 4.0
  FROM generate_series(0, 179) AS i, generate_series(1, 3) AS h;
SELECT count(*) AS source_rows FROM cpu;
SQL

say "Creating flow cpu_1m (per-minute avg/max/count per host) with eval_interval => '1 second':"
echo "$FLOW_QUERY"
sql <<'SQL'
SELECT flownode.create_flow('cpu_1m', 'cpu_1m', :'q', eval_interval => '1 second') AS flow_id;
SQL

say "The sink cpu_1m, filled from the existing data (first 6 of its rows):"
sql <<'SQL'
SELECT count(*) AS sink_rows FROM cpu_1m;
SELECT * FROM cpu_1m ORDER BY minute, host LIMIT 6;
SQL
echo "rows differing between sink and query: $(sink_diff)"

say "Writing to the source: a bulk INSERT (5 new minutes, and more samples in minute 00:10)"
sql <<'SQL'
INSERT INTO cpu
SELECT timestamptz '2024-01-01 00:30:00+00' + i * interval '10 seconds',
       'host-' || h, ((i * 13 + h * 7) % 400) / 4.0
  FROM generate_series(0, 29) AS i, generate_series(1, 3) AS h;
INSERT INTO cpu
SELECT timestamptz '2024-01-01 00:10:05+00' + i * interval '10 seconds', 'host-1', 99.75
  FROM generate_series(0, 5) AS i;
SQL

say "COPY from stdin: samples of a new host, host-9"
sql -c "COPY cpu (ts, host, usage) FROM STDIN WITH (FORMAT csv)" <<'CSV'
2024-01-01 00:15:00+00,host-9,12.5
2024-01-01 00:15:30+00,host-9,50.25
2024-01-01 00:16:00+00,host-9,75
2024-01-01 00:34:50+00,host-9,0.5
CSV

say "UPDATE moving host-1's sample of 00:05:00 to 00:12:00 (two windows change)"
sql -c "UPDATE cpu SET ts = timestamptz '2024-01-01 00:12:00+00', usage = 42.5
         WHERE host = 'host-1' AND ts = timestamptz '2024-01-01 00:05:00+00'"

say "DELETE of all of host-2's samples in minute 00:20 (that sink row must vanish)"
sql -c "DELETE FROM cpu WHERE host = 'host-2'
          AND ts >= timestamptz '2024-01-01 00:20:00+00' AND ts < timestamptz '2024-01-01 00:21:00+00'"

say "Waiting (no flush_flow) for the background worker to catch up (at most 30 s)"
start=$(date +%s%N)
deadline=$((start + 30 * 1000000000))
while :; do
  diff_rows="$(sink_diff)"
  now=$(date +%s%N)
  if [[ "$diff_rows" == 0 ]]; then
    printf 'sink caught up after %d ms\n' $(((now - start) / 1000000))
    break
  fi
  if ((now >= deadline)); then
    echo "FAILED: after 30 s the sink still differs from the query by $diff_rows rows" >&2
    sql -x -c "SELECT * FROM flownode.flows" >&2
    exit 1
  fi
  sleep 0.5
done

say "Some rewritten windows: 00:05 and 00:12 (moved sample), 00:15 (host-9), 00:20 (host-2 gone)"
sql <<'SQL'
SELECT * FROM cpu_1m
 WHERE minute IN ('2024-01-01 00:05:00+00', '2024-01-01 00:12:00+00',
                  '2024-01-01 00:15:00+00', '2024-01-01 00:20:00+00')
 ORDER BY minute, host;
SQL

say "The flow's status in flownode.flows:"
sql -x -c "SELECT * FROM flownode.flows"

say "One more INSERT, then flush_flow: when it returns, the sink is exact"
sql <<'SQL'
INSERT INTO cpu VALUES ('2024-01-01 00:40:00+00', 'host-1', 1.25);
SELECT flownode.flush_flow('cpu_1m') AS windows_refreshed;
SQL
diff_rows="$(sink_diff)"
echo "rows differing between sink and query right after flush_flow: $diff_rows"
[[ "$diff_rows" == 0 ]] || { echo "FAILED: flush_flow returned before the sink was exact" >&2; exit 1; }

say "Dropping the flow (the sink table stays)"
sql <<'SQL'
SELECT flownode.drop_flow('cpu_1m');
SELECT count(*) AS flows FROM flownode.flows;
SELECT count(*) AS sink_rows FROM cpu_1m;
SQL

say "Stopping the cluster"
fn_stop_cluster "$DIR"
echo "demo finished: the sink converged without flush_flow"
