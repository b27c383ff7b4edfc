# Generates one oracle case from a seed: a source table (plain or partitioned,
# with one of the time input types), maybe a dimension table, 1-3 flows within
# what docs/reference.md ("What a flow query may be") says a flow query may be,
# and the list of steps (setup, writes, operations, checks) that Oracle::Exec runs.
#
# SQL in steps is a template: {{src}}, {{t}}, {{host}}, {{v}}, {{dim}} and {{dimv}} stand for
# the current names of the tables and columns, which renames change. The
# executor fills them in when it runs the step, so that a case whose rename was
# dropped by the shrinker still runs with the names it has.
package Oracle::Gen;

use strict;
use warnings;
use Oracle::Rng;
use Oracle::Time qw(time_types sql_type time_expr window_base_type has_infinity);
use Oracle::Writes;
use Oracle::Ops;

our @ZONES = ('UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Kolkata');

# $opt: skip => { feature => 1 } (see oracle.pl --skip), ext => { hll, tdigest }
sub case_plan
{
	my ($seed, $opt) = @_;
	my $r = Oracle::Rng->new($seed);
	my $c = {
		seed => $seed,
		tz => $r->pick(@ZONES),
		opt => $opt,
		next_id => 1,
		step_no => 0,
	};
	gen_source($r, $c);
	gen_dimension($r, $c) if $r->chance(0.35) && !skipped($c, 'join');
	gen_flows($r, $c);
	my @steps = setup_steps($r, $c);
	push @steps, Oracle::Writes::initial_writes($r, $c);
	push @steps, map { create_step($_) } @{ $c->{flows} };
	push @steps, workload($r, $c);
	push @steps, { kind => 'final', what => 'final check' };
	$c->{steps} = \@steps;
	return $c;
}

# The server settings of a run (one node serves all its cases), from the run's
# seed: the flows' shared dirty sets as configured by default (they start at 16
# ranges in the slot and grow into the pool), capped at 8 ranges (every set past
# them merges its nearest ranges), or growing into a pool too small for them all
# (a set that cannot grow merges as a full one does); key marks at the default
# budget (128 groups per window), off, or at 2 groups per window; and a pool of workers as
# large as the flows or of 2, each serving several flows. Returns postgresql.conf
# lines, '' for the defaults.
sub server_settings
{
	my ($seed) = @_;
	my $r = Oracle::Rng->new($seed ^ 0x5E77);
	my $which = $r->weighted(grow => 2, capped => 1, small_pool => 1);
	my $ranges = $which eq 'capped' ? "flownode.dirty_ranges_per_flow = 8\n"
	  : $which eq 'small_pool' ? "flownode.dirty_ranges_memory = '96kB'\n"
	  : '';
	# key marks (docs/internals.md §3, *Key marks*): the default budget (128 groups
	# per window), off (whole windows, and flows created without key triggers), or
	# a budget of 2 (most multi-row writes go past it)
	my $keys = $r->weighted(default => 2, off => 1, narrow => 2);
	$ranges .= $keys eq 'off' ? "flownode.key_marks_per_window = 0\n"
	  : $keys eq 'narrow' ? "flownode.key_marks_per_window = 2\n"
	  : '';
	# the pool of workers: as many as the flows (test/flownode.conf's 16), or 2
	# serving every flow of the run, several per worker (docs/getting-started.md, "Setting up")
	return $ranges . ($r->chance(0.5) ? "flownode.max_workers = 2\n" : '');
}

sub skipped
{
	my ($c, $feature) = @_;
	return $c->{opt}{skip}{$feature};
}

sub gen_source
{
	my ($r, $c) = @_;
	my @types = grep { !skipped($c, "time_$_") } time_types();
	my $tt = $r->pick(@types);
	my $part = $r->chance(0.35) && !skipped($c, 'partitions');
	$c->{src} = {
		tt => $tt,
		part => $part,
		# a partitioned source's key holds the time column, which is then NOT NULL
		t_nullable => !$part && $r->chance(0.6),
		default_part => $part && $r->chance(0.7),
		index_host => $r->chance(0.5),
		index_k => $r->chance(0.5),
	};
}

sub gen_dimension
{
	my ($r, $c) = @_;
	my @rows;
	for my $dk (0 .. 9)
	{
		next if $r->chance(0.2);
		push @rows,
		  sprintf("(%d, %s, %s, %s)",
			$dk,
			$r->pick("'h0'", "'h1'", "'h2'", "'h3'", "'H1'", 'NULL'),
			$r->pick("'r1'", "'r2'", "'r3'", 'NULL'),
			$r->pick('true', 'false'));
	}
	$c->{dim} = { rows => \@rows };
}

# Partitions of the source: two-week ranges around the workload, more made later
# by operations (Oracle::Ops).
sub partition_bounds
{
	my ($c, $i) = @_;
	my $from = $Oracle::Time::BASE_US + ($i - 1) * 14 * 86400 * 1_000_000;
	my $to = $from + 14 * 86400 * 1_000_000;
	my $tt = $c->{src}{tt};
	return (Oracle::Time::sql_lit($tt, $from), Oracle::Time::sql_lit($tt, $to));
}

sub source_ddl
{
	my ($c) = @_;
	my $s = $c->{src};
	my $type = sql_type($s->{tt});
	my $tnull = $s->{t_nullable} ? '' : ' NOT NULL';
	my $pk = $s->{part} ? 'id, {{t}}' : 'id';
	my $sql =
	    "CREATE TABLE {{src}} (id bigint NOT NULL, {{t}} $type$tnull, {{host}} text, "
	  . "k int, {{v}} int, f float8, b bool, x int, PRIMARY KEY ($pk))"
	  . ($s->{part} ? ' PARTITION BY RANGE ({{t}})' : '') . ";\n";
	if ($s->{part})
	{
		for my $i (0 .. 2)
		{
			my ($from, $to) = partition_bounds($c, $i);
			$sql .= "CREATE TABLE src_p$i PARTITION OF {{src}} FOR VALUES FROM ($from) TO ($to);\n";
		}
		$sql .= "CREATE TABLE src_pdef PARTITION OF {{src}} DEFAULT;\n"
		  if $s->{default_part};
		$c->{src}{parts} = 3;
	}
	$sql .= "CREATE INDEX ON {{src}} ({{t}});\n";
	$sql .= "CREATE INDEX ON {{src}} ({{host}});\n" if $s->{index_host};
	$sql .= "CREATE INDEX ON {{src}} (k);\n" if $s->{index_k};
	return $sql;
}

sub setup_steps
{
	my ($r, $c) = @_;
	my $ext = "CREATE EXTENSION flownode;\n";
	$ext .= "CREATE EXTENSION hll;\n" if $c->{opt}{ext}{hll};
	$ext .= "CREATE EXTENSION tdigest;\n" if $c->{opt}{ext}{tdigest};
	my @steps = (
		{ kind => 'setup', what => 'extensions', sql => $ext, essential => 1 },
		{
			kind => 'setup',
			what => 'source table',
			sql => source_ddl($c),
			essential => 1
		});
	if ($c->{dim})
	{
		my $sql = "CREATE TABLE {{dim}} (dk int, host text, region text, active bool);\n";
		$sql .= "INSERT INTO {{dim}} VALUES " . join(', ', @{ $c->{dim}{rows} }) . ";\n"
		  if @{ $c->{dim}{rows} };
		# a view over it, which some joins read (gen_join_every_write)
		$sql .= "CREATE VIEW {{dimv}} AS SELECT dk, lower(host) AS host, upper(region) AS region, active"
		  . " FROM {{dim}} WHERE dk IS NOT NULL;\n";
		push @steps,
		  { kind => 'setup', what => 'dimension table', sql => $sql, essential => 1 };
	}
	return @steps;
}

# ---- flows ----

sub gen_flows
{
	my ($r, $c) = @_;
	my $n = $r->range(1, 3);
	my @flows;
	for my $i (1 .. $n)
	{
		my $prev = $flows[-1];
		my %w = (agg => 12, copy => 2, global => 2, distinct => 2);
		$w{chain} = 6 if $prev && $prev->{chainable} && !skipped($c, 'chain');
		delete @w{qw(copy global distinct)} if skipped($c, 'shapes');
		my $kind = $r->weighted(%w);
		my $f =
		    $kind eq 'chain' ? gen_chain($r, $c, "f$i", $prev)
		  : $kind eq 'copy' ? gen_copy($r, $c, "f$i")
		  : $kind eq 'global' ? gen_global($r, $c, "f$i")
		  : $kind eq 'distinct' ? gen_distinct($r, $c, "f$i")
		  : gen_agg($r, $c, "f$i", $i < $n && $r->chance(0.5));
		push @flows, $f;
	}
	$c->{flows} = \@flows;
}

my @STRIDES = ('1 minute', '7 minutes', '90 seconds', '1 day', '1 hour',
	'15 minutes', '250 milliseconds', '10 seconds', '3 hours 30 minutes',
	'1 day 2 hours', '45 seconds');
my @DATE_STRIDES = ('1 day', '2 days', '7 days', '12 hours');
my @ORIGINS = ('2000-01-01', '2001-02-03 04:05:06.789', '1999-12-31 23:59:30',
	'2024-03-10 02:30:00', '1970-01-01 00:00:00.5');
my @UNITS = qw(second minute hour day week month quarter year decade century
  millennium milliseconds hours Day);
my @TRUNC_ZONES = ('Europe/Berlin', 'America/New_York', 'Asia/Kolkata', 'UTC',
	'Australia/Lord_Howe');

# flownode.time_bucket (TimescaleDB's) and date_bin in a time zone: fixed widths
# with TimescaleDB's origin, an origin or an offset; months and years; the timezone
# form with its origin or offset (buckets in local time, merged across DST
# changes); date_bin(w, ts AT TIME ZONE z, o) AT TIME ZONE z.
my @BUCKET_MONTHS = ('1 month', '2 months', '3 months', '1 year', '5 months');
my @BUCKET_OFFSETS = ('7 hours', '-2.5 minutes', '30 seconds', '1 hour 15 minutes');
my @DATE_BUCKET_WIDTHS = ('1 day', '3 days', '7 days');

sub gen_bucket_window
{
	my ($r, $texpr, $btype) = @_;
	my $type = $btype;
	my $months = $r->chance(0.35);
	my $width =
	    $months ? $r->pick(@BUCKET_MONTHS)
	  : $btype eq 'date' ? $r->pick(@DATE_BUCKET_WIDTHS)
	  :                    $r->pick(@STRIDES);
	if ($btype eq 'timestamptz' && $r->chance(0.45))
	{
		my $zone = $r->pick(@TRUNC_ZONES);
		if (!$months && $r->chance(0.4))
		{
			my $origin = $r->pick(@ORIGINS);
			return {
				sql => "date_bin('$width', $texpr AT TIME ZONE '$zone', timestamp '$origin')"
				  . " AT TIME ZONE '$zone'",
				type => 'timestamptz'
			};
		}
		my $extra = $r->pick('', '', ", origin => timestamptz '2001-02-03 04:05+01'",
			", \"offset\" => '" . $r->pick(@BUCKET_OFFSETS) . "'");
		return { sql => "flownode.time_bucket('$width', $texpr, '$zone'$extra)", type => 'timestamptz' };
	}
	my $how = $r->pick('plain', 'origin', 'offset');
	my $extra = '';
	if ($how eq 'origin')
	{
		my $otype = $btype;
		my $origin = $r->pick(@ORIGINS);
		$origin = substr($origin, 0, 10) if $btype eq 'date';
		$origin .= ' 00:00' if $otype eq 'timestamptz' && $origin !~ /:/;
		$origin .= $r->pick('+00', '+05:30', '-03') if $otype eq 'timestamptz';
		$extra = ", $otype '$origin'";
	}
	elsif ($how eq 'offset')
	{
		# days are whole days over a date; hours and less over a timestamptz
		my $off = $btype eq 'date' ? $r->pick('1 day', '2 days') : $r->pick(@BUCKET_OFFSETS);
		$extra = ", '$off'::interval";
	}
	return { sql => "flownode.time_bucket('$width', $texpr$extra)", type => $type };
}

# A window over $texpr, whose type is $btype; returns { sql, type } where type
# is the window column's type.
sub gen_window
{
	my ($r, $texpr, $btype) = @_;
	return gen_bucket_window($r, $texpr, $btype) if $r->chance(0.3);
	if ($r->chance(0.55))
	{
		my $stride = $r->pick($btype eq 'date' ? @DATE_STRIDES : @STRIDES);
		my $otype = $btype eq 'timestamptz' ? 'timestamptz' : 'timestamp';
		my $origin = $r->pick(@ORIGINS);
		# a zone after a bare date would read as part of it ('2000-01-01-03')
		$origin .= ' 00:00' if $otype eq 'timestamptz' && $origin !~ /:/;
		$origin .= $r->pick('+00', '+05:30', '-03') if $otype eq 'timestamptz';
		return {
			sql => "date_bin('$stride', $texpr, $otype '$origin')",
			type => $otype
		};
	}
	my $unit = $r->pick(@UNITS);
	if ($btype ne 'timestamp' && $r->chance(0.35))
	{
		my $zone = $r->pick(@TRUNC_ZONES);
		return {
			sql => "date_trunc('$unit', $texpr, '$zone')",
			type => 'timestamptz'
		};
	}
	return {
		sql => "date_trunc('$unit', $texpr)",
		type => $btype eq 'timestamp' ? 'timestamp' : 'timestamptz'
	};
}

sub gen_join
{
	my ($r) = @_;
	my $kind = $r->pick(qw(inner_host left_k left_k_active comma_host inner_k),
		qw(range_k or_host ne_active view_host view_left_k lateral_k));
	return { from => 'JOIN {{dim}} d ON s.{{host}} = d.host', where => '' }
	  if $kind eq 'inner_host';
	return { from => 'JOIN {{dim}} d ON d.dk = s.k', where => '' }
	  if $kind eq 'inner_k';
	return { from => 'LEFT JOIN {{dim}} d ON s.k = d.dk', where => '' }
	  if $kind eq 'left_k';
	return { from => 'LEFT JOIN {{dim}} d ON s.k = d.dk AND d.active', where => '' }
	  if $kind eq 'left_k_active';
	return { from => ', {{dim}} d', where => 's.{{host}} = d.host' }
	  if $kind eq 'comma_host';
	return gen_join_every_write($kind);
}

# The joins whose dimension writes mark every window (docs/reference.md, "Joins
# with dimension tables"): a range, OR, <>, the view {{dimv}} over {{dim}}, a
# LATERAL subquery. Each exposes d.dk, d.host, d.region and d.active.
sub gen_join_every_write
{
	my ($kind) = @_;
	my %from = (
		range_k => 'JOIN {{dim}} d ON s.k BETWEEN d.dk AND d.dk + 1',
		or_host => 'LEFT JOIN {{dim}} d ON s.{{host}} = d.host OR s.k = d.dk',
		ne_active => 'LEFT JOIN {{dim}} d ON d.active AND s.k <> d.dk',
		view_host => 'JOIN {{dimv}} d ON s.{{host}} = d.host',
		view_left_k => 'LEFT JOIN {{dimv}} d ON s.k = d.dk',
		lateral_k => 'LEFT JOIN LATERAL (SELECT d0.dk, d0.host, d0.region, d0.active FROM {{dim}} d0'
		  . ' WHERE d0.dk = s.k AND d0.region IS DISTINCT FROM \'r3\') d ON true',
	);
	return { from => $from{$kind}, where => '' };
}

sub key_options
{
	my ($join) = @_;
	my @k = ('s.{{host}} AS host', 'lower(s.{{host}}) AS lhost', 's.k AS k',
		'(s.{{v}} % 3) AS vmod', 's.b AS b');
	push @k, 'd.region AS region' if $join;
	return @k;
}

sub plain_key_options
{
	return ('s.{{host}} AS host', 's.k AS k', 's.b AS b');
}

sub agg_options
{
	my ($c, $join) = @_;
	my @a = (
		'count(*) AS n', 'count(s.f) AS nf',
		'sum(s.{{v}}) AS sv', 'sum(s.f) AS sf',
		'avg(s.{{v}}) AS av', 'avg(s.f) AS af',
		'min(s.{{v}}) AS mnv', 'max(s.f) AS mxf',
		'min(s.{{host}}) AS mnh', 'bool_and(s.b) AS ba',
		'count(DISTINCT s.k) AS dk',
		'percentile_cont(0.5) WITHIN GROUP (ORDER BY s.f) AS p50',
		"string_agg(s.{{host}}, ',' ORDER BY s.{{host}}) AS hosts",
		'json_agg(s.{{v}} ORDER BY s.{{v}}) AS jv',
		# TimescaleDB's first/last: NULL times and values, ties on k (few values)
		'flownode.first(s.f, s.{{t}}) AS ff', 'flownode.last(s.{{host}}, s.{{t}}) AS lh',
		'flownode.first(s.{{v}}, s.k) AS fvk', 'flownode.last(s.f, s.k) AS lfk');
	push @a, 'hll_add_agg(hll_hash_integer(s.k)) AS hk' if $c->{opt}{ext}{hll};
	push @a, 'tdigest(s.f, 100) AS td' if $c->{opt}{ext}{tdigest};
	push @a, 'max(d.region) AS mr', 'count(d.dk) AS nd' if $join;
	return @a;
}

sub gen_eval
{
	my ($r, $required) = @_;
	return undef if !$required && $r->chance(0.5);
	return $r->pick('1 second', '2 seconds', '500 milliseconds', '1 hour');
}

# expire_after is long enough that only the rows of 1990-1995 (Oracle::Writes'
# "old" rows) are frozen, whatever the day the oracle runs (until about 2030).
sub gen_expire
{
	my ($r, $c) = @_;
	return undef if skipped($c, 'expire') || !$r->chance(0.25);
	return $r->pick('4000 days', '6000 days');
}

sub gen_agg
{
	my ($r, $c, $name, $chain_base) = @_;
	my $tt = $c->{src}{tt};
	my $win = gen_window($r, time_expr($tt, 's.{{t}}', $r), window_base_type($tt));
	my $join = $c->{dim} && $r->chance(0.6) ? gen_join($r) : undef;
	# half the time plain source columns only, at least one: the flows whose marks
	# may carry keys (docs/reference.md, "Late rows: marks that carry keys")
	my @keys = !$join && $r->chance(0.5) ? $r->some(1, 3, plain_key_options())
	  : $r->some(0, 3, key_options($join));
	my @aggs = $r->some(1, 4, agg_options($c, $join));
	unshift @aggs, 'count(*) AS n'
	  if $chain_base && !grep { $_ eq 'count(*) AS n' } @aggs;
	my @where = grep { $_ } ($join ? $join->{where} : '');
	push @where,
	  $r->pick('s.{{v}} > -20', "s.{{host}} IS DISTINCT FROM 'h3'",
		's.b IS NOT FALSE', 's.k <> 4', ($join ? ('d.active') : ()))
	  if $r->chance(0.3);
	my $having = $r->chance(0.2)
	  ? ' HAVING ' . $r->pick('count(*) > 1', 'sum(s.{{v}}) > -10', 'max(s.f) IS NOT NULL')
	  : '';
	# the query around its select list of window and keys, and its GROUP BY
	my $query = sub {
		my ($select, $group) = @_;
		return "SELECT $select"
		  . join('', map { ", $_" } @aggs)
		  . ' FROM {{src}} s'
		  . ($join ? " $join->{from}" : '')
		  . (@where ? ' WHERE ' . join(' AND ', @where) : '')
		  . " GROUP BY $group$having";
	};
	my $hidden = gen_hidden_keys($r, $c, $win, \@keys, $query);
	my %f = (
		name => $name,
		kind => $join ? 'agg_join' : 'agg',
		query => $query->("$win->{sql} AS w" . join('', map { ", $_" } @keys),
			join(', ', 1 .. 1 + @keys)),
		windowed => 1,
		wtype => $win->{type},
		keys => [ map { /AS (\w+)$/ } @keys ],
		chainable => scalar(grep { $_ eq 'count(*) AS n' } @aggs),
		eval => gen_eval($r, 0),
		expire => gen_expire($r, $c),
		background => $r->chance(0.15),
		ts => $win->{sql} =~ /^flownode\.time_bucket\(/ && $r->chance(0.5) ? $r->pick('data', 'refresh') : undef,
	);
	%f = (%f, %$hidden) if $hidden;
	return \%f;
}

# Group keys the query does not output (docs/reference.md, "Group keys that are not
# output columns"), in a quarter of the aggregations: some keys grouped but not
# selected; the window grouped but not selected (compared through check_query, the
# same query with the window shown as fn_w; no expire_after, whose check filters on
# w); or the window selected only inside an expression. Returns the fields of the
# flow that change, undef for none.
sub gen_hidden_keys
{
	my ($r, $c, $win, $keys, $query) = @_;
	return undef if skipped($c, 'hidden_keys') || !$r->chance(0.25);
	my @expr = map { /^(.*) AS \w+$/ ? $1 : $_ } @$keys;
	my $mode = $r->weighted(key => (@$keys ? 3 : 0), window => 2, expr => 3);
	my $positions = join('', map { ", $_" } 2 .. 1 + @$keys);
	if ($mode eq 'key')
	{
		my @hide = map { $r->chance(0.5) } @$keys;
		$hide[ $r->range(0, $#hide) ] = 1 unless grep { $_ } @hide;
		my @shown = grep { !$hide[$_] } 0 .. $#$keys;
		my @group = ((1 .. 1 + @shown), map { $expr[$_] } grep { $hide[$_] } 0 .. $#$keys);
		return {
			query => $query->(join(', ', "$win->{sql} AS w", map { $keys->[$_] } @shown),
				join(', ', $r->chance(0.5) ? @group : reverse @group)),
			keys => [ map { $keys->[$_] =~ /AS (\w+)$/ } @shown ],
		};
	}
	if ($mode eq 'window')
	{
		return {
			query => $query->(join(', ', @$keys) || 'count(*) AS fn_n',
				join(', ', $win->{sql}, @expr)),
			check_query => $query->(
				join(', ', "$win->{sql} AS fn_w", @$keys ? @$keys : 'count(*) AS fn_n'),
				"1$positions"),
			hidden_window => 1,
			chainable => 0,
			expire => undef,
		};
	}
	my $as_date = $win->{type} eq 'timestamp' && $r->chance(0.4);
	return {
		query => $query->(
			join(', ',
				$as_date ? "($win->{sql})::date AS w" : "($win->{sql}) + interval '1 minute' AS w",
				@$keys),
			"$win->{sql}$positions"),
		wtype => $win->{type} eq 'date' ? 'timestamp' : $win->{type},
		$as_date ? (chainable => 0) : (),
	};
}

# A flow reading the sink of $base (a chain of flows, docs/reference.md).
sub gen_chain
{
	my ($r, $c, $name, $base) = @_;
	my $win = gen_window($r, 's.w', $base->{wtype});
	my @keys = $r->some(0, scalar @{ $base->{keys} }, @{ $base->{keys} });
	my $sql = "SELECT $win->{sql} AS w"
	  . join('', map { ", s.$_ AS $_" } @keys)
	  . ', count(*) AS c, sum(s.n) AS n, max(s.n) AS mxn'
	  . " FROM $base->{name}_sink s GROUP BY "
	  . join(', ', 1 .. 1 + @keys);
	return {
		name => $name,
		kind => 'chain',
		base => $base->{name},
		query => $sql,
		windowed => 1,
		wtype => $win->{type},
		keys => \@keys,
		chainable => 1,
		eval => gen_eval($r, 0),
		expire => gen_expire($r, $c),
		background => 0,
	};
}

# GreptimeDB's shapes (docs/reference.md "Other shapes").
sub gen_copy
{
	my ($r, $c, $name) = @_;
	# without its source's key id, sometimes: a hidden key column of the sink
	my $id = !skipped($c, 'hidden_keys') && $r->chance(0.25) ? '' : 's.id AS id, ';
	my $sql = "SELECT ${id}s.{{t}} AS t, s.{{host}} AS host, s.{{v}} AS v FROM {{src}} s";
	$sql .= ' WHERE s.{{v}} > 0' if $r->chance(0.5);
	# over a NOT NULL timestamp[tz] column the copy is windowed by its seconds
	# (docs/reference.md "Other shapes"): an infinite time then reaches no window
	my $src = $c->{src};
	my $by_t = !$src->{t_nullable} && $src->{tt} =~ /^timestamp/;
	return {
		name => $name,
		kind => 'copy',
		query => $sql,
		windowed => 0,
		wcol => $by_t ? 't' : undef,
		eval => gen_eval($r, 1),
	};
}

sub gen_global
{
	my ($r, $c, $name) = @_;
	my $sql = 'SELECT count(*) AS n, sum(s.{{v}}) AS sv, max(s.f) AS mxf, '
	  . 'count(DISTINCT s.{{host}}) AS dh FROM {{src}} s';
	$sql .= ' WHERE s.b IS NOT FALSE' if $r->chance(0.4);
	$sql .= ' HAVING count(*) > 3' if $r->chance(0.3);
	return {
		name => $name,
		kind => 'global',
		query => $sql,
		windowed => 0,
		eval => gen_eval($r, 1),
	};
}

sub gen_distinct
{
	my ($r, $c, $name) = @_;
	my $tt = $c->{src}{tt};
	if ($r->chance(0.5))
	{
		my $win = gen_window($r, time_expr($tt, 's.{{t}}', $r), window_base_type($tt));
		return {
			name => $name,
			kind => 'distinct',
			query => "SELECT DISTINCT $win->{sql} AS w, s.{{host}} AS host FROM {{src}} s",
			windowed => 1,
			wtype => $win->{type},
			eval => gen_eval($r, 0),
			expire => gen_expire($r, $c),
		};
	}
	return {
		name => $name,
		kind => 'distinct',
		query => 'SELECT DISTINCT s.{{host}} AS host, s.k AS k FROM {{src}} s',
		windowed => 0,
		eval => gen_eval($r, 1),
	};
}

# A flow whose window is time_bucket, created as TimescaleDB's users write it
# (docs/reference.md, "Coming from TimescaleDB"): CREATE MATERIALIZED VIEW ... WITH
# (timescaledb.continuous) through flownode.execute, time_bucket without its schema;
# WITH DATA, or WITH NO DATA and a CALL refresh_continuous_aggregate over everything,
# or (a background fill) WITH NO DATA of a real-time view. The view is the flow and
# its sink: the sink is renamed to the oracle's name (the flow follows), and its
# eval_interval and expire_after come from add_continuous_aggregate_policy.
sub ts_create_sql
{
	my ($f) = @_;
	my $n = $f->{name};
	(my $query = $f->{query}) =~ s/flownode\.(time_bucket|first|last)\(/$1(/g;
	my $realtime = $f->{background} ? ', timescaledb.materialized_only = false' : '';
	my $data = $f->{background} || $f->{ts} eq 'refresh' ? ' WITH NO DATA' : '';
	my $sql = "SELECT * FROM flownode.execute(\$ts\$CREATE MATERIALIZED VIEW $n"
	  . " WITH (timescaledb.continuous$realtime) AS $query$data\$ts\$);\n"
	  . "ALTER TABLE $n RENAME TO ${n}_sink;\n";
	$sql .= "SELECT * FROM flownode.execute(\$ts\$CALL refresh_continuous_aggregate('${n}_sink', NULL, NULL)\$ts\$);\n"
	  if !$f->{background} && $f->{ts} eq 'refresh';
	my ($start, $every) = map { defined $_ ? "INTERVAL '$_'" : 'NULL' } @$f{qw(expire eval)};
	$sql .= "SELECT * FROM flownode.execute(\$ts\$SELECT add_continuous_aggregate_policy('${n}_sink',"
	  . " start_offset => $start, end_offset => NULL, schedule_interval => $every)\$ts\$);\n"
	  if defined $f->{expire} || defined $f->{eval};
	return $sql . 'SELECT true AS created;';
}

# The create_flow call of $f (also used with or_replace by Oracle::Ops).
sub create_sql
{
	my ($f, %extra) = @_;
	return ts_create_sql($f) if $f->{ts} && !%extra;
	my @args = ("'$f->{name}'", "'$f->{name}_sink'", "\$q\$$f->{query}\$q\$");
	my $eval = exists $extra{eval} ? $extra{eval} : $f->{eval};
	my $expire = exists $extra{expire} ? $extra{expire} : $f->{expire};
	push @args, "eval_interval => '$eval'" if defined $eval;
	push @args, "expire_after => '$expire'" if defined $expire;
	push @args, "backfill => 'background'" if $f->{background} && !$extra{replace};
	push @args, 'or_replace => true' if $extra{replace};
	return 'SELECT flownode.create_flow(' . join(",\n  ", @args) . ') > 0 AS created;';
}

sub create_step
{
	my ($f) = @_;
	return {
		kind => 'sql',
		what => "create_flow $f->{name} ($f->{kind}" . ($f->{ts} ? ", as CREATE MATERIALIZED VIEW)" : ")"),
		sql => create_sql($f),
		creates => $f->{name},
		expires => defined $f->{expire} ? $f->{name} : undef,
	};
}

# ---- the workload: writes, operations and checks, interleaved ----

sub workload
{
	my ($r, $c) = @_;
	my $n = $r->range(18, 40);
	my @steps;
	my %w = (
		write => 40,
		txn => 8,
		conc => 6,
		dim => ($c->{dim} ? 6 : 0),
		check => 9,
		flush_check => 6,
		op => 25,
	);
	delete $w{conc} if skipped($c, 'concurrency');
	for (1 .. $n)
	{
		my $k = $r->weighted(%w);
		push @steps,
		    $k eq 'write' ? Oracle::Writes::write_step($r, $c)
		  : $k eq 'txn' ? Oracle::Writes::txn_step($r, $c)
		  : $k eq 'conc' ? Oracle::Writes::conc_step($r, $c)
		  : $k eq 'dim' ? Oracle::Writes::dim_step($r, $c)
		  : $k eq 'check' ? { kind => 'check', what => 'read_flow = query' }
		  : $k eq 'flush_check' ? { kind => 'flush_check', what => 'flush, sink = query' }
		  : Oracle::Ops::op_step($r, $c);
		# a standby started by an operation is promoted a few steps later
		push @steps, Oracle::Ops::promote_step($r, $c)
		  if defined $c->{promote_in} && $c->{promote_in}-- <= 0;
	}
	push @steps, Oracle::Ops::promote_step($r, $c) if defined $c->{promote_in};
	return @steps;
}

1;
