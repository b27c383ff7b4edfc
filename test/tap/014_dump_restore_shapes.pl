# pg_dump and pg_restore keep the flows of the other shapes (docs/operations.md, "Backup and restore"):
#   - a sliding filter on now() (a flow with a clock, flownode.flow_clock): the clock
#     comes back with the flow, so the restored worker marks from it and the rows that
#     left the filter since the dump leave the sink (without the clock in the dump the
#     restored flow compared nothing with now() any more: those rows stayed in the
#     sink, silently);
#   - GreptimeDB's flows (flownode.execute): dialect, options and SHOW CREATE FLOW
#     come back as they were;
#   - a flow waiting for its source (defer_on_missing_source): it comes back waiting,
#     and starts when its source is created in the restored database;
#   - a partitioned source: the restored flow's triggers are on every partition, a
#     write straight into a partition and a partition created later are marked;
#   - a paused flow comes back paused, with its pending windows, and catches up when
#     resumed;
#   - a flow joining a dimension table: its dimension is found again from the query
#     when the flow is bound, with its triggers, so a write to the dimension after the
#     restore reaches the sink (without it the sink kept the old region, silently);
#   - a flow joining a view over two tables: the tables under the view are found
#     again from the view's query when the flow is bound, with their triggers, so a
#     write to one of them after the restore reaches the sink;
#   - time_bucket windows (months in a zone with an offset) and date_bin in a zone:
#     their window kind, zone and offset come back, and stay exact across a DST change.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

# fn_sink_diff's query, for polling
sub fn_sink_diff_sql
{
	my ($sink, $query) = @_;
	return "SELECT (SELECT count(*) FROM (TABLE $sink EXCEPT ALL ($query)) a)"
	  . " + (SELECT count(*) FROM (($query) EXCEPT ALL TABLE $sink) b)";
}

my $node = fn_node('dump_shapes', 'max_worker_processes = 32');
my $dir = PostgreSQL::Test::Utils::tempdir;

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', q{
CREATE EXTENSION flownode;
-- a sliding filter: the rows of the last two minutes, by 10 seconds
CREATE TABLE ev (id int PRIMARY KEY, ts timestamptz NOT NULL, v int);
CREATE INDEX ON ev (ts);
INSERT INTO ev SELECT i, date_trunc('second', now()) + i * interval '1 second', i
  FROM generate_series(-300, 60) i;
SELECT flownode.create_flow('recent', 'recent',
  $q$SELECT date_bin('10 seconds', ts, timestamptz '2000-01-01') AS w, count(*) AS n, sum(v) AS s
       FROM ev WHERE ts > now() - interval '2 minutes' GROUP BY 1$q$,
  eval_interval => '1 second');
-- GreptimeDB's flow, with a comment and an option
CREATE TABLE temp_sensor_data (sensor_id int, loc text, temperature double precision,
                               ts timestamp NOT NULL);
INSERT INTO temp_sensor_data VALUES (1, 'room1', 98.5, '2022-01-01 00:00:00'),
  (1, 'room1', 101.5, '2022-01-01 00:00:12'), (2, 'room2', 102.5, '2022-01-01 00:00:13');
SELECT * FROM flownode.execute($$
CREATE FLOW temp_monitoring
SINK TO temp_alerts
EVAL INTERVAL '1 hour'
COMMENT 'hot rooms'
AS
SELECT sensor_id, loc, max(temperature) AS max_temp, date_bin('10 seconds'::INTERVAL, ts) AS time_window
FROM temp_sensor_data
GROUP BY sensor_id, loc, time_window
HAVING max_temp > 100;
$$);
-- a flow waiting for its source
SELECT * FROM flownode.execute($$
CREATE FLOW later_flow
SINK TO later_sink
EVAL INTERVAL '1 hour'
WITH (defer_on_missing_source = true)
AS SELECT date_bin('1 minute'::INTERVAL, ts) AS m, count(*) AS n FROM later_src GROUP BY m;
$$);
-- a partitioned source
CREATE TABLE m (ts timestamptz NOT NULL, v int) PARTITION BY RANGE (ts);
CREATE TABLE m_1 PARTITION OF m FOR VALUES FROM ('2024-01-01') TO ('2024-01-02');
CREATE TABLE m_2 PARTITION OF m FOR VALUES FROM ('2024-01-02') TO ('2024-01-03');
CREATE TABLE m_def PARTITION OF m DEFAULT;
CREATE INDEX ON m (ts);
INSERT INTO m SELECT timestamptz '2024-01-01' + i * interval '7 minutes', i FROM generate_series(0, 700) i;
SELECT flownode.create_flow('m_hourly', 'm_hourly',
  $q$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, count(*) AS n, sum(v) AS s
       FROM m GROUP BY 1$q$, eval_interval => '1 hour');
SELECT flownode.create_flow('m_daily', 'm_daily',
  $q$SELECT date_trunc('day', ts, 'UTC') AS d, count(*) AS n FROM m GROUP BY 1$q$, eval_interval => '1 second');
SELECT flownode.pause_flow('m_daily');
-- a dimension join
CREATE TABLE hosts (host text PRIMARY KEY, region text);
CREATE TABLE cpu (ts timestamptz NOT NULL, host text, v int);
CREATE INDEX ON cpu (ts);
CREATE INDEX ON cpu (host);
INSERT INTO hosts VALUES ('a', 'us'), ('b', 'eu'), ('c', 'ap');
INSERT INTO cpu SELECT timestamptz '2024-01-01' + i * interval '1 minute', chr(97 + i % 3), i
  FROM generate_series(0, 299) i;
SELECT flownode.create_flow('by_region', 'by_region',
  $q$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, hosts.region, count(*) AS n, sum(v) AS s
       FROM cpu JOIN hosts USING (host) GROUP BY 1, 2$q$, eval_interval => '1 hour');
-- a view over two tables as a dimension
CREATE TABLE zones (region text PRIMARY KEY, zone text);
INSERT INTO zones VALUES ('us', 'west'), ('eu', 'east'), ('ap', 'east');
CREATE VIEW host_zone AS SELECT h.host, z.zone FROM hosts h JOIN zones z USING (region);
SELECT flownode.create_flow('by_zone', 'by_zone',
  $q$SELECT date_bin('1 hour', c.ts, timestamptz '2000-01-01') AS h, v.zone, count(*) AS n
       FROM cpu c JOIN host_zone v ON v.host = c.host GROUP BY 1, 2$q$, eval_interval => '1 hour');
-- time_bucket windows: months in a zone with an offset, and date_bin in a zone
CREATE TABLE tz_ev (ts timestamptz NOT NULL, v int);
CREATE INDEX ON tz_ev (ts);
INSERT INTO tz_ev SELECT timestamptz '2024-10-01 00:00+00' + i * interval '7 minutes', i
  FROM generate_series(0, 9999) i;
SELECT flownode.create_flow('tb_month', 'tb_month',
  $q$SELECT flownode.time_bucket('1 month', ts, 'America/New_York', "offset" => '6 hours') AS m,
            count(*) AS n, sum(v) AS s FROM tz_ev GROUP BY 1$q$);
SELECT flownode.create_flow('zoned_15m', 'zoned_15m',
  $q$SELECT date_bin('15 minutes', ts AT TIME ZONE 'America/New_York', timestamp '2000-01-01')
              AT TIME ZONE 'America/New_York' AS b, count(*) AS n FROM tz_ev GROUP BY 1$q$);
});
ok(fn_wait_worker($node, 'src', $_), "worker of $_ runs") for qw(recent temp_monitoring m_hourly m_daily);
# pending at dump time
$node->safe_psql('src', q{
INSERT INTO temp_sensor_data VALUES (3, 'room3', 150, '2022-01-01 00:00:14');
INSERT INTO m VALUES ('2024-01-01 03:03', 1000), ('2024-05-05', 5);
DELETE FROM m WHERE ts < '2024-01-01 00:30';
});
$node->safe_psql('src', "SELECT flownode.flush_flow('recent')");

# The sink of 'recent' against its query at the flow's clock, in one snapshot.
my $clock_diff = q{
BEGIN ISOLATION LEVEL REPEATABLE READ;
WITH c AS (SELECT evaluated_at AS t FROM flownode.flow_clock),
     q AS (SELECT date_bin('10 seconds', ts, timestamptz '2000-01-01') AS w, count(*) AS n, sum(v) AS s
             FROM ev, c WHERE ts > c.t - interval '2 minutes' GROUP BY 1)
SELECT (SELECT count(*) FROM (TABLE recent EXCEPT ALL TABLE q) a)
     + (SELECT count(*) FROM (TABLE q EXCEPT ALL TABLE recent) b);
COMMIT;
};
my $temp_query = q{SELECT sensor_id, loc, max(temperature) AS max_temp,
  date_bin('10 seconds'::interval, ts, timestamp '1970-01-01') AS time_window
  FROM temp_sensor_data GROUP BY 1, 2, 4 HAVING max(temperature) > 100};
my $daily_query = q{SELECT date_trunc('day', ts, 'UTC') AS d, count(*) AS n FROM m GROUP BY 1};
my $m_query = q{SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, count(*) AS n, sum(v) AS s
  FROM m GROUP BY 1};

my $catalog_sql = q{SELECT flow_id, flow_name, source_table, sink_table, dialect, options, comment,
  eval_interval, sink_name, search_path, user_query, created_at, updated_at FROM flownode.flow ORDER BY flow_id};
my $catalog = $node->safe_psql('src', $catalog_sql);
my $show = $node->safe_psql('src', q{SELECT flownode.execute('SHOW CREATE FLOW temp_monitoring')});
cmp_ok(fn_sink_diff($node, 'src', 'm_hourly', $m_query), '>', 0, 'src: m_hourly has windows pending at dump time');
cmp_ok(fn_sink_diff($node, 'src', 'm_daily', $daily_query), '>', 0, 'src: m_daily, paused, has windows pending at dump time');

$node->command_ok([ 'pg_dump', '-Fc', '-f', "$dir/shapes.fc", '-d', $node->connstr('src') ], 'pg_dump -Fc');
$node->safe_psql('postgres', 'CREATE DATABASE r');
$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', $node->connstr('r'), "$dir/shapes.fc" ],
	'pg_restore');

is($node->safe_psql('r', $catalog_sql), $catalog,
	'every flow is back as it was: tables, dialect, options, comment, waiting sink and search_path, times');
is($node->safe_psql('r', q{SELECT flownode.execute('SHOW CREATE FLOW temp_monitoring')}),
	$show, 'SHOW CREATE FLOW shows the same statement');
is( $node->safe_psql('r',
		q{SELECT string_agg(format('%s:%s:%s', flow_name, state, marking_enabled), ',' ORDER BY flow_name)
            FROM flownode.flows WHERE state NOT IN ('active', 'waiting_for_worker')}),
	'later_flow:waiting_for_source:f,m_daily:paused:t',
	'the waiting flow waits for its source, the paused one is paused, the others run');
ok(fn_wait_worker($node, 'r', $_), "r: worker of $_ runs") for qw(recent temp_monitoring m_hourly m_daily);

# the clock: rows leave the filter while time passes; the restored worker marks from
# the clock it was dumped with
is($node->safe_psql('r', 'SELECT count(*) FROM flownode.flow_clock'), '1', 'the flow\'s clock is back');
my $recent_rows = $node->safe_psql('r', 'SELECT sum(n) FROM recent');
sleep 4;
ok(fn_poll($node, 'r', $clock_diff, '0', 30),
	'without a flush, the restored sink is the query at the clock as the clock moves');
cmp_ok($node->safe_psql('r', 'SELECT sum(n) FROM recent'), '<', $recent_rows,
	'rows that left the filter after the restore left the restored sink');

# GreptimeDB's flow and the partitioned source: one flush, then exact
$node->safe_psql('r', q{SELECT flownode.execute($$ADMIN FLUSH_FLOW('temp_monitoring')$$)});
is(fn_sink_diff($node, 'r', 'temp_alerts', $temp_query), '0', 'temp_monitoring: exact after ADMIN FLUSH_FLOW');
$node->safe_psql('r', "SELECT flownode.flush_flow('m_hourly')");
is(fn_sink_diff($node, 'r', 'm_hourly', $m_query), '0', 'm_hourly: exact after one flush');
is( $node->safe_psql('r',
		q{SELECT string_agg(c.relname || ':' || EXISTS (SELECT FROM pg_trigger t
            WHERE t.tgrelid = c.oid AND t.tgfoid = 'flownode.mark_insert()'::regprocedure), ',' ORDER BY c.relname)
            FROM pg_partition_tree('m') p JOIN pg_class c ON c.oid = p.relid WHERE p.isleaf}),
	'm_1:true,m_2:true,m_def:true', 'every partition of the restored source has the marking triggers');
$node->safe_psql('r', q{
INSERT INTO m_1 VALUES ('2024-01-01 05:05', 77);
UPDATE m_2 SET v = v + 1 WHERE ts < '2024-01-02 01:00';
CREATE TABLE m_3 PARTITION OF m FOR VALUES FROM ('2024-01-05') TO ('2024-01-06');
INSERT INTO m VALUES ('2024-01-05 10:00', 3);
});
$node->safe_psql('r', "SELECT flownode.flush_flow('m_hourly')");
is(fn_sink_diff($node, 'r', 'm_hourly', $m_query), '0',
	'm_hourly: writes into partitions, a new one included, are marked');

# the paused flow: still behind while paused, caught up (without a flush) once resumed
sleep 2;
cmp_ok(fn_sink_diff($node, 'r', 'm_daily', $daily_query), '>', 0, 'm_daily stays behind while paused');
$node->safe_psql('r', "SELECT flownode.resume_flow('m_daily')");
ok(fn_poll($node, 'r', "SELECT (" . fn_sink_diff_sql('m_daily', $daily_query) . ") = 0", 't', 30),
	'm_daily catches up once resumed');

# A restored flow that joins: its worker runs, the table written has the dimension
# triggers again, and the write after the restore reaches the sink.
sub dimension_after_restore
{
	my ($flow, $table, $write, $query, $what) = @_;
	ok(fn_wait_worker($node, 'r', $flow), "r: worker of $flow runs");
	is( $node->safe_psql('r',
			qq{SELECT count(*) > 0 FROM pg_trigger WHERE tgrelid = '$table'::regclass
            AND tgfoid = 'flownode.mark_dimension()'::regprocedure}),
		't', "$flow: the restored table $table has its triggers");
	$node->safe_psql('r', $write);
	$node->safe_psql('r', "SELECT flownode.flush_flow('$flow')");
	is(fn_sink_diff($node, 'r', $flow, $query), '0', "$flow: $what after the restore reaches the sink");
}

# the dimension join: a host moves to another region after the restore
dimension_after_restore('by_region', 'hosts', q{UPDATE hosts SET region = 'sa' WHERE host = 'b'},
	q{SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, hosts.region,
  count(*) AS n, sum(v) AS s FROM cpu JOIN hosts USING (host) GROUP BY 1, 2}, 'a write to its dimension');
# the view dimension: a zone renamed (a write to a table under the view)
dimension_after_restore('by_zone', 'zones', q{UPDATE zones SET zone = 'south' WHERE region = 'ap'},
	q{SELECT date_bin('1 hour', c.ts, timestamptz '2000-01-01') AS h, v.zone, count(*) AS n
  FROM cpu c JOIN host_zone v ON v.host = c.host GROUP BY 1, 2}, 'a write to a table under its view');

# time_bucket windows come back as they were: a row in New York's repeated hour
# after the restore reaches both sinks
my %tz_query = (
	tb_month => q{SELECT flownode.time_bucket('1 month', ts, 'America/New_York', "offset" => '6 hours') AS m,
            count(*) AS n, sum(v) AS s FROM tz_ev GROUP BY 1},
	zoned_15m => q{SELECT date_bin('15 minutes', ts AT TIME ZONE 'America/New_York', timestamp '2000-01-01')
              AT TIME ZONE 'America/New_York' AS b, count(*) AS n FROM tz_ev GROUP BY 1});
$node->safe_psql('r', q{INSERT INTO tz_ev VALUES ('2024-11-03 01:20-04', 1000), ('2024-11-03 01:05-05', 1001)});
for my $f (sort keys %tz_query)
{
	$node->safe_psql('r', "SELECT flownode.flush_flow('$f')");
	is(fn_sink_diff($node, 'r', $f, $tz_query{$f}), '0', "$f: exact after a write and a flush after the restore");
}

# the waiting flow starts when its source is created
$node->safe_psql('r', q{
CREATE TABLE later_src (ts timestamp NOT NULL, x int);
INSERT INTO later_src SELECT timestamp '2024-01-01' + i * interval '20 seconds', i FROM generate_series(0, 99) i;
});
ok(fn_poll($node, 'r', q{SELECT state IN ('active', 'waiting_for_worker') FROM flownode.flows WHERE flow_name = 'later_flow'}),
	'the waiting flow started when its source was created');
ok(fn_wait_worker($node, 'r', 'later_flow'), 'r: worker of later_flow runs');
$node->safe_psql('r', q{SELECT flownode.execute($$ADMIN FLUSH_FLOW('later_flow')$$)});
is( fn_sink_diff(
		$node, 'r', 'later_sink',
		q{SELECT date_bin('1 minute'::interval, ts, timestamp '1970-01-01') AS m, count(*) AS n FROM later_src GROUP BY 1}),
	'0',
	'later_flow: exact after a flush');

$node->stop;
done_testing();
