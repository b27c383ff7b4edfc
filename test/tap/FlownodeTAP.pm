# Helpers shared by flownode's TAP tests (test/tap/*.pl). run_all.sh runs prove
# with -I test/tap, so `use FlownodeTAP;` finds this file.
package FlownodeTAP;

use strict;
use warnings;
use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);

our @EXPORT = qw(fn_node fn_try fn_poll fn_worker_pid fn_wait_worker
  fn_sink_diff fn_wait_reinit fn_flow_field fn_wait_log);

# A started node. TEMP_CONFIG (test/flownode.conf) already preloads flownode;
# @conf lines are appended after it, so they win. PostgreSQL::Test::Cluster turns
# restart_after_crash off; the crash tests need the server's default (on).
sub fn_node
{
	my ($name, @conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf',
		join("\n", 'restart_after_crash = on', @conf, ''));
	$node->start;
	return $node;
}

# Runs $sql, never dies: returns its output, or undef when psql failed (the
# server may be restarting).
sub fn_try
{
	my ($node, $db, $sql) = @_;
	my ($out, $err) = ('', '');
	my $rc = $node->psql($db, $sql, stdout => \$out, stderr => \$err);
	return $rc == 0 ? $out : undef;
}

# Polls $sql until it prints $expected (default 't'), at most $secs seconds
# (default 60). Returns 1 on success, 0 (with a diag) on timeout.
sub fn_poll
{
	my ($node, $db, $sql, $expected, $secs) = @_;
	$expected //= 't';
	$secs //= 60;
	my $deadline = time() + $secs;
	my $last;
	while (1)
	{
		$last = fn_try($node, $db, $sql);
		return 1 if defined $last && $last eq $expected;
		last if time() > $deadline;
		usleep(200_000);
	}
	diag("gave up after ${secs}s polling: $sql\nexpected: $expected\nlast: "
		  . ($last // '(error)'));
	return 0;
}

# pid of the pool worker serving the flow in $db ('' if none), as the flows view
# shows it: a worker may serve several flows (docs/internals.md §6).
sub fn_worker_pid
{
	my ($node, $db, $flow) = @_;
	return fn_try($node, $db,
		"SELECT f.worker_pid FROM flownode.flows f JOIN pg_stat_activity a ON a.pid = f.worker_pid "
		  . "WHERE f.flow_name = '$flow' AND a.backend_type = 'flownode flow'") // '';
}

# Waits until a running worker serves $flow in $db, with a pid other than
# $old_pid (if given). Returns the new pid, or '' on timeout.
sub fn_wait_worker
{
	my ($node, $db, $flow, $old_pid, $secs) = @_;
	$old_pid = 0 unless $old_pid && $old_pid =~ /^\d+$/;
	my $ok = fn_poll($node, $db,
		"SELECT count(*) = 1 AND bool_and(f.worker_pid <> $old_pid) FROM flownode.flows f "
		  . "JOIN pg_stat_activity a ON a.pid = f.worker_pid "
		  . "WHERE f.flow_name = '$flow' AND a.backend_type = 'flownode flow'", 't', $secs // 60);
	return $ok ? fn_worker_pid($node, $db, $flow) : '';
}

# Rows in the sink but not in the query, plus rows in the query but not in the
# sink (EXCEPT ALL both ways): 0 when the sink is exactly the query's result.
sub fn_sink_diff
{
	my ($node, $db, $sink, $query) = @_;
	return $node->safe_psql($db,
		"SELECT (SELECT count(*) FROM (TABLE $sink EXCEPT ALL ($query)) a)"
		  . " + (SELECT count(*) FROM (($query) EXCEPT ALL TABLE $sink) b)");
}

# One column of flownode.flows for $flow.
sub fn_flow_field
{
	my ($node, $db, $flow, $col) = @_;
	return $node->safe_psql($db,
		"SELECT $col FROM flownode.flows WHERE flow_name = '$flow'");
}

# After a backend was SIGKILLed: waits for the postmaster to reinitialize
# shared memory (log after $offset) and to accept connections again.
sub fn_wait_reinit
{
	my ($node, $offset) = @_;
	return 0
	  unless fn_wait_log($node,
		qr/all server processes terminated; reinitializing/, $offset, 60);
	return fn_poll($node, 'postgres', 'SELECT 1', '1', 60);
}

# Waits at most $secs seconds (default 30) for the server log after $offset to
# match $re. Returns 1 or 0.
sub fn_wait_log
{
	my ($node, $re, $offset, $secs) = @_;
	my $deadline = time() + ($secs // 30);
	while (1)
	{
		return 1 if $node->log_contains($re, $offset);
		return 0 if time() > $deadline;
		usleep(200_000);
	}
}

1;
