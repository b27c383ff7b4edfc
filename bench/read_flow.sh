# shellcheck shell=bash
# ---- exact real-time reads (read_flow) ----------------------------
# Sourced by run.sh (section "read"); uses its helpers (sql, rec, rotate, section_*,
# wait_active, $FB, $CONN, $RAW, $MODE). Reported by report_read.py.
#
# One flow (1-minute windows by host) over READ_ROWS rows, eval_interval 1 day: only
# flush_flow refreshes. Each round, from a clean flow: reading the sink (directly
# and through a PL/pgSQL set-returning function, which materializes its rows as read_flow
# does), running the query, and read_flow, whole and over one hour (timed in rotated
# order); then read_flow after late rows committed into 1, 100 and 1,000 windows
# (scattered over the whole table, never refreshed before the read), and over the
# hour that holds the first of them. Each read is `SELECT count(*) FROM ...`, so no
# client transfer is timed. After the 1,000-window read, read_flow is compared with
# the query (it must be equal).

if [[ $MODE == full ]]; then
  READ_ROWS=2000000 # 20,000 windows, 200,000 sink rows
  READ_ROUNDS=5
else
  READ_ROWS=500000
  READ_ROUNDS=2
fi
SIZE_VARS+=" READ_ROWS READ_ROUNDS"

bench_read() {
  local rq nwin r v k k0 hour
  nwin=$((READ_ROWS / 100))
  section_start "read: read_flow over $READ_ROWS rows, $nwin windows; 0, 1, 100 and 1,000 dirty windows"
  rq="SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, host, count(*) AS n, sum(v) AS sum_v, max(v) AS max_v FROM rd_src GROUP BY 1, 2"
  sql >/dev/null <<EOF
SET client_min_messages = warning;
CREATE TABLE rd_src (ts timestamptz NOT NULL, host text NOT NULL, v float8 NOT NULL) WITH (autovacuum_enabled = off);
INSERT INTO rd_src SELECT timestamptz '2024-01-01 00:00:00+00' + i * interval '600 milliseconds',
       'host-' || (i % 10), (i % 400) * 0.25 FROM generate_series(0, $READ_ROWS - 1) i;
CREATE INDEX ON rd_src (ts);
VACUUM ANALYZE rd_src;
SELECT flownode.create_flow('rd_flow', 'rd_sink', \$q\$$rq\$q\$, eval_interval => '1 day');
CREATE FUNCTION rd_sink_srf() RETURNS SETOF rd_sink LANGUAGE plpgsql STABLE AS 'BEGIN RETURN QUERY SELECT * FROM rd_sink; END';
EOF
  wait_active rd_src 1
  sql -c "SELECT flownode.flush_flow('rd_flow')" >/dev/null
  sql -c "VACUUM ANALYZE rd_sink" >/dev/null
  # late_rows R FROM TO: one late row in each of the windows FROM..TO of round R,
  # spread over the table (7919 is prime to the number of windows: all distinct)
  late_rows() {
    echo "INSERT INTO rd_src SELECT timestamptz '2024-01-01 00:00:30+00' + ((j * 7919 + $1 * 131) % $nwin) * interval '1 minute', 'host-3', 1.5 FROM generate_series($2, $3) j;"
  }
  {
    echo "SELECT count(*) FROM rd_sink;" # warm-up (untimed)
    echo "SELECT count(*) FROM flownode.read_flow(NULL::rd_sink);"
    echo "SELECT count(*) FROM ($rq) q;"
    for ((r = 1; r <= READ_ROUNDS; r++)); do
      echo "SELECT flownode.flush_flow('rd_flow');"
      echo "=dirty0_$r SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'rd_flow'"
      # the hour holding the first late row of this round
      hour="timestamptz '2024-01-01 00:00:00+00' + ((7919 + $r * 131) % $nwin / 60) * interval '1 hour'"
      for v in $(rotate "$r" sink srf query read0 sinkhour hour0); do
        case $v in
          sink) echo "@sink_$r SELECT count(*) FROM rd_sink;" ;;
          srf) echo "@srf_$r SELECT count(*) FROM rd_sink_srf();" ;;
          query) echo "@query_$r SELECT count(*) FROM ($rq) q;" ;;
          read0) echo "@read0_$r SELECT count(*) FROM flownode.read_flow(NULL::rd_sink);" ;;
          sinkhour) echo "@sinkhour_$r SELECT count(*) FROM rd_sink WHERE minute >= $hour AND minute < $hour + interval '1 hour';" ;;
          hour0) echo "@hour0_$r SELECT count(*) FROM flownode.read_flow(NULL::rd_sink, $hour, $hour + interval '1 hour');" ;;
        esac
      done
      k0=1
      for k in 1 100 1000; do
        # the windows of the previous step stay dirty: k windows in all
        late_rows "$r" "$k0" "$k"
        k0=$((k + 1))
        echo "=dirty${k}_$r SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'rd_flow'"
        echo "@read${k}_$r SELECT count(*) FROM flownode.read_flow(NULL::rd_sink);"
        if ((k == 1)); then
          echo "@hour1_$r SELECT count(*) FROM flownode.read_flow(NULL::rd_sink, $hour, $hour + interval '1 hour');"
        fi
      done
      echo "=diff_$r SELECT count(*) FROM ((SELECT * FROM flownode.read_flow(NULL::rd_sink) EXCEPT ALL ($rq)) UNION ALL (($rq) EXCEPT ALL SELECT * FROM flownode.read_flow(NULL::rd_sink))) d"
    done
  } | "$FB" sql "$CONN" >"$RAW/read.tsv"
  awk -F'\t' '{split($1, a, "_"); print "read\t" a[1] "\t-\t-\t" a[2] "\t" $2}' "$RAW/read.tsv" >>"$RAW/measurements.tsv"
  sql -c "SELECT flownode.drop_flow('rd_flow')" >/dev/null
  sql -c "SET client_min_messages = warning; DROP FUNCTION rd_sink_srf(); DROP TABLE rd_src, rd_sink" >/dev/null
  section_end read
}
