# A flow worker that is terminated (pg_terminate_backend) or killed with SIGKILL
# (the postmaster then reinitializes shared memory) comes back without a user
# action, and the changes pending when it died reach the sink.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

my $node = fn_node('worker_kill');
my $query = q{SELECT date_trunc('minute', ts) AS w, k, count(*) AS n, sum(v) AS s
  FROM src GROUP BY 1, 2};

$node->safe_psql('postgres', qq{
CREATE EXTENSION flownode;
CREATE TABLE src (ts timestamp NOT NULL, k int NOT NULL, v bigint NOT NULL);
CREATE INDEX ON src (ts);
INSERT INTO src SELECT timestamp '2024-03-01' + i * interval '5 seconds', i % 5, i
  FROM generate_series(1, 300) i;
SELECT flownode.create_flow('kf', 'ksink', \$q\$$query\$q\$, eval_interval => '1 hour');
});
my $pid = fn_wait_worker($node, 'postgres', 'kf');
ok($pid, 'flow worker runs after create_flow');

# Pending (committed, unflushed) changes of round $r.
sub write_changes
{
	my ($r) = @_;
	$node->safe_psql('postgres', qq{
INSERT INTO src SELECT timestamp '2024-03-01' + i * interval '13 seconds', i % 7, $r * 1000 + i
  FROM generate_series(1, 100) i;
UPDATE src SET ts = ts + interval '3 minutes' WHERE v % 11 = $r;
DELETE FROM src WHERE v % 19 = $r;
});
	ok(fn_flow_field($node, 'postgres', 'kf', 'dirty_windows') > 0,
		"round $r: changes are pending");
}

sub flush_and_compare
{
	my ($scenario) = @_;
	my ($rc, $out, $err) = $node->psql('postgres', "SELECT flownode.flush_flow('kf')");
	is($rc, 0, "$scenario: flush_flow succeeds") or diag($err);
	is(fn_sink_diff($node, 'postgres', 'ksink', $query), '0',
		"$scenario: sink equals its query after flush");
}

# 1. pg_terminate_backend of the worker
write_changes(1);
is($node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)"), 't',
	'pg_terminate_backend of the flow worker');
my $new = fn_wait_worker($node, 'postgres', 'kf', $pid);
ok($new, 'terminated worker is started again without a user action');
isnt($new, $pid, 'it is a new process');
ok(fn_poll($node, 'postgres',
	"SELECT state FROM flownode.flows WHERE flow_name = 'kf'", 'active', 30),
	'flow is active again after termination');
flush_and_compare('after pg_terminate_backend');
$pid = $new;

# 2. SIGKILL of the worker: crash of a shared-memory process, postmaster reinitializes
write_changes(2);
my $offset = -s $node->logfile;
ok(kill('KILL', $pid), 'SIGKILL sent to the flow worker');
ok(fn_wait_reinit($node, $offset), 'server accepts connections after the crash');
$new = fn_wait_worker($node, 'postgres', 'kf', $pid);
ok($new, 'killed worker is running again after the crash restart');
ok(fn_poll($node, 'postgres',
	"SELECT dirty_windows > 0 FROM flownode.flows WHERE flow_name = 'kf'", 't', 30),
	'pending windows survived the shared-memory reinitialization');
flush_and_compare('after SIGKILL of the worker');

# 3. terminated twice in a row, with writes in between: still nothing lost
write_changes(3);
$node->safe_psql('postgres',
	"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'flownode flow'");
write_changes(4);
$pid = fn_wait_worker($node, 'postgres', 'kf', $new);
ok($pid, 'worker back after a second termination');
flush_and_compare('after writes while the worker was down');

$node->stop;
done_testing();
