# Key marks in a chain of flows (docs/internals.md §3, *Key marks*; docs/reference.md,
# "Late rows: marks that carry keys"): raw samples -> per hour (eval_interval 1 s) ->
# per day (adaptive: its own period is a day). A late row into a closed day is
# marked by its group at the hourly level; the hourly refresh rewrites that hour's
# group in its sink, whose key triggers mark the daily level's group, and the
# commit of that refresh wakes the daily level's worker (upstream_wrote), which
# refreshes that group alone within min_refresh_interval, not a day later. Another
# group of the same day, corrupted by hand in the daily sink, shows that only the
# late row's group was recomputed.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

# the workers write the chain's sinks: their setting is the server's
my $node = fn_node('key_marks_chain', "flownode.min_refresh_interval = '2s'",
	'flownode.key_marks_per_window = 64');
$node->safe_psql('postgres', q{
CREATE EXTENSION flownode;
SET timezone = 'UTC';
CREATE TABLE raw (ts timestamptz NOT NULL, host text NOT NULL, v int NOT NULL);
CREATE INDEX ON raw (ts);
INSERT INTO raw SELECT timestamptz '2024-05-01' + i * interval '97 seconds', 'h' || (i % 3), i
  FROM generate_series(0, 2999) i;
SELECT flownode.create_flow('c_1h', 'c_1h',
  $q$SELECT date_trunc('hour', ts) AS hour, host, count(*) AS n, sum(v) AS total FROM raw GROUP BY 1, 2$q$,
  eval_interval => '1 second');
CREATE INDEX ON c_1h (hour);
SELECT flownode.create_flow('c_1d', 'c_1d',
  $q$SELECT date_trunc('day', hour) AS day, host, sum(n) AS n, sum(total) AS total FROM c_1h GROUP BY 1, 2$q$);
});
ok(fn_wait_worker($node, 'postgres', $_), "the worker of $_ runs") for ('c_1h', 'c_1d');
is($node->safe_psql('postgres',
	q{SELECT count(*) FROM pg_trigger WHERE tgrelid = 'c_1h'::regclass AND tgname LIKE 'flownode_mark_keys%'}),
	'3', 'the daily level has key triggers on the hourly sink');

$node->safe_psql('postgres', q{
UPDATE c_1d SET n = -1 WHERE day = '2024-05-01' AND host = 'h0';
INSERT INTO raw VALUES ('2024-05-01 10:00:01+00', 'h1', 100000);
});
my $exact = q{SELECT total = (SELECT sum(v) FROM raw WHERE host = 'h1' AND ts >= '2024-05-01' AND ts < '2024-05-02')
  FROM c_1d WHERE day = '2024-05-01' AND host = 'h1'};
ok(fn_poll($node, 'postgres', $exact, 't', 60),
	"the late row's group reaches the daily level on its own, within seconds");
is($node->safe_psql('postgres', "SELECT n FROM c_1d WHERE day = '2024-05-01' AND host = 'h0'"),
	'-1', 'the other groups of that day were not recomputed');
is($node->safe_psql('postgres', "SELECT runs > 0 FROM flownode.flow_info WHERE flow_name = 'c_1d'"),
	't', 'the daily level refreshed (woken by the hourly level)');

# a whole-window refresh of that day fixes the corrupted group: the rest is exact
$node->safe_psql('postgres', "SELECT flownode.refresh_flow('c_1d', '2024-05-01', '2024-05-02')");
is(fn_sink_diff($node, 'postgres', 'c_1d',
	q{SELECT date_trunc('day', ts) AS day, host, count(*)::numeric AS n, sum(v)::numeric AS total
	    FROM raw GROUP BY 1, 2}),
	'0', 'the daily level equals its query');

$node->stop;
done_testing();
