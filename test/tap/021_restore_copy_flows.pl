# A whole-database restore binds every flow by itself (the one-row gap the
# randomized oracle found; docs/operations.md "Backup and restore", docs/internals.md
# §9).
#
# A copy flow (no aggregation) is keyed by its source's primary key: its query does
# not analyse without it, so it cannot be bound before the restore has built that key.
# pg_dump's post-data section builds every constraint before any ALTER INDEX ... ATTACH
# PARTITION, so over a partitioned source the sink's key always comes while the
# source's primary key is still invalid (ALTER TABLE ONLY ... ADD CONSTRAINT makes it
# valid only when its last partition's index is attached); over a plain source, when
# the sink's key sorts before the source's. Such a flow stayed 'restored': nothing
# marked the writes after the restore, and read_flow returned the sink as the dump
# left it (50 of 50 new rows missing) while flush_flow refused.
#
# A flow of one row (aggregates without GROUP BY) has no sink key at all, so no
# post-data command bound it: it stayed 'restored' after every whole restore until
# refresh_flow. The COPY of flownode.flow binds it now, and a COPY into its sink after
# that marks its window.
#
# Checked after pg_restore, pg_restore -j 2, psql of a plain dump and a dump without
# the one-row flows' sink rows (--exclude-table-data), for copy flows over a
# partitioned and over a plain source, for the other shapes over the partitioned
# source (SELECT DISTINCT, a windowed GROUP BY), and for two one-row flows (over the
# partitioned source, and over the plain one with a WHERE): every flow bound by the
# restore, no WARNING, read_flow the query before any flush, writes after the restore
# marked, the sink the query after a flush (one row for a one-row flow). A data-only
# restore binds the one-row flows too (exact: their one window is recomputed), except
# with --disable-triggers, where they stay 'restored' as every other flow does.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

my $node = fn_node('restore_copy', 'max_worker_processes = 48');
my $dir = PostgreSQL::Test::Utils::tempdir;

# flow => [sink, query]; the sinks' names sort before their sources' (their keys are
# built first)
my %flows = (
	ps_copy => [ 'a_copy', q{SELECT ts, id, v FROM ps WHERE v % 3 <> 0} ],
	ps_distinct => [
		'a_distinct',
		q{SELECT DISTINCT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, v % 5 AS k FROM ps}
	],
	ps_hourly => [
		'a_hourly',
		q{SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, count(*) AS n, sum(v) AS s
  FROM ps GROUP BY 1}
	],
	t_copy => [ 'a_tcopy', q{SELECT id, at, note FROM tbl WHERE note <> 'skip'} ],);
my @names = sort keys %flows;
# flows of one row (aggregates without GROUP BY): their sinks have no key for a
# restore to build; the COPY of flownode.flow binds them
my %one_row = (
	ps_total => [ 'a_total', q{SELECT count(*) AS n, sum(v) AS s FROM ps} ],
	t_total => [
		'a_ttotal', q{SELECT count(*) AS n, max(at) AS last_at, sum(id) AS s FROM tbl WHERE note <> 'skip'}
	],);
my @one_row = sort keys %one_row;

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', qq{
CREATE EXTENSION flownode;
CREATE TABLE ps (id int, ts timestamptz NOT NULL, v int, PRIMARY KEY (id, ts)) PARTITION BY RANGE (ts);
CREATE TABLE ps_1 PARTITION OF ps FOR VALUES FROM ('2024-01-01') TO ('2024-01-02');
CREATE TABLE ps_2 PARTITION OF ps FOR VALUES FROM ('2024-01-02') TO ('2024-01-03');
CREATE TABLE ps_def PARTITION OF ps DEFAULT;
CREATE INDEX ON ps (ts);
INSERT INTO ps SELECT i, timestamptz '2024-01-01' + i * interval '7 minutes', i FROM generate_series(0, 599) i;
CREATE TABLE tbl (id int PRIMARY KEY, at timestamp NOT NULL, note text);
CREATE INDEX ON tbl (at);
INSERT INTO tbl SELECT i, timestamp '2024-01-01' + i * interval '1 minute',
  CASE WHEN i % 4 = 0 THEN 'skip' ELSE 'n' || i END FROM generate_series(0, 299) i;
SELECT flownode.create_flow('ps_copy', 'a_copy', \$q\$$flows{ps_copy}[1]\$q\$, eval_interval => '1 hour');
SELECT flownode.create_flow('ps_total', 'a_total', \$q\$$one_row{ps_total}[1]\$q\$, eval_interval => '1 hour');
SELECT flownode.create_flow('t_total', 'a_ttotal', \$q\$$one_row{t_total}[1]\$q\$, eval_interval => '1 hour');
SELECT flownode.create_flow('ps_distinct', 'a_distinct', \$q\$$flows{ps_distinct}[1]\$q\$,
  eval_interval => '1 hour');
SELECT flownode.create_flow('ps_hourly', 'a_hourly', \$q\$$flows{ps_hourly}[1]\$q\$, eval_interval => '1 hour');
SELECT flownode.create_flow('t_copy', 'a_tcopy', \$q\$$flows{t_copy}[1]\$q\$, eval_interval => '1 hour');
});
ok(fn_wait_worker($node, 'src', $_), "src: worker of $_ runs") for @names, @one_row;
# pending at dump time (eval_interval of an hour: nothing refreshes on its own)
$node->safe_psql('src', q{
INSERT INTO ps VALUES (9000, '2024-01-01 03:03', 1), (9001, '2024-05-05', 2);
DELETE FROM ps WHERE id < 5;
UPDATE tbl SET note = 'changed' WHERE id BETWEEN 10 AND 14;
});
cmp_ok(fn_sink_diff($node, 'src', @{ $flows{$_} }), '>', 0, "src: $_ has windows pending at dump time")
  for @names;
cmp_ok(fn_sink_diff($node, 'src', @{ $one_row{ps_total} }), '>', 0, 'src: ps_total is pending at dump time');
# t_total clean: no pending row of its own in the dump (staged_restore)
$node->safe_psql('src', "SELECT flownode.flush_flow('t_total')");
is(fn_sink_diff($node, 'src', @{ $one_row{t_total} }), '0', 'src: t_total is clean at dump time');
is( $node->safe_psql('src', "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'a_copy_pkey'"),
	'PRIMARY KEY (id, ts)', 'the copy\'s sink is keyed by the source\'s primary key');

$node->command_ok([ 'pg_dump', '-Fc', '-f', "$dir/full.fc", '-d', $node->connstr('src') ], 'pg_dump -Fc');
$node->command_ok([ 'pg_dump', '-f', "$dir/full.sql", '-d', $node->connstr('src') ], 'pg_dump (plain)');
$node->command_ok(
	[
		'pg_dump', '-Fc', '-f', "$dir/nosink.fc", '--exclude-table-data', 'a_total',
		'--exclude-table-data', 'a_ttotal', '-d', $node->connstr('src')
	],
	'pg_dump -Fc without the one-row flows\' sink rows');
$node->command_ok([ 'pg_dump', '--schema-only', '-f', "$dir/schema.sql", '-d', $node->connstr('src') ],
	'pg_dump --schema-only');
$node->command_ok([ 'pg_dump', '--data-only', '-f', "$dir/data.sql", '-d', $node->connstr('src') ],
	'pg_dump --data-only');

# Runs a restore; its output must hold no WARNING (a flow the restore cannot bind says
# so with one; pg_restore prints the server's messages only with --verbose).
sub restore_ok
{
	my ($db, $what, @cmd) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	my ($ok, $out, $err) = (0, '', '');
	$ok = IPC::Run::run([ @cmd, '-d', $node->connstr($db) ], '>', \$out, '2>', \$err);
	ok($ok, "$db: $what") or diag($err);
	unlike($err, qr/WARNING/, "$db: the restore warns of nothing") or diag($err);
}

# read_flow's rows against the query's, as fn_sink_diff compares a sink's
sub read_diff
{
	my ($db, $sink, $query) = @_;
	my $read = "SELECT * FROM flownode.read_flow(NULL::$sink)";
	return $node->safe_psql($db,
		"SELECT (SELECT count(*) FROM (($read) EXCEPT ALL ($query)) a)"
		  . " + (SELECT count(*) FROM (($query) EXCEPT ALL ($read)) b)");
}

# pg_restore -j may build a sink's key before the flows' rows are restored: such a flow
# stays 'restored' (docs/operations.md, "Backup and restore"), read_flow refuses it and refresh_flow binds
# it (the order is pg_restore's: a copy flow over a partitioned source is usually bound
# when the last partition's index is attached, after the flows' rows). A one-row flow
# is bound by the COPY of its row, in any order.
sub check_restored
{
	my ($db, $parallel) = @_;
	my $left = $node->safe_psql($db,
		q{SELECT string_agg(flow_name, ',' ORDER BY flow_name) FROM flownode.flows
            WHERE state NOT IN ('active', 'waiting_for_worker')});
	is($left, '', "$db: the restore bound every flow") unless $parallel;
	for my $f (@one_row)
	{
		like(fn_flow_field($node, $db, $f, 'state'), qr/^(active|waiting_for_worker)$/,
			"$db: the restore bound the one-row flow $f");
		is(fn_flow_field($node, $db, $f, 'marking_enabled'), 't', "$db: $f marks");
		is(read_diff($db, @{ $one_row{$f} }), '0', "$db: $f: read_flow is the query right after the restore");
	}
	for my $f ($parallel ? grep { !$one_row{$_} } split(/,/, $left) : ())
	{
		my ($rc, $out, $err) = $node->psql($db, "SELECT * FROM flownode.read_flow(NULL::$flows{$f}[0])");
		like($err, qr/flow "$f" was restored and is not bound/, "$db: read_flow refuses $f, left unbound by -j");
		$node->safe_psql($db, "SELECT flownode.refresh_flow('$f')");
	}
	is( $node->safe_psql($db,
			q{SELECT string_agg(c.relname, ',' ORDER BY c.relname) FROM pg_partition_tree('ps') p
                JOIN pg_class c ON c.oid = p.relid WHERE p.isleaf AND NOT EXISTS (SELECT FROM pg_trigger t
                WHERE t.tgrelid = c.oid AND t.tgfoid = 'flownode.mark_insert()'::regprocedure)}),
		'', "$db: every partition of the restored source has the marking triggers");
	ok(fn_wait_worker($node, $db, $_), "$db: worker of $_ runs") for @names, @one_row;

	# writes after the restore, straight into partitions too
	$node->safe_psql($db, q{
INSERT INTO ps SELECT 10000 + i, timestamptz '2024-01-01 12:00' + i * interval '31 minutes', i
  FROM generate_series(1, 50) i;
INSERT INTO ps_1 VALUES (20000, '2024-01-01 05:05', 77);
UPDATE ps SET v = v + 1 WHERE id BETWEEN 100 AND 120;
UPDATE ps SET ts = ts + interval '1 day' WHERE id = 130;
DELETE FROM ps WHERE id BETWEEN 200 AND 210;
INSERT INTO tbl SELECT 1000 + i, timestamp '2024-02-01' + i * interval '1 second', 'new' FROM generate_series(1, 50) i;
UPDATE tbl SET note = 'skip' WHERE id BETWEEN 20 AND 25;
DELETE FROM tbl WHERE id BETWEEN 30 AND 33;
});
	my %all = (%flows, %one_row);
	for my $f (@names, @one_row)
	{
		my ($sink, $query) = @{ $all{$f} };
		is(read_diff($db, $sink, $query), '0', "$db: $f: read_flow is the query before any flush");
	}
	for my $f (@names, @one_row)
	{
		$node->safe_psql($db, "SELECT flownode.flush_flow('$f')");
		is(fn_sink_diff($node, $db, @{ $all{$f} }), '0', "$db: $f: the sink is the query after a flush");
	}
	check_one_row_marks($db);
	$node->safe_psql('postgres', "DROP DATABASE $db"); # its workers: max_worker_processes
}

# The one-row flows' sinks hold exactly one row, and a write to their sources, clean
# now, is marked: read_flow has it before a flush, the sink after one.
sub check_one_row_marks
{
	my ($db) = @_;
	for my $f (@one_row)
	{
		my ($sink, $query) = @{ $one_row{$f} };
		is($node->safe_psql($db, "SELECT count(*) FROM $sink"), '1', "$db: $f: its sink holds one row");
	}
	$node->safe_psql($db, q{INSERT INTO ps VALUES (30000, '2024-01-02 07:00', 5);
INSERT INTO tbl VALUES (5000, '2024-03-01', 'late');});
	for my $f (@one_row)
	{
		my ($sink, $query) = @{ $one_row{$f} };
		cmp_ok(fn_sink_diff($node, $db, $sink, $query), '>', 0, "$db: $f: the write changed its answer");
		is(read_diff($db, $sink, $query), '0', "$db: $f: read_flow has the write (it was marked)");
		$node->safe_psql($db, "SELECT flownode.flush_flow('$f')");
		is(fn_sink_diff($node, $db, $sink, $query), '0', "$db: $f: the sink has it after a flush");
		is($node->safe_psql($db, "SELECT count(*) FROM $sink"), '1', "$db: $f: still one row");
	}
}

restore_ok('r_fc', 'pg_restore', 'pg_restore', '--exit-on-error', '-v', "$dir/full.fc");
check_restored('r_fc');
restore_ok('r_par', 'pg_restore -j 2', 'pg_restore', '--exit-on-error', '-v', '-j', '2', "$dir/full.fc");
check_restored('r_par', 1);
restore_ok('r_sql', 'psql of the plain dump', 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', "$dir/full.sql");
check_restored('r_sql');
# the one-row flows' sinks come back empty: their flows fill them
restore_ok('r_nosink', 'pg_restore without the one-row sinks\' rows',
	'pg_restore', '--exit-on-error', '-v', "$dir/nosink.fc");
check_restored('r_nosink');

# The restore in steps, its data items in a chosen order (pg_restore -L), as pg_restore
# -j may run them:
# - catalog_first: the catalog's rows first, then the one-row flows refreshed (their
#   sinks now hold a row computed from empty sources), then the other tables' rows;
# - catalog_last: the catalog's rows last, over sinks and sources already loaded,
#   which the binding recomputes;
# - sinks_last: every other table's rows, then the catalog's, then the one-row flows
#   refreshed (from their full sources), then the one-row sinks' dumped rows: nothing
#   but their COPY marks the window of t_total, clean at dump time (no pending row).
sub staged_restore
{
	my ($db, $order) = @_;
	my ($out, $err) = ('', '');
	IPC::Run::run([ 'pg_restore', '-l', "$dir/full.fc" ], '>', \$out) or die 'pg_restore -l failed';
	my @data = grep { /\b(TABLE DATA|SEQUENCE SET)\b/ } split(/\n/, $out);
	my $sinks = join('|', map { $one_row{$_}[0] } @one_row);
	my @catalog = grep { /TABLE DATA flownode flow / } @data;
	my @one_row_sinks = grep { /TABLE DATA public ($sinks) / } @data;
	my @rest = grep { !/TABLE DATA flownode flow / && ($order ne 'sinks_last' || !/TABLE DATA public ($sinks) /) }
	  @data;
	is(scalar(@catalog) . scalar(@one_row_sinks), '12', "$db: the dump's items for the catalog and the sinks");
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	my $step = sub {
		my ($what, @args) = @_;
		($out, $err) = ('', '');
		ok(IPC::Run::run([ 'pg_restore', '--exit-on-error', '-v', @args, '-d', $node->connstr($db), "$dir/full.fc" ],
				'>', \$out, '2>', \$err),
			"$db: pg_restore $what")
		  or diag($err);
		unlike($err, qr/WARNING/, "$db: pg_restore $what warns of nothing") or diag($err);
	};
	my $items = sub {
		my ($name, @lines) = @_;
		my $file = "$dir/$db.$name.list";
		PostgreSQL::Test::Utils::append_to_file($file, join("\n", @lines) . "\n");
		return ('-L', $file);
	};
	my $flush = sub {
		for my $f (@one_row)
		{
			$node->safe_psql($db, "SELECT flownode.flush_flow('$f')");
			is($node->safe_psql($db, "SELECT count(*) FROM $one_row{$f}[0]"), '1',
				"$db: $f, bound, refreshed its sink before its rows came");
		}
	};
	$step->('pre-data', '--section=pre-data');
	$step->('the catalog\'s rows', $items->('catalog', @catalog)) if $order eq 'catalog_first';
	$flush->() if $order eq 'catalog_first';
	$step->('the other rows', $items->('rest', @rest));
	$step->('the catalog\'s rows', $items->('catalog', @catalog)) if $order ne 'catalog_first';
	if ($order eq 'sinks_last')
	{
		$flush->();
		$step->('the one-row sinks\' rows', $items->('sinks', @one_row_sinks));
		is($node->safe_psql($db, "SELECT count(*) FROM $one_row{$_}[0]"), '2',
			"$db: $_: its sink holds its refreshed row and the dump's")
		  for @one_row;
	}
	$step->('post-data', '--section=post-data');
}

for my $order ('catalog_first', 'catalog_last', 'sinks_last')
{
	staged_restore("r_$order", $order);
	check_restored("r_$order");
}

# --schema-only, then --data-only: the other flows' sinks had their keys before their
# rows came, so they stay 'restored' (refresh_flow binds them); the one-row flows are
# bound by the COPY of their rows, which is exact (their one window is recomputed,
# writes made before it included), except with --disable-triggers: the sources' rows
# would then come unmarked after the binding, so they stay 'restored' too.
sub check_data_only
{
	my ($db, $disable_triggers, @cmd) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', "$dir/schema.sql", '-d',
			$node->connstr($db) ], "$db: psql restores the --schema-only dump");
	$node->safe_psql($db, q{INSERT INTO tbl VALUES (7000, '2024-04-01', 'before the data')});
	my ($ok, $out, $err) = (0, '', '');
	$ok = IPC::Run::run([ @cmd, '-d', $node->connstr($db) ], '>', \$out, '2>', \$err);
	ok($ok, "$db: the data-only restore") or diag($err);
	unlike($err, qr/WARNING/, "$db: the data-only restore warns of nothing") or diag($err);
	is( $node->safe_psql($db,
			q{SELECT string_agg(flow_name, ',' ORDER BY flow_name) FROM flownode.flows
                WHERE state NOT IN ('active', 'waiting_for_worker')}),
		$disable_triggers ? join(',', sort(@names, @one_row)) : join(',', @names),
		$disable_triggers
		? "$db: every flow is left 'restored'"
		: "$db: the one-row flows are bound, the others left 'restored'");
	$node->safe_psql($db, "SELECT flownode.refresh_flow(flow_name) FROM flownode.flows WHERE state = 'restored'");
	ok(fn_wait_worker($node, $db, $_), "$db: worker of $_ runs") for @names, @one_row;
	my %all = (%flows, %one_row);
	for my $f (@names, @one_row)
	{
		$node->safe_psql($db, "SELECT flownode.flush_flow('$f')");
		is(fn_sink_diff($node, $db, @{ $all{$f} }), '0', "$db: $f: the sink is the query after a flush");
	}
	check_one_row_marks($db);
	$node->safe_psql('postgres', "DROP DATABASE $db");
}

check_data_only('r_data', 0, 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', "$dir/data.sql");
check_data_only('r_data_dt', 1, 'pg_restore', '--exit-on-error', '-v', '--data-only', '--disable-triggers',
	"$dir/full.fc");

$node->stop;
done_testing();
