# Writes to the source and to the dimension table: INSERT (multi-row), COPY, late
# rows for a few keys (key marks),
# UPDATE moving rows across windows and keys, DELETE, MERGE, INSERT ... ON
# CONFLICT, TRUNCATE; inside rolled-back transactions and savepoints; from a
# session in another time zone; and two sessions with open transactions
# interleaved (a 'block' step).
package Oracle::Writes;

use strict;
use warnings;
use Oracle::Time qw(sql_lit copy_lit cast_lit delta_sql has_infinity);

my @HOSTS = ("'h0'", "'h1'", "'h2'", "'h3'", "'h4'", "'H1'", "''", 'NULL');

my $COLS = 'id, {{t}}, {{host}}, k, {{v}}, f, b';

# A time value (see Oracle::Time): mostly within the 25 days of the workload,
# some around the daylight saving changes, some late (1990-1995: frozen for
# flows with expire_after), in the future, NULL or infinite.
sub gen_time
{
	my ($r, $c) = @_;
	my $s = $c->{src};
	my %w = (normal => 80, dst => 8, old => 4, future => 3);
	$w{null} = 3 if $s->{t_nullable};
	$w{inf} = 2 if has_infinity($s->{tt});
	my $kind = $r->weighted(%w);
	return 'null' if $kind eq 'null';
	return $r->pick('infinity', '-infinity') if $kind eq 'inf';
	my $us = $Oracle::Time::BASE_US;
	my $sub = $r->chance(0.5) ? $r->below(1000) * 1000 + $r->pick(0, 0, 123) : 0;
	if ($kind eq 'normal') { $us += $r->below(25 * 86400) * 1_000_000 }
	elsif ($kind eq 'dst')
	{
		# 2024-03-10 07:00 UTC (New York) or 2024-03-31 01:00 UTC (Berlin), +-2 h
		my $at = $r->pick(1710054000, 1711846800);
		$us = ($at + $r->range(-7200, 7200)) * 1_000_000;
	}
	elsif ($kind eq 'old') { $us = (631152000 + $r->below(5 * 365 * 86400)) * 1_000_000 }
	else { $us = (1924992000 + $r->below(30 * 86400)) * 1_000_000 }
	return $us + $sub;
}

sub gen_row
{
	my ($r, $c, $id) = @_;
	return {
		id => $id // $c->{next_id}++,
		t => gen_time($r, $c),
		host => $r->pick(@HOSTS),
		k => $r->range(0, 9),
		v => $r->range(-50, 50),
		# multiples of 1/4: sums of float8 are exact in any order
		f => $r->range(-400, 400) / 4,
		b => $r->pick('true', 'false', 'NULL'),
	};
}

sub row_values
{
	my ($c, $row) = @_;
	my $tt = $c->{src}{tt};
	return sprintf('(%d, %s, %s, %d, %d, %s, %s)',
		$row->{id}, sql_lit($tt, $row->{t}), $row->{host}, $row->{k},
		$row->{v}, $row->{f}, $row->{b});
}

sub typed_values
{
	my ($c, $row) = @_;
	my $tt = $c->{src}{tt};
	return sprintf('(%d::bigint, %s, %s::text, %d::int, %d::int, %s::float8, %s::bool)',
		$row->{id}, cast_lit($tt, $row->{t}), $row->{host}, $row->{k},
		$row->{v}, $row->{f}, $row->{b});
}

sub insert_sql
{
	my ($r, $c, $n) = @_;
	my @rows = map { gen_row($r, $c) } 1 .. $n;
	return "INSERT INTO {{src}} ($COLS) VALUES\n  "
	  . join(",\n  ", map { row_values($c, $_) } @rows) . ';';
}

sub copy_sql
{
	my ($r, $c, $n) = @_;
	my $tt = $c->{src}{tt};
	my @lines;
	for (1 .. $n)
	{
		my $row = gen_row($r, $c);
		(my $host = $row->{host}) =~ s/'//g;
		$host = '\N' if $host eq 'NULL';
		push @lines, join("\t",
			$row->{id}, copy_lit($tt, $row->{t}), $host, $row->{k},
			$row->{v}, $row->{f}, $row->{b} eq 'NULL' ? '\N' : $row->{b});
	}
	return "COPY {{src}} ($COLS) FROM STDIN;\n" . join("\n", @lines) . "\n\\.";
}

# An id that may exist (ids are never reused: the generator hands them out).
# An id given out already (a row may hold it, or have held it): never one the counter
# gives out later, which an insert of another session would then wait on.
sub some_id
{
	my ($r, $c) = @_;
	return $c->{next_id} > 1 ? $r->range(1, $c->{next_id} - 1) : $c->{next_id}++;
}

sub id_filter
{
	my ($r, $c) = @_;
	my $m = $r->pick(2, 3, 5, 7, 11);
	return $r->chance(0.2)
	  ? 'id = ' . some_id($r, $c)
	  : 'id % ' . $m . ' = ' . $r->below($m);
}

sub update_sql
{
	my ($r, $c, $filter) = @_;
	my $tt = $c->{src}{tt};
	$filter //= id_filter($r, $c);
	my $kind = $r->pick(qw(time time keys values special));
	my $set;
	if ($kind eq 'time')
	{
		my $secs = $r->pick(1, 37 * 60, -3600, 86400, -2 * 86400, 7 * 86400, 90);
		$set = '{{t}} = ' . delta_sql($tt, '{{t}}', $secs, $r->pick(0, 250));
	}
	elsif ($kind eq 'keys')
	{
		$set = '{{host}} = ' . $r->pick(@HOSTS) . ', k = (k + 1) % 10';
	}
	elsif ($kind eq 'values')
	{
		$set = '{{v}} = {{v}} + 1, f = f + 0.25, b = NOT b';
	}
	else
	{
		$set = '{{t}} = ' . sql_lit($tt, gen_time($r, $c));
		# one row; within the caller's filter, so that two sessions' updates never
		# wait for each other's rows (their filters split the ids by parity)
		$filter = "($filter) AND id = " . some_id($r, $c);
	}
	return "UPDATE {{src}} SET $set WHERE $filter;";
}

sub delete_sql
{
	my ($r, $c, $filter) = @_;
	my $tt = $c->{src}{tt};
	return "DELETE FROM {{src}} WHERE $filter;" if $filter;
	my $k = $r->pick(qw(id id value time));
	return 'DELETE FROM {{src}} WHERE ' . id_filter($r, $c) . ';' if $k eq 'id';
	return 'DELETE FROM {{src}} WHERE {{v}} < ' . $r->range(-50, -30) . ';'
	  if $k eq 'value';
	my $at = $Oracle::Time::BASE_US + $r->below(25 * 86400) * 1_000_000;
	return 'DELETE FROM {{src}} WHERE {{t}} '
	  . $r->pick('<', '>=') . ' '
	  . sql_lit($tt, $at) . ' AND id % 2 = 0;';
}

sub merge_sql
{
	my ($r, $c) = @_;
	my @rows = map { gen_row($r, $c, $r->chance(0.6) ? some_id($r, $c) : undef) }
	  1 .. $r->range(2, 6);
	my %seen;
	@rows = grep { !$seen{ $_->{id} }++ } @rows;
	return "MERGE INTO {{src}} s USING (VALUES\n  "
	  . join(",\n  ", map { typed_values($c, $_) } @rows)
	  . ") AS x(id, t, host, k, v, f, b) ON s.id = x.id\n"
	  . "WHEN MATCHED AND x.v > 0 THEN UPDATE SET {{t}} = x.t, {{v}} = x.v, {{host}} = x.host\n"
	  . "WHEN MATCHED THEN DELETE\n"
	  . "WHEN NOT MATCHED THEN INSERT ($COLS) VALUES (x.id, x.t, x.host, x.k, x.v, x.f, x.b);";
}

# INSERT ... ON CONFLICT on the source's key: (id), or (id, t) when partitioned.
sub upsert_sql
{
	my ($r, $c) = @_;
	my @rows = map { gen_row($r, $c, $r->chance(0.7) ? some_id($r, $c) : undef) }
	  1 .. $r->range(1, 5);
	my %seen;
	@rows = grep { !$seen{ $_->{id} }++ } @rows;
	my $sql = "INSERT INTO {{src}} AS s ($COLS) VALUES\n  "
	  . join(",\n  ", map { row_values($c, $_) } @rows);
	return "$sql\nON CONFLICT DO NOTHING;" if $r->chance(0.25);
	return "$sql\nON CONFLICT (id, {{t}}) DO UPDATE SET {{v}} = s.{{v}} + EXCLUDED.{{v}}, "
	  . '{{host}} = EXCLUDED.{{host}};'
	  if $c->{src}{part};
	return "$sql\nON CONFLICT (id) DO UPDATE SET {{t}} = EXCLUDED.{{t}}, "
	  . '{{v}} = s.{{v}} + EXCLUDED.{{v}}, k = EXCLUDED.k;';
}

# Late rows for a few keys (docs/internals.md §3, *Key marks*): 1-6 rows of one or
# two hosts (NULL among them) into one day of the workload, the day's other groups
# untouched; sometimes under a budget of one key per window, so the day goes whole.
sub late_keys_sql
{
	my ($r, $c) = @_;
	my $tt = $c->{src}{tt};
	my $day = $Oracle::Time::BASE_US + $r->below(25) * 86400 * 1_000_000;
	my @hosts = map { $r->pick(@HOSTS) } 1 .. $r->range(1, 2);
	my @rows;
	for (1 .. $r->range(1, 6))
	{
		my $row = gen_row($r, $c);
		$row->{t} = $day + $r->below(86400) * 1_000_000;
		$row->{host} = $r->pick(@hosts);
		push @rows, $row;
	}
	my $sql = "INSERT INTO {{src}} ($COLS) VALUES\n  " . join(",\n  ", map { row_values($c, $_) } @rows) . ';';
	return $r->chance(0.25)
	  ? "SET flownode.key_marks_per_window = 1;\n$sql\nRESET flownode.key_marks_per_window;"
	  : $sql;
}

# One statement writing the source.
sub write_sql
{
	my ($r, $c) = @_;
	my $k = $r->weighted(insert => 30, copy => 12, update => 22, delete => 12,
		merge => 8, upsert => 10, truncate => 2, late_keys => 14);
	return (late_keys_sql($r, $c), $k) if $k eq 'late_keys';
	return (insert_sql($r, $c, $r->range(1, 12)), $k) if $k eq 'insert';
	return (copy_sql($r, $c, $r->range(1, 20)), $k) if $k eq 'copy';
	return (update_sql($r, $c), $k) if $k eq 'update';
	return (delete_sql($r, $c), $k) if $k eq 'delete';
	return (merge_sql($r, $c), $k) if $k eq 'merge';
	return (upsert_sql($r, $c), $k) if $k eq 'upsert';
	return ('TRUNCATE {{src}};', $k);
}

sub write_step
{
	my ($r, $c) = @_;
	my ($sql, $k) = write_sql($r, $c);
	# a writer in another time zone marks the same windows (docs/reference.md)
	if ($r->chance(0.15))
	{
		my $zone = $r->pick(@Oracle::Gen::ZONES);
		$sql = "SET timezone = '$zone';\n$sql\nSET timezone = '$c->{tz}';";
	}
	return { kind => 'write', what => $k, sql => $sql };
}

sub initial_writes
{
	my ($r, $c) = @_;
	my @steps;
	push @steps, { kind => 'write', what => 'insert', sql => insert_sql($r, $c, $r->range(5, 30)) }
	  for 1 .. $r->range(1, 3);
	return @steps;
}

# Writes in a transaction: rolled back whole, or with a savepoint rolled back.
sub txn_step
{
	my ($r, $c) = @_;
	my ($w1) = write_sql($r, $c);
	my ($w2) = write_sql($r, $c);
	my ($w3) = write_sql($r, $c);
	if ($r->chance(0.35))
	{
		return { kind => 'write', what => 'rolled back transaction',
			sql => "BEGIN;\n$w1\n$w2\nROLLBACK;" };
	}
	return { kind => 'write', what => 'savepoint rolled back',
		sql => "BEGIN;\n$w1\nSAVEPOINT s1;\n$w2\nROLLBACK TO SAVEPOINT s1;\n$w3\nCOMMIT;" };
}

# Two sessions (A and B) with open transactions writing disjoint rows (even and
# odd ids, new ids), interleaved; the main session (M) checks read_flow while
# they are open, and may flush. A block is shrunk as one step.
sub conc_step
{
	my ($r, $c) = @_;
	my @subs = ([ 'A', 'BEGIN;' ], [ 'B', 'BEGIN;' ]);
	for (1 .. $r->range(2, 5))
	{
		my $s = $r->pick('A', 'B');
		my $parity = $s eq 'A' ? 0 : 1;
		my $kind = $r->pick(qw(insert insert update delete));
		my $sql =
		    $kind eq 'insert' ? insert_sql($r, $c, $r->range(1, 5))
		  : $kind eq 'update' ? update_sql($r, $c, "id % 2 = $parity AND id % 3 = " . $r->below(3))
		  : delete_sql($r, $c, "id % 2 = $parity AND id % 5 = " . $r->below(5));
		push @subs, [ $s, $sql ];
		push @subs, [ 'M', '__CHECK__' ] if $r->chance(0.3);
	}
	push @subs, [ 'M', 'SELECT flownode.flush_flow(flow_name) FROM flownode.flows ORDER BY flow_id;' ]
	  if $r->chance(0.3);
	my @ends = ($r->pick('COMMIT;', 'COMMIT;', 'ROLLBACK;'), $r->pick('COMMIT;', 'COMMIT;', 'ROLLBACK;'));
	my @order = $r->chance(0.5) ? ('A', 'B') : ('B', 'A');
	push @subs, [ $order[0], $ends[0] ];
	push @subs, [ 'M', '__CHECK__' ] if $r->chance(0.5);
	push @subs, [ $order[1], $ends[1] ];
	return { kind => 'block', what => 'two sessions', subs => \@subs };
}

sub dim_step
{
	my ($r, $c) = @_;
	my $k = $r->weighted(insert => 4, region => 4, key => 3, delete => 3,
		active => 2, truncate => 1);
	my $dk = $r->below(10);
	my $sql =
	    $k eq 'insert' ? sprintf("INSERT INTO {{dim}} VALUES (%d, %s, %s, %s);",
		$dk, $r->pick(@HOSTS), $r->pick("'r1'", "'r2'", "'r4'", 'NULL'), $r->pick('true', 'false'))
	  : $k eq 'region' ? "UPDATE {{dim}} SET region = " . $r->pick("'r1'", "'r3'", "'r5'", 'NULL')
	  . " WHERE host = " . $r->pick(@HOSTS) . " OR dk = $dk;"
	  : $k eq 'key' ? $r->pick("UPDATE {{dim}} SET dk = (dk + 1) % 10 WHERE dk = $dk;",
		"UPDATE {{dim}} SET host = " . $r->pick(@HOSTS) . " WHERE dk = $dk;")
	  : $k eq 'delete' ? "DELETE FROM {{dim}} WHERE dk = $dk;"
	  : $k eq 'active' ? 'UPDATE {{dim}} SET active = NOT active;'
	  : 'TRUNCATE {{dim}};';
	return { kind => 'write', what => "dimension $k", sql => $sql };
}

1;
