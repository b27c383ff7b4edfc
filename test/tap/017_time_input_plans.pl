# A flow over a date column or an integer epoch column reads the rows of its windows
# through the column's own index (docs/internals.md §6 "The refresh statement"): the
# refresh's time filter is written on the column, as ranges of its values, never on
# the expression that makes it a timestamp. The refreshes' plans, as auto_explain
# logs them from the workers, show an index condition on each column for each unit,
# and every sink equals its query.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

my $node = fn_node('time_input_plans',
	"shared_preload_libraries = 'flownode,auto_explain'",
	'auto_explain.log_min_duration = 0',
	'auto_explain.log_nested_statements = on',
	'log_min_messages = log');
$node->safe_psql('postgres', q{
CREATE EXTENSION flownode;
SET timezone = 'UTC';
CREATE TABLE ev (ts_s bigint NOT NULL, ts_ms bigint NOT NULL, ts_us bigint NOT NULL, d date NOT NULL,
                 host text NOT NULL, v int NOT NULL);
-- three seconds apart; a day of dates every 100 rows, so that a dirty window is a
-- small part of the table for every unit, dates too
INSERT INTO ev SELECT s, s * 1000 + i % 1000, s * 1000000 + i % 1000000, date '2020-01-01' + i / 100, 'h' || (i % 5), i
  FROM generate_series(0, 199999) i, LATERAL (SELECT 1704067200::bigint + i * 3 AS s) t;
CREATE INDEX ev_s_idx ON ev (ts_s);
CREATE INDEX ev_ms_idx ON ev (ts_ms);
CREATE INDEX ev_us_idx ON ev (ts_us);
CREATE INDEX ev_d_idx ON ev (d);
ANALYZE ev;
-- the windows' refresh and the take's probes are this test's subject: without key
-- marks, the scattered late writes below mark whole windows
SET flownode.key_marks_per_window = 0;
SELECT flownode.create_flow('f_s', 'f_s',
  $q$SELECT date_trunc('hour', to_timestamp(ts_s)) AS w, host, count(*) AS n, sum(v) AS total FROM ev GROUP BY 1, 2$q$,
  eval_interval => '1 hour');
SELECT flownode.create_flow('f_ms', 'f_ms',
  $q$SELECT date_bin('1 minute', to_timestamp(ts_ms / 1000.0), timestamptz '2000-01-01') AS w, host, count(*) AS n
       FROM ev GROUP BY 1, 2$q$,
  eval_interval => '1 hour');
SELECT flownode.create_flow('f_us', 'f_us',
  $q$SELECT date_bin('10 seconds', to_timestamp(ts_us / 1000000.0), timestamptz '2000-01-01') AS w, count(*) AS n
       FROM ev GROUP BY 1$q$,
  eval_interval => '1 hour');
SELECT flownode.create_flow('f_d', 'f_d',
  $q$SELECT date_trunc('day', d) AS w, host, count(*) AS n FROM ev GROUP BY 1, 2$q$,
  eval_interval => '1 hour');
});

my %column = (f_s => 'ts_s', f_ms => 'ts_ms', f_us => 'ts_us', f_d => 'd');
my %index = (f_s => 'ev_s_idx', f_ms => 'ev_ms_idx', f_us => 'ev_us_idx', f_d => 'ev_d_idx');
my %query = (
	f_s => q{SELECT date_trunc('hour', to_timestamp(ts_s)) AS w, host, count(*) AS n, sum(v) AS total FROM ev GROUP BY 1, 2},
	f_ms => q{SELECT date_bin('1 minute', to_timestamp(ts_ms / 1000.0), timestamptz '2000-01-01') AS w, host, count(*) AS n FROM ev GROUP BY 1, 2},
	f_us => q{SELECT date_bin('10 seconds', to_timestamp(ts_us / 1000000.0), timestamptz '2000-01-01') AS w, count(*) AS n FROM ev GROUP BY 1},
	f_d => q{SELECT date_trunc('day', d) AS w, host, count(*) AS n FROM ev GROUP BY 1, 2});

foreach my $flow (sort keys %column)
{
	ok(fn_wait_worker($node, 'postgres', $flow), "the worker of $flow runs");
}

# a few scattered writes: each flow refreshes a few windows
$node->safe_psql('postgres', q{
INSERT INTO ev SELECT s, s * 1000 + 7, s * 1000000 + 7, date '2020-01-01' + k * 300, 'new', 1
  FROM generate_series(1, 5) k, LATERAL (SELECT 1704067200::bigint + k * 100003 AS s) t;
DELETE FROM ev WHERE v % 50000 = 1;
UPDATE ev SET v = v + 1 WHERE v % 40000 = 3;
});
# the log of the refreshes alone (the writes above read the table whole)
my $offset = -s $node->logfile;
foreach my $flow (sort keys %column)
{
	cmp_ok($node->safe_psql('postgres', "SELECT flownode.flush_flow('$flow')"), '>', 0,
		"$flow refreshed its dirty windows");
}
my $log = slurp_file($node->logfile, $offset);
foreach my $flow (sort keys %column)
{
	is(fn_sink_diff($node, 'postgres', $flow, $query{$flow}), '0', "the sink of $flow equals its query");
}
foreach my $flow (sort keys %column)
{
	my ($col, $idx) = ($column{$flow}, $index{$flow});
	# the refresh statement's plan: the source read range by range through the index,
	# the bounds the ranges of the column's own values
	like($log, qr/Index (?:Only )?Scan (?:on|using) \Q$idx\E[^\n]*\n\s+Index Cond: \(\(\Q$col\E >= fn_r\.lo\) AND \(\Q$col\E <= fn_r\.hi\)\)/,
		"the refresh of $flow reads $col through its index, by the column's values");
	# the take's probes too
	like($log, qr/Index (?:Only )?Scan (?:on|using) \Q$idx\E[^\n]*\n\s+Index Cond: \(\(\Q$col\E >= (?:'[^']+'::(?:bigint|date)|\$1)\) AND \(\Q$col\E <= (?:'[^']+'::(?:bigint|date)|\$2)\)\)/,
		"the take's probes of $flow count the rows of a range through the index");
}
unlike($log, qr/Seq Scan on ev\b/, 'no refresh reads the whole source');

$node->stop;
done_testing();
