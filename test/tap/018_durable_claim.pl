# Invariant 4 (docs/internals.md §2, §4): a commit must not claim its windows in the
# durable set while a refresh holds them. The refresh may trim that commit's record
# in its snapshot; a later writer that skipped its own record on the strength of the
# claim, committing after that snapshot, then had its window in no record: lost to a
# crash, and missed by read_flow, which reads the record.
#
# The race, held step by step: a refresh R0 fails (statement timeout) and gives the
# window back to the dirty set only; writer T1 records the window and is held before
# it becomes visible (a synchronous commit with no standby); refresh R1 takes the
# window and waits for T1; T1 is released and publishes (before the fix: claims the
# window durable); R1 takes its snapshot and waits for a lock on the sink; writer T
# commits into the window (before the fix: skips its record); R1 commits, trimming
# T1's record. Before the fix no record held the window: read_flow missed T's row,
# and after a crash the sink never got it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);
use FlownodeTAP;

# no standby ever answers: a commit with synchronous_commit = on waits, after its
# commit record, before it becomes visible (every other session commits locally)
my $node = fn_node(
	'claim', 'wal_level = replica',
	'max_wal_senders = 2', "synchronous_standby_names = 'nobody'",
	'synchronous_commit = local', "flownode.statement_timeout = '1s'");
my $query =
  q{SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, sum(v) AS total, count(*) AS n FROM t GROUP BY 1};
$node->safe_psql(
	'postgres', qq{
CREATE EXTENSION flownode;
CREATE TABLE t (ts timestamptz NOT NULL, v int);
CREATE INDEX ON t (ts);
SELECT flownode.create_flow('f', 'snk', \$q\$$query\$q\$, eval_interval => '2 seconds');
});
ok(fn_wait_worker($node, 'postgres', 'f'), 'worker started');

my $dirty =
  "SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'f'";
my $blocked_on = sub {
	my ($pid_filter) = @_;
	return "SELECT count(*) > 0 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
	  . " WHERE NOT l.granted AND l.relation = 'snk'::regclass AND $pid_filter";
};
# the window 2024-01-01 00:00 in the record's numbers (microseconds since 2000)
my $recorded =
  "SELECT count(*) FROM flownode.pending WHERE ranges @> (extract(epoch FROM timestamptz '2024-01-01 00:00:00+00'"
  . " - timestamptz '2000-01-01 00:00:00+00') * 1000000)::bigint";

# T0 marks the window; L1 holds the sink; R0 times out and puts the window back
# into the dirty set (not the durable set)
$node->safe_psql('postgres',
	"INSERT INTO t VALUES ('2024-01-01 00:00:10+00', 1)");
my $l1 = $node->background_psql('postgres');
$l1->query_safe('BEGIN; LOCK TABLE snk IN EXCLUSIVE MODE');
ok( fn_poll(
		$node, 'postgres',
		"SELECT consecutive_failures >= 1 FROM flownode.flows WHERE flow_name = 'f'"
	),
	'R0 failed (statement timeout while the sink is locked)');
# R1 will wait for the lock instead (the worker reads the setting at once)
$node->safe_psql('postgres',
	"ALTER SYSTEM SET flownode.statement_timeout = 0; SELECT pg_reload_conf()");

# T1 records the window and waits for the standby, in flight
my $t1 = $node->background_psql('postgres');
my $t1_pid = $t1->query_safe('SELECT pg_backend_pid()');
$t1->query_safe('SET synchronous_commit = on');
$t1->query_until(qr/sent/,
	"\\echo sent\nINSERT INTO t VALUES ('2024-01-01 00:00:20+00', 10);\n");
ok( fn_poll(
		$node, 'postgres',
		"SELECT wait_event = 'SyncRep' FROM pg_stat_activity WHERE pid = $t1_pid"
	),
	'T1 waits in its commit, not yet visible');
is($node->safe_psql('postgres', $dirty),
	'1', 'R1 has not taken the window yet (the race is set up in order)');

# R1 takes the window and waits for T1
ok(fn_poll($node, 'postgres', "$dirty", '0'),
	'R1 took the window (out of the dirty set)');
usleep(300_000);
is($node->safe_psql('postgres', 'SELECT count(*) FROM t'),
	'1', 'T1 is still invisible');

# T1 is released: visible, it publishes
$node->safe_psql('postgres', "SELECT pg_cancel_backend($t1_pid)");
ok(fn_poll($node, 'postgres', 'SELECT count(*) = 2 FROM t'), 'T1 committed');
# R1 took its snapshot (it sees T1) and waits for the sink
ok( fn_poll(
		$node, 'postgres',
		$blocked_on->("a.backend_type = 'flownode flow'")
	),
	'R1 waits for the sink after its snapshot');
# L2 queues behind R1 for the sink: once R1 commits, it holds the next refresh off
my $l2 = $node->background_psql('postgres');
my $l2_pid = $l2->query_safe('SELECT pg_backend_pid()');
$l2->query_until(qr/queued/,
	"\\echo queued\nBEGIN; LOCK TABLE snk IN EXCLUSIVE MODE;\n");
ok(fn_poll($node, 'postgres', $blocked_on->("a.pid = $l2_pid")),
	'L2 queued behind R1');

# T writes the window after R1's snapshot
$node->safe_psql('postgres',
	"INSERT INTO t VALUES ('2024-01-01 00:00:30+00', 100)");
# R1 commits (trimming T0's and T1's records); L2 gets the sink
$l1->query_safe('COMMIT');
ok( fn_poll(
		$node,
		'postgres',
		"SELECT count(*) > 0 FROM pg_locks WHERE granted AND pid = $l2_pid AND relation = 'snk'::regclass"
	),
	'R1 committed, L2 holds the sink');

isnt(fn_sink_diff($node, 'postgres', 'snk', $query),
	'0', "the sink lacks T's row (R1's snapshot did not see it)");
cmp_ok($node->safe_psql('postgres', $recorded),
	'>', 0, "T's window is still in the durable record");
is( $node->safe_psql(
		'postgres',
		"SELECT count(*) FROM ((SELECT * FROM flownode.read_flow(NULL::snk) EXCEPT ALL ($query))"
		  . " UNION ALL (($query) EXCEPT ALL SELECT * FROM flownode.read_flow(NULL::snk))) d"
	),
	'0',
	'read_flow equals the query');

# a crash before any other refresh: the record is all that is left
$node->stop('immediate');
eval { $_->quit } for ($l1, $l2, $t1);
$node->start;
ok(fn_wait_worker($node, 'postgres', 'f'), 'worker restarted');
$node->safe_psql('postgres', "SELECT flownode.flush_flow('f')");
is(fn_sink_diff($node, 'postgres', 'snk', $query),
	'0', "after the crash, the sink has T's row");

$node->stop;
done_testing();
