# A chain of flows with default settings converges on its own (docs/reference.md,
# "Chains of flows" and "When the worker evaluates"): raw samples -> per minute -> per hour -> per day, no
# eval_interval anywhere, flownode.min_refresh_interval at its default. The minute
# level evaluates about a minute after a write (one window's usual size); its refresh
# writes the minute sink, which wakes the hourly level's worker, which evaluates
# min_refresh_interval later instead of an hour later; and so on up. Without that
# the hourly level would first evaluate an hour after it started.
#
# A second chain whose hourly level has an eval_interval of an hour keeps that
# schedule: its minute level refreshes, its hourly level does not.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use FlownodeTAP;

my $node = fn_node('chain_cadence', "flownode.min_refresh_interval = '5s'");
$node->safe_psql('postgres', q{
CREATE EXTENSION flownode;
SET timezone = 'UTC';
CREATE TABLE raw (ts timestamptz NOT NULL, host text NOT NULL, v int NOT NULL);
CREATE INDEX ON raw (ts);
SELECT flownode.create_flow('c_1m', 'c_1m',
  $q$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, host, count(*) AS n, sum(v) AS total
       FROM raw GROUP BY 1, 2$q$);
SELECT flownode.create_flow('c_1h', 'c_1h',
  $q$SELECT date_trunc('hour', minute) AS hour, host, sum(n) AS n, sum(total) AS total FROM c_1m GROUP BY 1, 2$q$);
SELECT flownode.create_flow('c_1d', 'c_1d',
  $q$SELECT date_trunc('day', hour) AS day, host, sum(n) AS n, sum(total) AS total FROM c_1h GROUP BY 1, 2$q$);

CREATE TABLE raw2 (ts timestamptz NOT NULL, v int NOT NULL);
CREATE INDEX ON raw2 (ts);
SELECT flownode.create_flow('k_1m', 'k_1m',
  $q$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, count(*) AS n FROM raw2 GROUP BY 1$q$);
SELECT flownode.create_flow('k_1h', 'k_1h',
  $q$SELECT date_trunc('hour', minute) AS hour, sum(n) AS n FROM k_1m GROUP BY 1$q$,
  eval_interval => '1 hour');
});
foreach my $flow ('c_1m', 'c_1h', 'c_1d', 'k_1m', 'k_1h')
{
	ok(fn_wait_worker($node, 'postgres', $flow), "the worker of $flow runs");
}

# writes after every worker started: its first evaluation is one period away
my $start = time();
$node->safe_psql('postgres', q{
INSERT INTO raw SELECT timestamptz '2024-05-01' + i * interval '7 seconds', 'h' || (i % 3), i
  FROM generate_series(0, 30000) i;
INSERT INTO raw2 SELECT timestamptz '2024-05-01' + i * interval '11 seconds', i FROM generate_series(0, 999) i;
});

my $top = q{SELECT date_trunc('day', ts) AS day, host, count(*)::numeric AS n, sum(v)::numeric AS total
  FROM raw GROUP BY 1, 2};
ok(fn_poll($node, 'postgres',
	"SELECT (SELECT count(*) FROM (TABLE c_1d EXCEPT ALL ($top)) a) + (SELECT count(*) FROM (($top) EXCEPT ALL TABLE c_1d) b)",
	'0', 240), 'the daily level converges on its own, with default cadences');
my $elapsed = time() - $start;
diag(sprintf('the daily level was exact %.0f s after the write', $elapsed));
# a minute for the minute level, then a few seconds per level above it; generous
# on a loaded machine, and far below the hour the hourly level waited before
cmp_ok($elapsed, '<', 200, 'within a few minutes of the write, not an hour');
foreach my $flow ('c_1m', 'c_1h', 'c_1d')
{
	is($node->safe_psql('postgres',
		"SELECT runs > 0 AND state = 'active' AND eval_interval IS NULL FROM flownode.flow_info WHERE flow_name = '$flow'"),
		't', "$flow refreshed by its own worker");
}

# the other chain: its minute level has refreshed (its sink is the query) ...
ok(fn_poll($node, 'postgres',
	q{SELECT count(*) = 0 FROM (SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, count(*) AS n
	    FROM raw2 GROUP BY 1 EXCEPT ALL TABLE k_1m) d}, 't', 60),
	'the minute level of a chain with a scheduled hourly level refreshed');
# ... and its hourly level, which has an eval_interval, kept its schedule
is($node->safe_psql('postgres', "SELECT runs, dirty_windows > 0 FROM flownode.flow_info WHERE flow_name = 'k_1h'"),
	'0|t', 'an hourly level with eval_interval => 1 hour keeps its own schedule');
$node->safe_psql('postgres', "SELECT flownode.flush_flow('k_1h', cascade => true)");
is($node->safe_psql('postgres',
	q{SELECT count(*) FROM (SELECT date_trunc('hour', ts) AS hour, count(*)::numeric AS n FROM raw2 GROUP BY 1
	    EXCEPT ALL TABLE k_1h) d}),
	'0', 'a cascading flush makes it exact at once');

$node->stop;
done_testing();
