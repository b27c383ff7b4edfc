# shellcheck shell=bash
# ---- key marks: late rows refresh only the groups they touched ----------
# Sourced by run.sh (section "granular"); uses its helpers (sql, rec, section_*,
# wait_active, log, $FB, $CONN, $RAW, $RESULTS, $MODE). Writes $RESULTS/granular.md.
#
# A daily flow per device (date_trunc('day', ts), dev, avg, max, count) over GR_DEVS
# devices, one row per device per minute (GR_DEVS * 1,440 rows a day), two days, an
# index on (dev, ts) for the hand-written floor and one on (flownode.key_hash(dev), ts)
# for the key marks' refresh; eval_interval 1 day, so only flush_flow refreshes. Each
# round, timed: one late row for one device into the first day, then flush_flow (a
# key mark: that device's day recomputed), against the hand-written upsert of that
# device's day into a copy of the sink (the floor); 1,000 late rows over 100 devices,
# flush_flow against the floor's upsert of those 100 devices' day; and one late row
# with key marks off (flownode.key_marks_per_window = 0 in the writer: the whole day
# recomputed), as without them. The flow and the writers use the default budget
# (128 groups per window): the 100 devices of one transaction stay under it.
# Then, over GR_KROUNDS rounds: a late row for a device no row had before, then its
# delete (its group vanishes from the sink), each flushed, against the floor's upsert
# of another new device's day and its delete of that group once its row is gone.
# The sink is compared with the query at the end.
#
# Then the same day with ten times the keys (GR_KDEVS devices, one row per device per
# 10 minutes: the same rows a day): one late row for one device, flush_flow against
# the floor's upsert of that device's day, over GR_KROUNDS rounds (a few ms each, so
# many, against the noise of a shared machine); the floor's device is flushed after
# each round, untimed, so that each timed flush recomputes its own device alone.

if [[ $MODE == full ]]; then
  GR_DEVS=2000   # 2.88M rows a day
  GR_KDEVS=20000 # 2.88M rows a day, a row per device per 10 minutes
  GR_ROUNDS=5
  GR_KROUNDS=21 # a few ms each: many, against the noise of a shared machine
else
  GR_DEVS=500   # 720,000 rows a day
  GR_KDEVS=5000 # 720,000 rows a day
  GR_ROUNDS=3
  GR_KROUNDS=11
fi
SIZE_VARS+=" GR_DEVS GR_KDEVS GR_ROUNDS GR_KROUNDS"

gr_query="SELECT date_trunc('day', ts) AS day, dev, avg(v) AS av, max(v) AS mx, count(*) AS n FROM gr_src GROUP BY 1, 2"

# the floor: the same groups upserted by hand (FILTER: which devices of the first day)
gr_floor() {
  echo "INSERT INTO gr_floor SELECT date_trunc('day', ts), dev, avg(v), max(v), count(*) FROM gr_src WHERE $1 AND ts >= '2024-01-01' AND ts < '2024-01-02' GROUP BY 1, 2 ON CONFLICT (day, dev) DO UPDATE SET av = EXCLUDED.av, mx = EXCLUDED.mx, n = EXCLUDED.n;"
}

# gr_setup DEVICES MINUTES: two days of a row per device every MINUTES, the flow, the floor
gr_setup() {
  sql >/dev/null <<EOF
SET client_min_messages = warning;
SET timezone = 'UTC';
CREATE TABLE gr_src (ts timestamptz NOT NULL, dev int NOT NULL, v float8 NOT NULL) WITH (autovacuum_enabled = off);
INSERT INTO gr_src SELECT timestamptz '2024-01-01 00:00:00+00' + m * interval '$2 minutes', d, (m * 7 + d) % 1000
  FROM generate_series(0, 2 * 1440 / $2 - 1) m, generate_series(0, $1 - 1) d;
CREATE INDEX ON gr_src (ts);
CREATE INDEX ON gr_src (dev, ts);
CREATE INDEX ON gr_src (flownode.key_hash(dev), ts);
VACUUM ANALYZE gr_src;
SELECT flownode.create_flow('gr_flow', 'gr_sink', \$q\$$gr_query\$q\$, eval_interval => '1 day');
CREATE TABLE gr_floor AS SELECT * FROM gr_sink;
ALTER TABLE gr_floor ADD PRIMARY KEY (day, dev);
VACUUM ANALYZE gr_sink, gr_floor;
CHECKPOINT;
EOF
  wait_active gr_src 1
}

# gr_late_round PREFIX ROUND DEVICE TIME: one late row for DEVICE, flush_flow timed
# (PREFIXflush1_ROUND), against the floor's upsert of DEVICE + 1's day after its own
# late row (PREFIXfloor1_ROUND); that row flushed untimed, so that the next timed
# flush recomputes its own device alone
gr_late_round() {
  echo "INSERT INTO gr_src VALUES ('$4', $3, 1.5);"
  echo "@${1}flush1_$2 SELECT flownode.flush_flow('gr_flow');"
  echo "INSERT INTO gr_src VALUES ('$4', $(($3 + 1)), 1.5);"
  echo "@${1}floor1_$2 $(gr_floor "dev = $(($3 + 1))")"
  echo "SELECT flownode.flush_flow('gr_flow');"
}

gr_drop() {
  sql -c "SELECT flownode.drop_flow('gr_flow')" >/dev/null
  sql -c "SET client_min_messages = warning; DROP TABLE gr_src, gr_sink, gr_floor" >/dev/null
}

bench_granular() {
  local r d lo k f
  section_start "22 key marks: a daily flow over $GR_DEVS and $GR_KDEVS devices ($((GR_DEVS * 1440)) rows a day): late rows for 1 and 100 devices"
  gr_setup "$GR_DEVS" 1
  {
    echo "SELECT flownode.flush_flow('gr_flow');"
    for ((r = 1; r <= GR_ROUNDS; r++)); do
      d=$((r * 7 % GR_DEVS))
      echo "INSERT INTO gr_src VALUES ('2024-01-01 12:00:30+00', $d, 1.5);"
      echo "@flush1_$r SELECT flownode.flush_flow('gr_flow');"
      echo "INSERT INTO gr_src VALUES ('2024-01-01 12:00:30+00', $((d + 1)), 1.5);"
      echo "@floor1_$r $(gr_floor "dev = $((d + 1))")"
      lo=$(((r * 100) % (GR_DEVS - 200)))
      echo "INSERT INTO gr_src SELECT '2024-01-01 06:00:15+00'::timestamptz + j * interval '1 second', $lo + j % 100, j FROM generate_series(1, 1000) j;"
      echo "@flush1000_$r SELECT flownode.flush_flow('gr_flow');"
      echo "INSERT INTO gr_src SELECT '2024-01-01 06:00:15+00'::timestamptz + j * interval '1 second', $lo + 100 + j % 100, j FROM generate_series(1, 1000) j;"
      echo "@floor1000_$r $(gr_floor "dev >= $((lo + 100)) AND dev < $((lo + 200))")"
      echo "SET flownode.key_marks_per_window = 0;"
      echo "INSERT INTO gr_src VALUES ('2024-01-01 13:00:30+00', $d, 2.5);"
      echo "RESET flownode.key_marks_per_window;"
      echo "@whole1_$r SELECT flownode.flush_flow('gr_flow');"
    done
    for ((r = 1; r <= GR_KROUNDS; r++)); do
      # more rounds of one late row (a few ms each, against the noise), the floor's
      # device flushed untimed so that each timed flush recomputes its own device alone
      gr_late_round "" "k$r" $((r * 13 % (GR_DEVS - 1))) '2024-01-01 15:00:30+00'
      # a key no row had before, then its one row deleted (the group vanishes), against
      # the floor's upsert of a new device's day and its delete of the vanished group
      k=$((GR_DEVS + r))
      f=$((GR_DEVS + 100 + r))
      echo "INSERT INTO gr_src VALUES ('2024-01-01 14:00:30+00', $k, 3.5);"
      echo "@newkey_$r SELECT flownode.flush_flow('gr_flow');"
      echo "INSERT INTO gr_src VALUES ('2024-01-01 14:00:30+00', $f, 3.5);"
      echo "@floornew_$r $(gr_floor "dev = $f")"
      echo "SELECT flownode.flush_flow('gr_flow');" # untimed: the floor's device, off the next timed flush
      echo "DELETE FROM gr_src WHERE dev = $k AND ts = '2024-01-01 14:00:30+00';"
      echo "@gone_$r SELECT flownode.flush_flow('gr_flow');"
      echo "DELETE FROM gr_src WHERE dev = $f AND ts = '2024-01-01 14:00:30+00';"
      echo "@floorgone_$r DELETE FROM gr_floor WHERE day = '2024-01-01' AND dev = $f AND NOT EXISTS (SELECT FROM gr_src WHERE dev = $f AND ts >= '2024-01-01' AND ts < '2024-01-02');"
      echo "SELECT flownode.flush_flow('gr_flow');" # untimed, as above
    done
    echo "=diff_0 SELECT count(*) FROM ((SELECT * FROM gr_sink EXCEPT ALL ($gr_query)) UNION ALL (($gr_query) EXCEPT ALL SELECT * FROM gr_sink)) d"
  } | "$FB" sql "$CONN" >"$RAW/granular.tsv"
  gr_drop
  # ten times the keys, the same rows a day: one late row for 1 of GR_KDEVS devices
  gr_setup "$GR_KDEVS" 10
  {
    echo "SELECT flownode.flush_flow('gr_flow');"
    for ((r = 1; r <= GR_KROUNDS; r++)); do
      gr_late_round k "$r" $((r * 7919 % (GR_KDEVS - 1))) '2024-01-01 12:00:30+00'
    done
    echo "=kdiff_0 SELECT count(*) FROM ((SELECT * FROM gr_sink EXCEPT ALL ($gr_query)) UNION ALL (($gr_query) EXCEPT ALL SELECT * FROM gr_sink)) d"
  } | "$FB" sql "$CONN" >>"$RAW/granular.tsv"
  gr_drop
  awk -F'\t' '{split($1, a, "_"); print "granular\t" a[1] "\t-\t-\t" a[2] "\t" $2}' "$RAW/granular.tsv" >>"$RAW/measurements.tsv"
  gr_report >"$RESULTS/granular.md"
  cat "$RESULTS/granular.md" >&2
  section_end granular
}

# The medians of each kind and the ratios against the floor, as markdown.
gr_report() {
  awk -F'\t' -v devs="$GR_DEVS" -v kdevs="$GR_KDEVS" '
    { split($1, a, "_"); v[a[1]] = v[a[1]] " " $2 }
    function median(s,   n, x, i, j, t) {
      n = split(s, x, " ")
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] + 0 < x[i] + 0) { t = x[i]; x[i] = x[j]; x[j] = t }
      return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
    }
    END {
      printf "# Key marks: late rows refresh only the groups they touched\n\n"
      printf "A daily flow over %d devices, a row per device per minute (%d rows a day), and over %d devices, a row per device per 10 minutes (%d rows a day); medians of the rounds (ms).\n\n", devs, devs * 1440, kdevs, kdevs * 144
      printf "| measurement | flush_flow | hand-written floor | ratio | target |\n|---|---|---|---|---|\n"
      printf "| one late row for 1 of %d devices | %.2f | %.2f | %.2fx | 1.5x |\n", devs, median(v["flush1"]), median(v["floor1"]), median(v["flush1"]) / median(v["floor1"])
      printf "| 1,000 late rows over 100 devices | %.2f | %.2f | %.2fx | 1.5x |\n", median(v["flush1000"]), median(v["floor1000"]), median(v["flush1000"]) / median(v["floor1000"])
      printf "| a late row for a device no row had (1 of %d) | %.2f | %.2f | %.2fx | the cost of one late row: %.2fx |\n", devs, median(v["newkey"]), median(v["floornew"]), median(v["newkey"]) / median(v["floornew"]), median(v["newkey"]) / median(v["flush1"])
      printf "| the delete of a device'"'"'s last row of the day | %.2f | %.2f | %.2fx | the cost of one late row: %.2fx |\n", median(v["gone"]), median(v["floorgone"]), median(v["gone"]) / median(v["floorgone"]), median(v["gone"]) / median(v["flush1"])
      printf "| one late row, key marks off (whole day) | %.2f | %.2f | %.2fx | - |\n", median(v["whole1"]), median(v["floor1"]), median(v["whole1"]) / median(v["floor1"])
      printf "| one late row for 1 of %d devices | %.2f | %.2f | %.2fx | 1.5x |\n", kdevs, median(v["kflush1"]), median(v["kfloor1"]), median(v["kflush1"]) / median(v["kfloor1"])
      printf "\nsink against the query: %s rows differ (%d devices), %s (%d devices)\n", v["diff"], devs, v["kdiff"], kdevs
      printf "\nA new key and a vanished one cost what a late row for a known key does (target: at most 1.5x); against their floors, a hand-written upsert of one row and a DELETE of one, flush_flow pays its fixed cost (the request to the worker, its transaction: under a millisecond).\n"
    }' "$RAW/granular.tsv"
}
