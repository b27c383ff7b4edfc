# The folded refresh of the open window (refresh/fold_refresh.h) under a sustained
# write load: four clients insert rows at the current time (2.5% of their
# transactions 1-4 s late, beyond the fold's first slack; 0.8% into the minute
# before), and now and then (0.02%) update or delete recent rows, while the worker
# refreshes every 100 ms. The cluster runs
# with flownode.verify_folds = on: every folded refresh compares its window with
# the query in its own snapshot, at whatever moment of the load it ran, and fails
# if they differ; so the flow must end with folds done, no failure, and a sink equal
# to the query after a flush.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

my $seconds = 20;
my $node = fn_node('fold');
my %query = (
	live =>
	  q{SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, host, count(*) AS n, sum(v) AS total, min(v) AS lo, max(v) AS hi, bool_or(v > 90) AS spike FROM s GROUP BY 1, 2},
	# avg folds as a hidden sum and count; ten-second windows: the fold moves on often
	live_avg =>
	  q{SELECT date_bin('10 seconds', ts, timestamptz '2000-01-01') AS w, avg(v) AS a, count(*) AS n FROM s GROUP BY 1},
	# avg of floats does not fold: recomputed every time
	live_float =>
	  q{SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, avg(v::float8) AS a FROM s GROUP BY 1},
);
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION flownode;
CREATE TABLE s (ts timestamptz NOT NULL, host text NOT NULL, v int NOT NULL);
CREATE INDEX ON s (ts);
});
for my $f (sort keys %query)
{
	$node->safe_psql('postgres',
		"SELECT flownode.create_flow('$f', '$f', \$q\$$query{$f}\$q\$, eval_interval => '100ms')");
	ok(fn_wait_worker($node, 'postgres', $f), "$f: worker started");
}

my $script = "$PostgreSQL::Test::Utils::tmp_check/fold_writes.sql";
open(my $fh, '>', $script) or die;
print $fh <<'EOF';
\set h random(0, 9)
\set v random(-50, 99)
\set kind random(0, 99999)
\if :kind < 96500
INSERT INTO s SELECT now() - random() * interval '300 ms', 'h' || ((:h + i) % 10), :v + i FROM generate_series(1, 20) i;
\elif :kind < 99000
INSERT INTO s VALUES (now() - interval '1 second' - random() * interval '3 seconds', 'h' || :h, :v);
\elif :kind < 99980
INSERT INTO s VALUES (now() - interval '1 minute', 'h' || :h, :v);
\elif :kind < 99990
UPDATE s SET v = v + 1 WHERE ts >= now() - interval '2 seconds' AND host = 'h' || :h;
\else
DELETE FROM s WHERE ts >= now() - interval '1 second' AND host = 'h' || :h;
\endif
EOF
close($fh);
my ($out, $err) = ('', '');
my $writers = IPC::Run::start(
	[
		$node->installed_command('pgbench'), '-n', '-c', '4', '-j', '4',
		'-T', $seconds, '-f', $script, '-h', $node->host, '-p', $node->port, 'postgres'
	],
	'>', \$out, '2>', \$err);
$writers->finish;
like($out, qr/number of transactions actually processed: \d+/, 'writers ran') or diag($err);

sub state
{
	my ($f) = @_;
	return split / /,
	  $node->safe_psql('postgres',
		"SELECT folded_refreshes || ' ' || failures || ' ' || runs FROM flownode.flow_info WHERE flow_name = '$f'");
}
my ($folds, $failures, $runs) = state('live');
# at least a few folds: with key marks on (the default), the rows written into the
# minute before are refreshed by key marks, in runs of their own (counted in $runs),
# which leave the fold of the open minute in place (fn_fold_forget_within)
cmp_ok($folds, '>=', 3, "the open window was folded ($folds of $runs refreshes)");
cmp_ok($folds, '<', $runs, 'and recomputed when a late row, an UPDATE or a DELETE came');
for my $f (sort keys %query)
{
	my (undef, $failed) = state($f);
	is($failed, '0', "$f: no folded refresh differed from the query in its snapshot (verify_folds)")
	  or diag($node->safe_psql('postgres', "SELECT error FROM flownode.runs WHERE flow_name = '$f' AND NOT succeeded ORDER BY started_at DESC LIMIT 1"));
}
my ($avg_folds) = state('live_avg');
cmp_ok($avg_folds, '>', 0, "avg folded ($avg_folds)");
my ($float_folds) = state('live_float');
is($float_folds, '0', 'avg of floats does not fold');

for my $f (sort keys %query)
{
	$node->safe_psql('postgres', "SELECT flownode.flush_flow('$f')");
	is(fn_sink_diff($node, 'postgres', $f, $query{$f}), '0', "$f: sink exact after a flush");
}
$node->stop;
done_testing();
