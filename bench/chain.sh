# shellcheck shell=bash
# ---- chains of flows, epoch time columns ---------------
# Sourced by run.sh (section "chain"); uses its helpers (sql, rec, section_*,
# wait_active, $FB, $CONN, $RAW, $MODE). Reported by report_chain.py.
#
# A three-level chain with default settings (no eval_interval: adaptive cadence):
# raw samples -> ch_1m (per minute and host) -> ch_1h -> ch_1d. (a) Full mode only
# (about a minute per level): each round commits CHAIN_BATCH rows at the current
# time and times how long until the daily level equals its query, with no flush.
# (b) After a write of the same size each, flush_flow(top, cascade => true) against
# flushing the three levels by hand, bottom up, alternated.
#
# Epoch time: CHAIN_ROWS samples in a table whose time column is bigint epoch
# milliseconds (windowed by date_bin over to_timestamp(ts_ms / 1000.0)) and the same
# rows in one with a timestamptz column; one late row then flush_flow on each,
# alternated: the refresh filter on the integer column reads through its index as
# the timestamptz one does.

if [[ $MODE == full ]]; then
  CHAIN_ROWS=2000000
  CHAIN_BATCH=10000
  CHAIN_ROUNDS=3
  CHAIN_CONVERGE=2
else
  CHAIN_ROWS=200000
  CHAIN_BATCH=2000
  CHAIN_ROUNDS=2
  CHAIN_CONVERGE=0
fi
SIZE_VARS+=" CHAIN_ROWS CHAIN_BATCH CHAIN_ROUNDS CHAIN_CONVERGE"

# rows in which the daily level and its query differ
chain_top_diff() {
  local q="SELECT date_trunc('day', ts, 'UTC') AS day, host, count(*) AS n, sum(v) AS s FROM ch_raw GROUP BY 1, 2"
  sql -c "SELECT (SELECT count(*) FROM (TABLE ch_1d EXCEPT ALL ($q)) a) + (SELECT count(*) FROM (($q) EXCEPT ALL TABLE ch_1d) b)"
}

chain_insert_sql() {
  echo "INSERT INTO ch_raw SELECT now() - random() * interval '10 seconds', 'h' || (i % 50), 1 FROM generate_series(1, $CHAIN_BATCH) i;"
}

# fnbench's "name_round<TAB>ms" lines into measurements.tsv
chain_rec_timed() {
  awk -F'\t' 'NF >= 2 {split($1, a, "_"); print "chain\t" a[1] "\t-\t-\t" a[2] "\t" $2}' >>"$RAW/measurements.tsv"
}

chain_setup() {
  sql >/dev/null <<'SQL'
SET client_min_messages = warning;
CREATE TABLE ch_raw (ts timestamptz NOT NULL, host text NOT NULL, v bigint NOT NULL);
CREATE INDEX ON ch_raw (ts);
INSERT INTO ch_raw SELECT now() - i * interval '1 second', 'h' || (i % 50), 1 FROM generate_series(1, 100000) i;
SELECT flownode.create_flow('ch_1m', 'ch_1m', $q$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute,
  host, count(*) AS n, sum(v) AS s FROM ch_raw GROUP BY 1, 2$q$);
SELECT flownode.create_flow('ch_1h', 'ch_1h', $q$SELECT date_trunc('hour', minute, 'UTC') AS hour, host,
  sum(n)::bigint AS n, sum(s)::bigint AS s FROM ch_1m GROUP BY 1, 2$q$);
SELECT flownode.create_flow('ch_1d', 'ch_1d', $q$SELECT date_trunc('day', hour, 'UTC') AS day, host,
  sum(n)::bigint AS n, sum(s)::bigint AS s FROM ch_1h GROUP BY 1, 2$q$);
SQL
  wait_active ch_raw 1
}

# (a) from a write's commit to an exact daily level, no flush
chain_converge() {
  local r t0 d
  for ((r = 1; r <= CHAIN_CONVERGE; r++)); do
    chain_insert_sql | sql >/dev/null
    t0=$(date +%s%N)
    d=1
    while [[ $d != 0 ]] && (($(date +%s%N) - t0 < 300000000000)); do
      sleep 0.5
      d=$(chain_top_diff)
    done
    rec chain converge - - "$r" "$((($(date +%s%N) - t0) / 1000000))"
    rec chain converged - - "$r" "$([[ $d == 0 ]] && echo 1 || echo 0)"
  done
}

# (b) the cascading flush against the three flushes by hand
chain_flushes() {
  local r
  for ((r = 1; r <= CHAIN_ROUNDS; r++)); do
    chain_insert_sql
    echo "@cascade_$r SELECT flownode.flush_flow('ch_1d', cascade => true);"
    chain_insert_sql
    echo "@byhand_$r SELECT flownode.flush_flow('ch_1m') + flownode.flush_flow('ch_1h') + flownode.flush_flow('ch_1d');"
  done | "$FB" sql "$CONN" | chain_rec_timed
  rec chain exact - - 0 "$(chain_top_diff)"
}

chain_epoch() {
  local r late
  sql >/dev/null <<SQL
SET client_min_messages = warning;
CREATE TABLE ep_ms (ts_ms bigint NOT NULL, host text NOT NULL, v bigint NOT NULL);
CREATE TABLE ep_tz (ts timestamptz NOT NULL, host text NOT NULL, v bigint NOT NULL);
INSERT INTO ep_ms SELECT 1704067200000 + i * 100, 'h' || (i % 50), i % 7 FROM generate_series(0, $CHAIN_ROWS - 1) i;
INSERT INTO ep_tz SELECT to_timestamp(ts_ms / 1000.0), host, v FROM ep_ms;
CREATE INDEX ON ep_ms (ts_ms);
CREATE INDEX ON ep_tz (ts);
VACUUM ANALYZE ep_ms;
VACUUM ANALYZE ep_tz;
SELECT flownode.create_flow('ep_ms_f', 'ep_ms_s', \$q\$SELECT date_bin('1 minute', to_timestamp(ts_ms / 1000.0),
  timestamptz '2000-01-01') AS minute, host, count(*) AS n, sum(v) AS s FROM ep_ms GROUP BY 1, 2\$q\$, eval_interval => '1 day');
SELECT flownode.create_flow('ep_tz_f', 'ep_tz_s', \$q\$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute,
  host, count(*) AS n, sum(v) AS s FROM ep_tz GROUP BY 1, 2\$q\$, eval_interval => '1 day');
SQL
  for ((r = 1; r <= CHAIN_ROUNDS * 3; r++)); do
    late=$((1704067200000 + (r * 37 % (CHAIN_ROWS / 600)) * 60000 + 5))
    echo "INSERT INTO ep_ms VALUES ($late, 'late', 1);"
    echo "@epms_$r SELECT flownode.flush_flow('ep_ms_f');"
    echo "INSERT INTO ep_tz VALUES (to_timestamp($late / 1000.0), 'late', 1);"
    echo "@eptz_$r SELECT flownode.flush_flow('ep_tz_f');"
  done | "$FB" sql "$CONN" | chain_rec_timed
  sql -c "SET client_min_messages = warning; SELECT flownode.drop_flow('ep_ms_f'), flownode.drop_flow('ep_tz_f'); DROP TABLE ep_ms, ep_tz, ep_ms_s, ep_tz_s" >/dev/null
}

bench_chain() {
  section_start "chain: 1m -> 1h -> 1d with default settings; epoch milliseconds over $CHAIN_ROWS rows"
  chain_setup
  chain_converge
  chain_flushes
  sql -c "SET client_min_messages = warning; SELECT flownode.drop_flow(f) FROM unnest(ARRAY['ch_1d', 'ch_1h', 'ch_1m']) f; DROP TABLE ch_raw, ch_1m, ch_1h, ch_1d" >/dev/null
  chain_epoch
  section_end chain
}
