# The bounded pool of flow workers (docs/internals.md §6): many flows on
# flownode.max_workers = 2 with PostgreSQL's default max_worker_processes = 8.
# Every sink is exact after writes and flushes; a parallel query still launches
# its workers; a terminated pool worker's flows are adopted again and end exact;
# a flow whose refresh is blocked (its sink locked by another session) holds the
# others back by at most its statement timeout; a second database gets a worker
# from the full pool, and DROP DATABASE stops it.
# FLOWNODE_POOL_FLOWS sets the number of flows (default 1000).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use FlownodeTAP;

my $nflows = $ENV{FLOWNODE_POOL_FLOWS} // 1000;
my $nsrc = 10;
my $node = fn_node('pool', 'max_worker_processes = 8', 'flownode.max_workers = 2',
	'flownode.max_flows = ' . ($nflows + 20), "flownode.statement_timeout = '3s'",
	"flownode.max_backoff = '2s'");

sub q_of
{
	my ($i) = @_;
	my $k = $i % $nsrc;
	return "SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, count(*) AS n, "
	  . "sum(v * $i) AS s FROM src_$k GROUP BY 1";
}

# One statement summing every sink's difference from its query.
sub all_diffs
{
	my ($db, $from, $to) = @_;
	my @parts = map {
		my $q = q_of($_);
		"(SELECT count(*) FROM (TABLE sink_$_ EXCEPT ALL ($q)) a)"
		  . " + (SELECT count(*) FROM (($q) EXCEPT ALL TABLE sink_$_) b)"
	} ($from .. $to);
	return $node->safe_psql($db, 'SELECT ' . join("\n + ", @parts));
}

sub write_rows
{
	my ($db, $seed) = @_;
	my $sql = '';
	for my $k (0 .. $nsrc - 1)
	{
		$sql .= "INSERT INTO src_$k SELECT timestamptz '2024-03-01' + (j * $seed % 7200) * interval '1 second',"
		  . " j + $seed FROM generate_series(1, 50) j;\n";
	}
	$sql .= "UPDATE src_0 SET v = v + 1 WHERE v % 5 = 0;\nDELETE FROM src_1 WHERE v % 7 = 0;\n";
	$node->safe_psql($db, $sql);
}

sub flush_all
{
	my ($db) = @_;
	my ($rc, $out, $err) = $node->psql($db,
		'SELECT count(*) FROM flownode.flows f, LATERAL flownode.flush_flow(f.flow_name) x');
	return $rc == 0 ? '' : $err;
}

my $setup = "CREATE EXTENSION flownode;\n";
$setup .= "CREATE TABLE src_$_ (ts timestamptz NOT NULL, v int NOT NULL); CREATE INDEX ON src_$_ (ts);\n"
  for 0 .. $nsrc - 1;
$node->safe_psql('postgres', $setup);
write_rows('postgres', 1);

my $t0 = time();
my $create = '';
$create .= "SELECT flownode.create_flow('f$_', 'sink_$_', \$q\$@{[ q_of($_) ]}\$q\$, eval_interval => '2 seconds');\n"
  for 1 .. $nflows;
$node->safe_psql('postgres', $create);
note(sprintf('%d flows created in %.1fs', $nflows, time() - $t0));

ok(fn_poll($node, 'postgres',
	'SELECT count(*) FILTER (WHERE worker_pid IS NULL) FROM flownode.flows', '0', 120),
	'every flow is adopted by a pool worker');
note(sprintf('adopted after %.1fs', time() - $t0));
is($node->safe_psql('postgres', 'SELECT count(DISTINCT worker_pid) FROM flownode.flows'),
	'2', 'two workers serve them all (flownode.max_workers = 2)');
is($node->safe_psql('postgres',
	"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'flownode flow'"),
	'2', 'two flow worker processes run');
ok(!$node->log_contains(qr/flownode runs \d+ of the|leaves PostgreSQL too few/, 0),
	'max_workers = 2 leaves room in the default max_worker_processes: no WARNING');

write_rows('postgres', 2);
$t0 = time();
is(flush_all('postgres'), '', 'flush_flow of every flow succeeds');
note(sprintf('flushed in %.1fs', time() - $t0));
is(all_diffs('postgres', 1, $nflows), '0', 'every sink equals its query after writes and flushes');

# A parallel query still gets its workers beside the pool.
$node->safe_psql('postgres',
	'CREATE TABLE big AS SELECT g AS id, g % 97 AS k FROM generate_series(1, 300000) g; ANALYZE big');
my $plan = $node->safe_psql('postgres', q{
SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0; SET parallel_leader_participation = off;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) SELECT k, count(*) FROM big GROUP BY k});
like($plan, qr/Workers Launched: [12]/, 'a parallel query launches workers beside the pool')
  or diag($plan);

# A pool worker terminated: every flow it served is adopted again, and ends exact.
my $victim = $node->safe_psql('postgres', 'SELECT min(worker_pid) FROM flownode.flows');
my $served = $node->safe_psql('postgres', "SELECT count(*) FROM flownode.flows WHERE worker_pid = $victim");
cmp_ok($served, '>', 1, "the victim serves several flows ($served)");
$node->safe_psql('postgres', "SELECT pg_terminate_backend($victim)");
write_rows('postgres', 3);
ok(fn_poll($node, 'postgres',
	"SELECT count(*) FILTER (WHERE worker_pid IS NULL OR worker_pid = $victim) FROM flownode.flows",
	'0', 90),
	'every flow of the terminated worker is served again');
is($node->safe_psql('postgres',
	"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'flownode flow'"),
	'2', 'the pool is back to two workers');
is(flush_all('postgres'), '', 'flush_flow of every flow succeeds after the termination');
is(all_diffs('postgres', 1, $nflows), '0', 'every sink equals its query after the termination');

# A slow flow beside fast ones: another session holds f1's sink locked, so each of
# f1's refreshes waits out flownode.statement_timeout (3 s) and fails; the flows
# of both workers keep refreshing on their schedule meanwhile.
my $locker = $node->background_psql('postgres');
$locker->query_safe('BEGIN; LOCK TABLE sink_1 IN ACCESS EXCLUSIVE MODE');
write_rows('postgres', 4);
$t0 = time();
ok(fn_poll($node, 'postgres',
	"SELECT consecutive_failures > 0 FROM flownode.flows WHERE flow_name = 'f1'", 't', 30),
	'the slow flow fails on the lock, with backoff');
my $fast_ok = 0;
while (time() - $t0 < 40 + $nflows / 20)
{
	if (all_diffs('postgres', 2, $nflows) eq '0') { $fast_ok = 1; last; }
	usleep(500_000);
}
ok($fast_ok, 'the other flows refresh while the slow one is blocked (no flush)');
note(sprintf('fast flows exact after %.1fs', time() - $t0));
like($node->safe_psql('postgres', "SELECT last_error FROM flownode.flows WHERE flow_name = 'f1'"),
	qr/statement timeout/, 'the slow flow reports its timeout');
$locker->query_safe('COMMIT');
$locker->quit;
is(flush_all('postgres'), '', 'flush after the lock is released');
is(all_diffs('postgres', 1, $nflows), '0', 'the slow flow heals and every sink is exact');

# A second database while the pool is full: one worker of the first hands its
# flows back (the first holds more than its share), the second gets it.
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql('other', $setup);
write_rows('other', 5);
$node->safe_psql('other',
	join('', map { "SELECT flownode.create_flow('f$_', 'sink_$_', \$q\$@{[ q_of($_) ]}\$q\$);\n" } 1 .. 3));
ok(fn_poll($node, 'other', 'SELECT count(*) FILTER (WHERE worker_pid IS NULL) FROM flownode.flows', '0', 60),
	'the second database gets a worker from the full pool');
is($node->safe_psql('postgres',
	"SELECT string_agg(datname, ',' ORDER BY datname) FROM pg_stat_activity WHERE backend_type = 'flownode flow'"),
	'other,postgres', 'one worker per database');
ok(fn_poll($node, 'postgres', 'SELECT count(*) FILTER (WHERE worker_pid IS NULL) FROM flownode.flows', '0', 60),
	'the first database\'s flows all go to its remaining worker');
write_rows('other', 6);
is(flush_all('other'), '', 'flush in the second database');
is(all_diffs('other', 1, 3), '0', 'the second database\'s sinks are exact');
write_rows('postgres', 7);
is(flush_all('postgres'), '', 'flush in the first database');
is(all_diffs('postgres', 1, $nflows), '0', 'the first database\'s sinks are exact');

# DROP DATABASE stops its worker; the first database gets its share back.
$node->safe_psql('postgres', 'DROP DATABASE other');
ok(fn_poll($node, 'postgres', 'SELECT count(DISTINCT worker_pid) FROM flownode.flows', '2', 60),
	'after DROP DATABASE the first database is served by two workers again');

$node->stop;

# Settings that leave PostgreSQL's own workers no room (6 + 2 of flownode's, 2 for
# a parallel query, 2 for logical replication > 8): the server starts, says so, and
# runs the pool that fits (8 - 2 - 4 = 2 workers); its flows run and a parallel
# query beside them still launches both its workers.
my $tight = fn_node('tight', 'max_worker_processes = 8', 'flownode.max_workers = 6');
ok($tight->log_contains(qr/flownode runs 2 of the 6 workers flownode.max_workers asks for/, 0),
	'max_workers = 6 in the default max_worker_processes: a WARNING at start names the pool that fits');
$tight->safe_psql('postgres', q{
	CREATE EXTENSION flownode;
	CREATE TABLE big AS SELECT g AS v FROM generate_series(1, 200000) g;
	ANALYZE big;
});
for my $i (1 .. 8)
{
	$tight->safe_psql('postgres', qq{
		CREATE TABLE tsrc$i (ts timestamptz NOT NULL, v int);
		SELECT flownode.create_flow('tf$i', 'tsink$i',
		  \$\$SELECT date_bin('1 minute', ts, '2000-01-01') AS w, count(*) AS n, sum(v) AS sv FROM tsrc$i GROUP BY 1\$\$,
		  eval_interval => '1 second');
		INSERT INTO tsrc$i SELECT now() - g * interval '1 second', g FROM generate_series(1, 300) g;
	});
}
ok(fn_poll($tight, 'postgres', q{SELECT count(*) = 8 FROM flownode.flows WHERE state = 'active' AND dirty_windows = 0}, 't'),
	'the 8 flows run on the smaller pool');
is($tight->safe_psql('postgres',
	"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'flownode flow'"),
	'2', 'the pool holds 2 workers, not 6');
my $plan = $tight->safe_psql('postgres', q{
	SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
	SET max_parallel_workers_per_gather = 2;
	EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT v % 7, count(*) FROM big GROUP BY 1;
});
like($plan, qr/Workers Launched: 2/, 'a parallel query beside the flows launches both its workers');
is($tight->safe_psql('postgres', q{
	SELECT sum(d) FROM (SELECT count(*) AS d FROM
	  ((SELECT * FROM tsink1 EXCEPT ALL SELECT date_bin('1 minute', ts, '2000-01-01'), count(*), sum(v) FROM tsrc1 GROUP BY 1)
	   UNION ALL
	   (SELECT date_bin('1 minute', ts, '2000-01-01'), count(*), sum(v) FROM tsrc1 GROUP BY 1 EXCEPT ALL SELECT * FROM tsink1)) x) y}),
	'0', 'a sink of the smaller pool equals its query');
$tight->stop;
done_testing();
