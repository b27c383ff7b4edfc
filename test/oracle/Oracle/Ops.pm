# Operations interleaved with the writes: flownode's calls (flush_flow,
# refresh_flow, pause/resume, alter_flow, create_flow or_replace), DDL on the
# source (partitions, renames, columns added, dropped and retyped), an
# immediate stop and restart, pg_dump + pg_restore into a new database, a
# pg_upgrade into a new cluster, and a failover: a streaming hot standby started from a base backup, promoted a few
# steps later (the old primary stopped), the case going on there.
# An ERROR of an operation is a refusal, not a failure (Oracle::Exec).
package Oracle::Ops;

use strict;
use warnings;
use Oracle::Time qw(sql_lit);

sub op_step
{
	my ($r, $c) = @_;
	my %w = (
		flush => 5, refresh => 4, pause => 3, alter => 4, replace => 2,
		rename => 3, column => 2, retype => 2, restart => 2, dump => 3,
		standby => 1, upgrade => 1, partition => ($c->{src}{part} ? 5 : 0));
	delete $w{restart} if Oracle::Gen::skipped($c, 'restart');
	# not while a standby waits for its promotion; one per case (each costs seconds)
	delete $w{upgrade}
	  if Oracle::Gen::skipped($c, 'upgrade') || defined $c->{promote_in} || $c->{upgraded};
	delete $w{dump} if Oracle::Gen::skipped($c, 'dump');
	# one standby at a time, two promotions per case at most (each costs seconds)
	delete $w{standby}
	  if Oracle::Gen::skipped($c, 'standby') || defined $c->{promote_in}
	  || ($c->{promotions} // 0) >= 2;
	my $k = $r->weighted(%w);
	my $f = $r->pick(@{ $c->{flows} });
	return standby_op($r, $c) if $k eq 'standby';
	return flush_op($r, $c, $f) if $k eq 'flush';
	return refresh_op($r, $c, $f) if $k eq 'refresh';
	return pause_op($r, $c, $f) if $k eq 'pause';
	return alter_op($r, $c, $f) if $k eq 'alter';
	return replace_op($r, $c, $f) if $k eq 'replace';
	return rename_op($r, $c) if $k eq 'rename';
	return column_op($r, $c) if $k eq 'column';
	return retype_op($r, $c) if $k eq 'retype';
	return partition_op($r, $c) if $k eq 'partition';
	return { kind => 'restart', what => 'immediate stop and start' } if $k eq 'restart';
	return upgrade_op($c) if $k eq 'upgrade';
	return {
		kind => 'dump',
		what => 'pg_dump and restore',
		format => $r->pick('custom', 'custom', 'plain'),
		jobs => $r->pick(1, 2),
		exclude_sinks => $r->chance(0.3),
	};
}

# pg_upgrade of the case's node into a new cluster, where the case goes on.
sub upgrade_op
{
	my ($c) = @_;
	$c->{upgraded} = 1;
	return { kind => 'upgrade', what => 'pg_upgrade to a new cluster' };
}

# A streaming hot standby of the case's node, from a base backup; Oracle::Gen
# puts the promotion 0-5 steps later (the writes in between stream to it).
sub standby_op
{
	my ($r, $c) = @_;
	$c->{promote_in} = $r->range(0, 5);
	return { kind => 'standby', what => 'base backup, streaming hot standby' };
}

# The failover: checks on the standby (docs/operations.md "Standby and promotion"),
# the primary stopped (a crash or a clean shutdown), the standby promoted
# (pg_ctl promote or pg_promote()); the case goes on on the promoted node.
sub promote_step
{
	my ($r, $c) = @_;
	delete $c->{promote_in};
	$c->{promotions}++;
	my $stop = $r->pick('immediate', 'immediate', 'fast');
	my $how = $r->pick('pg_ctl', 'pg_promote');
	return {
		kind => 'promote',
		what => "promote the standby (primary stopped: $stop; $how)",
		stop => $stop,
		how => $how,
		call_flow => $r->pick(@{ $c->{flows} })->{name},
	};
}

sub flush_op
{
	my ($r, $c, $f) = @_;
	my $cascade = $r->chance(0.3) ? ', cascade => true' : '';
	return { kind => 'sql', what => 'flush_flow',
		sql => "SELECT flownode.flush_flow('$f->{name}'$cascade) >= 0 AS flushed;" };
}

sub refresh_op
{
	my ($r, $c, $f) = @_;
	my $lit = sub {
		my $us = $Oracle::Time::BASE_US + $r->range(-2, 26) * 86400 * 1_000_000
		  + $r->below(86400) * 1_000_000;
		return sql_lit('timestamptz', $us);
	};
	my $range = $r->chance(0.4) ? '' : ', ' . $lit->() . ', NULL';
	$range = ', ' . join(', ', sort($lit->(), $lit->())) if $r->chance(0.4);
	return { kind => 'sql', what => 'refresh_flow',
		sql => "SELECT flownode.refresh_flow('$f->{name}'$range) >= 0 AS refreshed;" };
}

sub pause_op
{
	my ($r, $c, $f) = @_;
	my $call = $r->chance(0.5) ? 'pause_flow' : 'resume_flow';
	return { kind => 'sql', what => $call,
		sql => "SELECT flownode.$call('$f->{name}');" };
}

sub alter_op
{
	my ($r, $c, $f) = @_;
	my @choices = ("eval_interval => '" . $r->pick('1 second', '3 seconds', '1 hour') . "'",
		'reset_eval_interval => true', "comment => 'oracle'");
	my %step = (kind => 'sql', what => 'alter_flow');
	if ($f->{windowed} && !$f->{hidden_window} && !Oracle::Gen::skipped($c, 'expire'))
	{
		push @choices, "expire_after => '" . $r->pick('4000 days', '6000 days') . "'",
		  'reset_expire_after => true';
	}
	my $arg = $r->pick(@choices);
	$step{expires} = $f->{name} if $arg =~ /^expire_after/;
	$step{sql} = "SELECT flownode.alter_flow('$f->{name}', $arg);";
	return \%step;
}

sub replace_op
{
	my ($r, $c, $f) = @_;
	my $eval = Oracle::Gen::gen_eval($r, !$f->{windowed});
	my $expire = $f->{windowed} && !$f->{hidden_window} ? Oracle::Gen::gen_expire($r, $c) : undef;
	return {
		kind => 'sql',
		what => "create_flow $f->{name} or_replace",
		sql => Oracle::Gen::create_sql($f, replace => 1, eval => $eval, expire => $expire),
		creates => $f->{name},
		expires => defined $expire ? $f->{name} : undef,
	};
}

# A rename of a column the flows read, or of a table; the flows follow it (user
# guide §11 "DDL on the tables of a flow"). The generator alternates between the
# first name and another, so names come back.
sub rename_op
{
	my ($r, $c) = @_;
	my @what = qw(host v t src);
	push @what, 'dim', 'dimv' if $c->{dim};
	my $key = $r->pick(@what);
	my $renamed = $c->{renamed}{$key} = !$c->{renamed}{$key};
	my $to = $renamed ? "${key}_r" : $key;
	my $sql =
	    $key eq 'dimv' ? "ALTER VIEW {{dimv}} RENAME TO $to;"
	  : $key =~ /^(src|dim)$/ ? "ALTER TABLE {{$key}} RENAME TO $to;"
	  : "ALTER TABLE {{src}} RENAME COLUMN {{$key}} TO $to;";
	return { kind => 'sql', what => "rename $key", sql => $sql, rename => [ $key, $to ] };
}

sub column_op
{
	my ($r, $c) = @_;
	my $n = ++$c->{step_no};
	return $r->pick(
		{ kind => 'sql', what => 'add column',
			sql => "ALTER TABLE {{src}} ADD COLUMN extra$n int DEFAULT $n;" },
		{ kind => 'sql', what => 'drop unused column',
			sql => 'ALTER TABLE {{src}} DROP COLUMN IF EXISTS x;' });
}

# Type changes: of a column no flow reads (int to bigint), and rewrites with
# USING that keep the type but change every value (every window changes).
sub retype_op
{
	my ($r, $c) = @_;
	my $sql = $r->pick(
		'ALTER TABLE {{src}} ALTER COLUMN x TYPE bigint;',
		'ALTER TABLE {{src}} ALTER COLUMN {{v}} TYPE int USING {{v}} * 2;',
		'ALTER TABLE {{src}} ALTER COLUMN f TYPE float8 USING f * 2;',
		'ALTER TABLE {{src}} ALTER COLUMN k TYPE int USING (k + 1) % 10;');
	return { kind => 'sql', what => 'alter column type', sql => $sql };
}

sub partition_op
{
	my ($r, $c) = @_;
	my $k = $r->pick(qw(create detach attach drop truncate));
	my $p = 'src_p' . $r->below($c->{src}{parts} + 1);
	if ($k eq 'create')
	{
		my $i = $c->{src}{parts}++;
		my ($from, $to) = Oracle::Gen::partition_bounds($c, $i);
		return { kind => 'sql', what => 'create partition',
			sql => "CREATE TABLE src_p$i PARTITION OF {{src}} FOR VALUES FROM ($from) TO ($to);" };
	}
	if ($k eq 'attach')
	{
		my $i = $r->below($c->{src}{parts});
		my ($from, $to) = Oracle::Gen::partition_bounds($c, $i);
		return { kind => 'sql', what => 'attach partition',
			sql => "ALTER TABLE {{src}} ATTACH PARTITION src_p$i FOR VALUES FROM ($from) TO ($to);" };
	}
	return { kind => 'sql', what => 'detach partition',
		sql => "ALTER TABLE {{src}} DETACH PARTITION $p;" } if $k eq 'detach';
	return { kind => 'sql', what => 'truncate partition', sql => "TRUNCATE $p;" }
	  if $k eq 'truncate';
	return { kind => 'sql', what => 'drop partition', sql => "DROP TABLE $p;" };
}

1;
