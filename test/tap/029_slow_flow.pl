# A slow flow beside fast ones on the same pool worker (fairness;
# docs/internals.md §6, "A slow flow's worker hands its other flows over"): with
# flownode.statement_timeout at 60 s, another session holds one flow's sink locked
# for 30 s, so that flow's refresh waits on the lock that long. Every other flow,
# those its worker held included, keeps refreshing on its schedule without
# flush_flow: each flow's lag, as the flows view shows it, stays within its
# eval_interval and a few seconds. Once the lock is released every sink is exact.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);
use FlownodeTAP;

my $nflows = 6;
my $hold = 30;           # seconds the slow flow's sink stays locked
my $bound = 1 + 5;       # eval_interval + a few seconds
# max_worker_processes = 9: room for a pool of 3 (the second part raises max_workers
# to 3) beside flownode's launcher and starter and PostgreSQL's reserve of 4
my $node = fn_node('slow', 'max_worker_processes = 9', 'flownode.max_workers = 2',
	"flownode.statement_timeout = '60s'");

sub q_of
{
	my ($i) = @_;
	return "SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, count(*) AS n, "
	  . "sum(v) AS s FROM src_$i GROUP BY 1";
}

sub diffs
{
	my @parts = map {
		my $q = q_of($_);
		"(SELECT count(*) FROM (TABLE sink_$_ EXCEPT ALL ($q)) a)"
		  . " + (SELECT count(*) FROM (($q) EXCEPT ALL TABLE sink_$_) b)"
	} (1 .. $nflows);
	return $node->safe_psql('postgres', 'SELECT ' . join("\n + ", @parts));
}

# One row into each source (the slow flow's too: it stays dirty, so its worker
# keeps trying to refresh it).
sub write_all
{
	my ($seed) = @_;
	$node->safe_psql('postgres',
		join('', map { "INSERT INTO src_$_ VALUES (now(), $seed);\n" } 1 .. $nflows));
}

my $setup = "CREATE EXTENSION flownode;\n";
$setup .= "CREATE TABLE src_$_ (ts timestamptz NOT NULL, v int NOT NULL);\n" for 1 .. $nflows;
$node->safe_psql('postgres', $setup);
write_all(0);
$node->safe_psql('postgres',
	join('', map {
		"SELECT flownode.create_flow('f$_', 'sink_$_', \$q\$@{[ q_of($_) ]}\$q\$, eval_interval => '1 second');\n"
	} 1 .. $nflows));
ok(fn_poll($node, 'postgres',
	'SELECT count(*) FILTER (WHERE worker_pid IS NULL) = 0 AND count(DISTINCT worker_pid) = 2 FROM flownode.flows'),
	'two pool workers serve the flows');
my $slow_pid = fn_worker_pid($node, 'postgres', 'f1');
my $beside = $node->safe_psql('postgres',
	"SELECT string_agg(flow_name, ',' ORDER BY flow_name) FROM flownode.flows "
	  . "WHERE worker_pid = $slow_pid AND flow_name <> 'f1'");
isnt($beside, '', "the slow flow's worker serves fast flows too ($beside)");

# The slow flow: its sink locked, its source dirty; its worker's refresh waits.
my $locker = $node->background_psql('postgres');
$locker->query_safe('BEGIN; LOCK TABLE sink_1 IN ACCESS EXCLUSIVE MODE');
my $t0 = time();
write_all(1);
ok(fn_poll($node, 'postgres',
	"SELECT count(*) > 0 FROM pg_locks WHERE NOT granted AND relation = 'sink_1'::regclass AND pid = $slow_pid",
	't', 20),
	"the slow flow's worker waits on its sink's lock");

# While it waits: the fast flows are written to twice a second, and their lag
# (the age of their oldest change not in the sink) is sampled from the flows view.
my $worst = 0;
my $worst_flow = '';
my $i = 2;
while (time() - $t0 < $hold - 2)
{
	write_all($i++);
	my ($lag, $flow) = split /\|/, $node->safe_psql('postgres',
		"SELECT COALESCE(extract(epoch FROM lag), 0), flow_name FROM flownode.flows "
		  . "WHERE flow_name <> 'f1' ORDER BY lag DESC NULLS LAST LIMIT 1");
	($worst, $worst_flow) = ($lag, $flow) if $lag > $worst;
	usleep(500_000);
}
note(sprintf('worst lag of a fast flow while the slow one waited: %.1fs (%s)', $worst, $worst_flow));
cmp_ok($worst, '<', $bound,
	"every fast flow, those of the slow flow's worker too, stays within eval_interval + 5 s of its writes");
is($node->safe_psql('postgres', "SELECT count(*) FROM flownode.flows WHERE worker_pid = $slow_pid AND flow_name <> 'f1'"),
	'0', "the slow flow's worker handed its other flows over");
is($node->safe_psql('postgres', "SELECT consecutive_failures = 0 FROM flownode.flows WHERE flow_name = 'f1'"),
	't', 'the slow flow has not failed (it is waiting within its statement timeout)');

$locker->query_safe('COMMIT');
$locker->quit;
ok(fn_poll($node, 'postgres',
	"SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'sink_1'::regclass", '0', 20),
	'the slow refresh goes on once the lock is released');
write_all($i++);
my ($rc, $out, $err) = $node->psql('postgres',
	'SELECT count(*) FROM flownode.flows f, LATERAL flownode.flush_flow(f.flow_name) x');
is($rc, 0, 'flush_flow of every flow succeeds') or diag($err);
is(diffs(), '0', 'every sink equals its query');
is($node->safe_psql('postgres', 'SELECT count(*) FILTER (WHERE worker_pid IS NULL) FROM flownode.flows'),
	'0', 'every flow is served');

# The database's only worker stuck while the pool has room (flownode.max_workers
# raised to 3, a second database whose share of it is one worker): the launcher lets
# go of its due flows and registers another worker for them.
$node->safe_psql('postgres',
	join('', map { "SELECT flownode.drop_flow('f$_');\n" } 2 .. $nflows));
ok(fn_poll($node, 'postgres',
	"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'flownode flow'", '1'),
	'the worker left without flows exits');
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql('other', $setup);
$node->safe_psql('other',
	join('', map {
		"SELECT flownode.create_flow('f$_', 'sink_$_', \$q\$@{[ q_of($_) ]}\$q\$, eval_interval => '1 second');\n"
	} 1 .. 3));
ok(fn_poll($node, 'other',
	'SELECT count(*) FILTER (WHERE worker_pid IS NULL) = 0 AND count(DISTINCT worker_pid) = 1 FROM flownode.flows'),
	'one worker serves the second database\'s three flows');
$node->append_conf('postgresql.conf', 'flownode.max_workers = 3');
$node->reload;
usleep(2_000_000);
is($node->safe_psql('postgres',
	"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'flownode flow'"), '2',
	'the pool has room for one more worker, which the second database does not take (its share is one)');
$slow_pid = fn_worker_pid($node, 'other', 'f1');
$locker = $node->background_psql('other');
$locker->query_safe('BEGIN; LOCK TABLE sink_1 IN ACCESS EXCLUSIVE MODE');
$t0 = time();
$node->safe_psql('other', join('', map { "INSERT INTO src_$_ VALUES (now(), 1);\n" } 1 .. 3));
ok(fn_poll($node, 'other',
	"SELECT count(*) > 0 FROM pg_locks WHERE NOT granted AND relation = 'sink_1'::regclass AND pid = $slow_pid",
	't', 20),
	"the second database's worker waits on a sink's lock");
$worst = 0;
while (time() - $t0 < 15)
{
	$node->safe_psql('other', join('', map { "INSERT INTO src_$_ VALUES (now(), $i);\n" } 1 .. 3));
	$i++;
	my $lag = $node->safe_psql('other',
		"SELECT COALESCE(max(extract(epoch FROM lag)), 0) FROM flownode.flows WHERE flow_name <> 'f1'");
	$worst = $lag if $lag > $worst;
	usleep(500_000);
}
note(sprintf('worst lag of the fast flows of the lone stuck worker: %.1fs', $worst));
cmp_ok($worst, '<', $bound, 'a new worker serves the stuck worker\'s other flows on schedule');
is($node->safe_psql('other',
	"SELECT count(*) FROM flownode.flows WHERE flow_name <> 'f1' AND worker_pid IN ($slow_pid)"),
	'0', 'they left the stuck worker');
$locker->query_safe('COMMIT');
$locker->quit;
($rc, $out, $err) = $node->psql('other',
	'SELECT count(*) FROM flownode.flows f, LATERAL flownode.flush_flow(f.flow_name) x');
is($rc, 0, 'flush_flow in the second database succeeds') or diag($err);
is($node->safe_psql('other', 'SELECT ' . join(' + ', map {
	my $q = q_of($_);
	"(SELECT count(*) FROM (TABLE sink_$_ EXCEPT ALL ($q)) a) + (SELECT count(*) FROM (($q) EXCEPT ALL TABLE sink_$_) b)"
} 1 .. 3)), '0', 'the second database\'s sinks are exact');

$node->stop;
done_testing();
