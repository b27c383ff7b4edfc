# The oracle's checkpoints (docs/internals.md §8 "The randomized oracle"):
#   read     flownode.read_flow(NULL::sink) equals the flow query, as a multiset
#            of row images; the flows view is truthful: a flow it shows active
#            with nothing dirty, nothing in flight (lag NULL) and no refresh
#            between two looks has an exact sink, and a flow that is not bound
#            never says active;
#   flush    after flush_flow the sink equals the query and the view says
#            active with no dirty window;
#   standby  on a hot standby, before a promotion (docs/operations.md "Standby and
#            promotion"): every flow says 'standby' with no counters and no
#            worker; read_flow equals the query; a flow the view shows with no
#            dirty window in the replicated record (and no backfill going on)
#            has an exact sink; a management call fails at once with 25006;
#   log      no PANIC, TRAP or crashed server process in the server log (of
#            every node the case ran on).
# Comparisons are EXCEPT ALL both ways, built per flow from the sink's columns:
# float8 values are compared to 9 significant digits (their last bits depend on
# the order of a sum), json as text, hll and tdigest by what they estimate.
package Oracle::Check;

use strict;
use warnings;
use Time::HiRes ();

# Windows of flows that have (or had) expire_after and end before now() minus it are
# frozen: their sink rows stay as they were (docs/reference.md). Oracle::Gen's
# expire_after values are 4000 or 6000 days: a window that starts after now() - 4000
# days cannot be frozen, and those are compared. (Not a fixed date: a window's start
# can be far from its rows' times, date_trunc('century') of 2024 is 2001, and a chain's
# month of that is frozen while the rows are recent; seed 1235268260.)
our $FROZEN_BEFORE = "now() - interval '4000 days'";

sub norm_expr
{
	my ($col, $type) = @_;
	return "to_char(${col}::float8, '9.99999999EEEE')"
	  if $type =~ /^(double precision|real)$/;
	return "${col}::text" if $type =~ /^(json|xml)$/;
	return "hll_cardinality($col)" if $type eq 'hll';
	# tdigest_percentile is an aggregate (over digests): one row's digest. A digest
	# depends on the order its values were added in (the sink's and the query's scans
	# differ): its median to 5 significant digits (seen: -2.34722222 and -2.34722250
	# for the same rows, seed 1235102688)
	return "(SELECT to_char(tdigest_percentile(z, 0.5), '9.9999EEEE') FROM (VALUES ($col)) v(z))"
	  if $type eq 'tdigest';
	return $col;
}

# [ [name, type], ... ] of the sink's columns.
sub sink_columns
{
	my ($ex, $sink) = @_;
	my $out = $ex->value(
		"SELECT string_agg(attname || ':' || format_type(atttypid, atttypmod), '|' ORDER BY attnum) "
		  . "FROM pg_attribute WHERE attrelid = to_regclass('$sink') AND attnum > 0 AND NOT attisdropped");
	return undef unless defined $out && $out ne '';
	# the hidden key columns are not the query's (docs/reference.md, "Group keys that
	# are not output columns"): the visible ones equal it as a multiset
	return [ grep { $_->[0] !~ /^flownode hidden key / } map { [ split /:/, $_, 2 ] } split /\|/, $out ];
}

# Rows of $a_sql not in $b_sql ('-') and of $b_sql not in $a_sql ('+').
sub diff_sql
{
	my ($cols, $a_sql, $b_sql, $filter) = @_;
	my $proj = join(', ', map { norm_expr(qq{"$_->[0]"}, $_->[1]) . qq{ AS "$_->[0]"} } @$cols);
	my $where = $filter ? " WHERE $filter" : '';
	return "SELECT * FROM (\n"
	  . "  SELECT '-' AS side, * FROM (SELECT $proj FROM ($a_sql) a$where\n"
	  . "    EXCEPT ALL SELECT $proj FROM ($b_sql) b$where) x\n"
	  . "  UNION ALL\n"
	  . "  SELECT '+' AS side, * FROM (SELECT $proj FROM ($b_sql) b$where\n"
	  . "    EXCEPT ALL SELECT $proj FROM ($a_sql) a$where) y) d\n"
	  . "ORDER BY 1 LIMIT 12;";
}

sub flow_filter
{
	my ($ex, $name) = @_;
	return $ex->{expiring}{$name} ? "w >= $FROZEN_BEFORE" : undef;
}

# Rows whose time is NULL or infinite belong to no window and never reach the
# sink (docs/reference.md): the query's rows without a finite window are left out
# (on the query's side only, so that such a row in a sink is still seen).
sub query_side
{
	my ($ex, $name) = @_;
	my ($f) = grep { $_->{name} eq $name } @{ $ex->{case}{flows} };
	my $q = $ex->flow_query($name);
	# a window the query groups by but does not show: the same query showing it as fn_w
	return 'SELECT * FROM (' . $ex->subst($f->{check_query}) . ') q WHERE isfinite(fn_w)'
	  if $f->{check_query};
	return "SELECT * FROM ($q) q WHERE isfinite($f->{wcol})" if $f->{wcol};
	return $f->{windowed} ? "SELECT * FROM ($q) q WHERE isfinite(w)" : $q;
}

# Compares $what ('read_flow' or 'sink') of flow $name with its query. Returns
# (undef) when equal, ('diff', rows) when not, ('error', message) on an ERROR.
sub compare
{
	my ($ex, $name, $what) = @_;
	my $sink = "$name\_sink";
	my $cols = sink_columns($ex, $sink);
	return ('error', "sink $sink is missing") unless $cols;
	my $left = $what eq 'read_flow'
	  ? "SELECT * FROM flownode.read_flow(NULL::$sink)"
	  : "TABLE $sink";
	my $sql = diff_sql($cols, $left, query_side($ex, $name), flow_filter($ex, $name));
	my $res = $ex->q('M', $sql, "check: $what of $name = query (expect no rows)");
	return ('error', $res->{errors}[0]{text}) if @{ $res->{errors} };
	return ('diff', $res->{out}) if $res->{out} =~ /\S/;
	return ();
}

# The flows view's row of $name: { state, dirty, lag_null, runs, marking }.
sub view_row
{
	my ($ex, $name) = @_;
	my $out = $ex->value(
		"SELECT state || '|' || dirty_windows || '|' || (lag IS NULL) || '|' || runs || '|' "
		  . "|| marking_enabled FROM flownode.flows NATURAL JOIN (SELECT flow_id, runs FROM flownode.flow_info) i WHERE flow_name = '$name'");
	return undef unless defined $out && $out ne '';
	my @f = split /\|/, $out;
	return { state => $f[0], dirty => $f[1], lag_null => $f[2] eq 'true',
		runs => $f[3], marking => $f[4] eq 'true' };
}

sub says_exact
{
	my ($v) = @_;
	return $v && $v->{state} eq 'active' && $v->{dirty} == 0 && $v->{lag_null};
}

sub check_unbound
{
	my ($ex, $name, $v) = @_;
	return 1 unless $v && $v->{state} =~ /^(active|backfilling)$/ && !$v->{marking};
	my $row = $ex->value("SELECT row_to_json(f) FROM flownode.flows f WHERE flow_name = '$name'");
	$ex->fail('unbound_active', $name,
		"flow $name says '$v->{state}' but marking_enabled is false (not bound)\n" . ($row // ''));
	return 0;
}

sub check_read_flow
{
	my ($ex, $name) = @_;
	my $v1 = view_row($ex, $name);
	return 1 unless $v1;    # not a flow (any more)
	return 0 unless check_unbound($ex, $name, $v1);
	my ($kind, $detail) = compare($ex, $name, 'read_flow');
	if ($kind && $kind eq 'error')
	{
		# (a flow failing on the primary before a promotion says 'standby' on the
		# standby, and 'waiting_for_worker' until its worker fails again)
		return $ex->refused("read_flow of failing $name", $detail)
		  if $v1->{state} eq 'failing'
		  || ($ex->{was_failing}{$name} && $v1->{state} =~ /^(standby|waiting_for_worker)$/);
		return $ex->fail('read_flow_error', $name, $detail);
	}
	return $ex->fail('read_flow', $name, "read_flow differs from the query:\n$detail")
	  if $kind;
	my ($skind, $sdetail) = compare($ex, $name, 'sink');
	my $v2 = view_row($ex, $name);
	if ($skind && $skind eq 'diff' && says_exact($v1) && says_exact($v2)
		&& $v1->{runs} == $v2->{runs})
	{
		return $ex->fail('view_says_exact', $name,
			"flows view: active, dirty_windows = 0, lag NULL, but the sink differs:\n$sdetail");
	}
	return 1;
}

sub check_read
{
	my ($ex) = @_;
	for my $name ($ex->live_flows)
	{
		return 0 unless check_read_flow($ex, $name);
	}
	return 1;
}

# Flushes every flow, bottom up (chains: the level below first), then checks
# each flushed sink and the view.
sub check_flush
{
	my ($ex) = @_;
	my @flushed;
	for my $name ($ex->live_flows)
	{
		my $v = view_row($ex, $name);
		next unless $v;
		my $res = $ex->q('M', "SELECT flownode.flush_flow('$name') >= 0;", "flush $name");
		if (@{ $res->{errors} })
		{
			next if $v->{state} eq 'paused';
			return $ex->fail('flush_failed', $name, $res->{errors}[0]{text});
		}
		push @flushed, $name;
	}
	for my $name (@flushed)
	{
		my ($kind, $detail) = compare($ex, $name, 'sink');
		return $ex->fail('flush', $name, "after flush_flow the sink differs from the query:\n$detail")
		  if $kind;
		my $v = view_row($ex, $name);
		return $ex->fail('view_after_flush', $name,
			"after flush_flow the view says state '$v->{state}', dirty_windows $v->{dirty}")
		  if $v && !($v->{state} eq 'active' && $v->{dirty} == 0);
		return 0 unless check_unbound($ex, $name, $v);
	}
	return 1;
}

# The server log of $node since $offset, minus the ranges of our own stops.
sub check_log
{
	my ($ex, $node, $offset, $skip) = @_;
	my $log = PostgreSQL::Test::Utils::slurp_file($node->logfile);
	my $text = '';
	my $at = $offset;
	for my $range (@$skip, [ length($log), length($log) ])
	{
		$text .= substr($log, $at, $range->[0] - $at) if $range->[0] > $at;
		$at = $range->[1];
	}
	my @bad = grep {
		/PANIC|TRAP:|terminated by signal|terminated by exception|Assert|exited with exit code [2-9]/
	} split /\n/, $text;
	return 1 unless @bad;
	return $ex->fail('server_log', undef,
		"in the log of node " . $node->name . ":\n"
		  . join("\n", @bad[ 0 .. ($#bad < 9 ? $#bad : 9) ]));
}

# On the hot standby the case's session M is connected to (Oracle::Exec::run_promote).
sub check_standby
{
	my ($ex, $call_flow) = @_;
	# The standby's replay paused for the checks: the primary still runs, and a
	# refresh replayed between the view's statement and a comparison would change a
	# sink (and its downstream flows' records) after the view was read.
	my $res = $ex->q('M',
		"SELECT pg_wal_replay_pause();\n"
		  . "DO \$\$BEGIN WHILE pg_get_wal_replay_pause_state() <> 'paused' LOOP PERFORM pg_sleep(0.05); END LOOP; END\$\$;",
		'the standby holds still while it is checked');
	return $ex->fail('standby_view', undef, $res->{errors}[0]{text}) if @{ $res->{errors} };
	$res = $ex->q('M',
		"SELECT pg_is_in_recovery(), flow_name, state, dirty_windows, backfill_windows_total IS NULL,\n"
		  . "  runs, failures, worker_pid IS NULL, last_error IS NULL FROM flownode.flows NATURAL JOIN (SELECT flow_id, runs, failures, backfill_windows_total FROM flownode.flow_info) i ORDER BY flow_name;",
		'check on the standby: every flow standby, no counters, no worker (docs/operations.md)');
	return $ex->fail('standby_view', undef, $res->{errors}[0]{text}) if @{ $res->{errors} };
	my %row;
	for my $line (split /\n/, $res->{out})
	{
		my ($rec, $name, $state, $dirty, $nobf, $runs, $fails, $nopid, $noerr) = split /\|/, $line;
		return $ex->fail('standby_view', undef, 'the standby is not in recovery') if $rec ne 't';
		return $ex->fail('standby_view', $name, "on the standby the flows view says: $line")
		  unless $state eq 'standby' && $runs == 0 && $fails == 0 && $nopid eq 't' && $noerr eq 't';
		$row{$name} = { dirty => $dirty, backfill => $nobf ne 't' };
	}
	# read_flow is exact there (docs/reference.md "flownode.read_flow")
	return 0 unless check_read($ex);
	# the promise, where a standby's reader sees it: no dirty window, an exact sink
	for my $name (grep { $row{$_} } $ex->live_flows)
	{
		next if $row{$name}{dirty} != 0 || $row{$name}{backfill};
		my ($kind, $detail) = compare($ex, $name, 'sink');
		return $ex->fail('standby_view_says_exact', $name,
			"on the standby the view shows no dirty window but the sink differs:\n"
			  . ($detail // ''))
		  if $kind;
	}
	$ex->q('M', 'SELECT pg_wal_replay_resume();', 'the standby replays again');
	my $t0 = Time::HiRes::time();
	$res = $ex->q('M', "SELECT flownode.flush_flow('$call_flow');",
		'on the standby a management call fails at once, 25006 (docs/operations.md)');
	my $secs = Time::HiRes::time() - $t0;
	my $e = $res->{errors}[0];
	return $ex->fail('standby_call', $call_flow,
		"flush_flow on the standby: " . ($e ? "$e->{code}: $e->{text}" : "no error ($res->{out})")
		  . sprintf(', after %.1f s', $secs))
	  unless $e && $e->{code} eq '25006' && $secs < 5;
	return 1;
}

1;
