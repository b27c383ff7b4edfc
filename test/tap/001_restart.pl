# Durable flows: committed changes that were not yet refreshed survive a fast
# restart, an immediate stop (crash) and a crash of an unrelated backend; after
# recovery the flow's worker is back on its own and flush_flow makes the sink
# exact (nothing lost, nothing counted twice).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

my $node = fn_node('restart');
my $query = q{SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, host,
  count(*) AS n, sum(v) AS s, min(v) AS lo, max(v) AS hi FROM src GROUP BY 1, 2};
# a second flow whose windows nest in the first's: both are marked in one set, and
# each gets its own record, in its own windows, derived from it
my $query_h = q{SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS w,
  count(*) AS n, sum(v) AS s FROM src GROUP BY 1};

# eval_interval of an hour: only flush_flow (or restart recovery) refreshes.
$node->safe_psql('postgres', qq{
CREATE EXTENSION flownode;
CREATE TABLE src (ts timestamptz NOT NULL, host text NOT NULL, v int NOT NULL);
CREATE INDEX ON src (ts);
INSERT INTO src SELECT timestamptz '2024-01-01' + i * interval '7 seconds',
  'h' || (i % 3), i FROM generate_series(1, 200) i;
SELECT flownode.create_flow('f', 'snk', \$q\$$query\$q\$, eval_interval => '1 hour');
SELECT flownode.create_flow('fh', 'snk_h', \$q\$$query_h\$q\$, eval_interval => '1 hour');
});
is(fn_sink_diff($node, 'postgres', 'snk', $query), '0', 'create_flow fills the sink');
my $pid = fn_wait_worker($node, 'postgres', 'f');
ok($pid, 'flow worker runs after create_flow');

# Committed changes, never flushed: inserts, updates moving rows across windows
# (old and new window), deletes; and two scattered inserts of a dozen separate
# windows each, in one session, so the second record's multirange is written in its
# stored form directly (pending_log.c) and must be read back by recovery. Rows at the
# largest and the smallest timestamp too: the last window's record ends at 2^63 - 1
# (infinity), the first one's starts at 4714-11-24 BC (docs/internals.md §3).
# $round keeps each round's rows distinct.
sub write_changes
{
	my ($round) = @_;
	my $base = 1000 * $round;
	$node->safe_psql('postgres', qq{
INSERT INTO src SELECT timestamptz '2024-02-01' + ($round * 1000 + i * 13) * interval '1 minute',
  'scat', $base + 500 + i FROM generate_series(1, 12) i;
INSERT INTO src SELECT timestamptz '2024-02-03' + ($round * 1000 + i * 13) * interval '1 minute',
  'scat', $base + 600 + i FROM generate_series(1, 12) i;
INSERT INTO src SELECT timestamptz '2024-01-01' + i * interval '11 seconds',
  'h' || (i % 4), $base + i FROM generate_series(1, 150) i;
INSERT INTO src VALUES ('294276-12-31 23:59:59.999999+00', 'end', $base + 900),
  ('4714-11-24 00:00:00.5+00 BC', 'start', $base + 901);
UPDATE src SET ts = ts + interval '7 minutes', host = 'moved$round'
  WHERE v % 9 = $round % 9 AND v < $base AND host NOT IN ('end', 'start');
DELETE FROM src WHERE v % 13 = $round % 13;
UPDATE src SET v = v + 1 WHERE v % 17 = $round % 17;
});
}

# After recovery: worker back without user action, then flush, then exact.
sub check_recovered
{
	my ($scenario, $old_pid, $check_dirty) = @_;
	my $new = fn_wait_worker($node, 'postgres', 'f', $old_pid);
	ok($new, "$scenario: flow worker is running again");
	if ($check_dirty)
	{
		# The marks must come back from the durable record: the sink is stale
		# and flows reports dirty windows before anything refreshed.
		ok(fn_poll($node, 'postgres',
			"SELECT dirty_windows > 0 FROM flownode.flows WHERE flow_name = 'f'", 't', 30),
			"$scenario: dirty windows reloaded before flush");
		isnt(fn_sink_diff($node, 'postgres', 'snk', $query), '0',
			"$scenario: sink still lags before flush (marks were not recomputed)");
	}
	my ($rc, $out, $err) = $node->psql('postgres', "SELECT flownode.flush_flow('f')");
	is($rc, 0, "$scenario: flush_flow succeeds") or diag($err);
	is(fn_sink_diff($node, 'postgres', 'snk', $query), '0',
		"$scenario: sink equals its query after flush");
	is(fn_flow_field($node, 'postgres', 'f', 'dirty_windows'), '0',
		"$scenario: no dirty windows left after flush");
	# the hourly flow: its own marks came back too
	if ($check_dirty)
	{
		ok(fn_poll($node, 'postgres',
			"SELECT dirty_windows > 0 FROM flownode.flows WHERE flow_name = 'fh'", 't', 30),
			"$scenario: hourly flow's dirty windows reloaded");
	}
	($rc, $out, $err) = $node->psql('postgres', "SELECT flownode.flush_flow('fh')");
	is($rc, 0, "$scenario: flush_flow of the hourly flow succeeds") or diag($err);
	is(fn_sink_diff($node, 'postgres', 'snk_h', $query_h), '0',
		"$scenario: hourly sink equals its query after flush");
	return $new;
}

# 1. fast restart
write_changes(1);
ok(fn_flow_field($node, 'postgres', 'f', 'dirty_windows') > 0,
	'changes are pending before the fast restart');
isnt(fn_sink_diff($node, 'postgres', 'snk', $query), '0',
	'sink lags before the fast restart (eval_interval 1 hour)');
$node->restart(mode => 'fast');
$pid = check_recovered('fast restart', $pid, 1);

# 2. immediate stop (crash) and start
write_changes(2);
$node->stop('immediate');
$node->start;
$pid = check_recovered('immediate stop', $pid, 1);

# 3. SIGKILL of an unrelated idle backend: the postmaster reinitializes shared memory
write_changes(3);
my $bg = $node->background_psql('postgres');
my $victim = $bg->query_safe('SELECT pg_backend_pid()');
like($victim, qr/^\d+$/, 'idle backend pid');
my $offset = -s $node->logfile;
kill 'KILL', $victim;
ok(fn_wait_reinit($node, $offset), 'server accepts connections after the crash');
eval { $bg->quit };
$pid = check_recovered('idle backend SIGKILL', $pid, 1);

# Nothing is counted twice by a later refresh either.
write_changes(4);
$node->safe_psql('postgres', "SELECT flownode.flush_flow('f'), flownode.flush_flow('fh')");
is(fn_sink_diff($node, 'postgres', 'snk', $query), '0', 'sink exact after a last round');
is(fn_sink_diff($node, 'postgres', 'snk_h', $query_h), '0', 'hourly sink exact after a last round');

$node->stop;
done_testing();
