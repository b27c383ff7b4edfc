# A whole-database restore binds the flows whose binding needs the source's primary
# key (issue 27, failure 6; docs/user-guide.md §11, docs/internals.md §9).
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
# Checked after pg_restore, pg_restore -j 2 and psql of a plain dump, for copy flows
# over a partitioned and over a plain source, and for the other shapes over the
# partitioned source (SELECT DISTINCT, a windowed GROUP BY): every flow bound by the
# restore, no WARNING, writes after the restore marked, read_flow the query before
# any flush, the sink the query after one. A flow of one row (aggregates without
# GROUP BY) has no sink key for the restore to build and is left 'restored': read_flow
# refuses it (it returned the dump's row, without the writes since), as flush_flow
# does, until refresh_flow binds it.
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
# a flow of one row (aggregates without GROUP BY): its sink has no key for a restore to
# build, so nothing in a restore binds it yet (docs/user-guide.md §11)
my @one_row = ('ps_total', 'a_total', q{SELECT count(*) AS n, sum(v) AS s FROM ps});

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
SELECT flownode.create_flow('ps_total', 'a_total', \$q\$$one_row[2]\$q\$, eval_interval => '1 hour');
SELECT flownode.create_flow('ps_distinct', 'a_distinct', \$q\$$flows{ps_distinct}[1]\$q\$,
  eval_interval => '1 hour');
SELECT flownode.create_flow('ps_hourly', 'a_hourly', \$q\$$flows{ps_hourly}[1]\$q\$, eval_interval => '1 hour');
SELECT flownode.create_flow('t_copy', 'a_tcopy', \$q\$$flows{t_copy}[1]\$q\$, eval_interval => '1 hour');
});
ok(fn_wait_worker($node, 'src', $_), "src: worker of $_ runs") for @names, $one_row[0];
# pending at dump time (eval_interval of an hour: nothing refreshes on its own)
$node->safe_psql('src', q{
INSERT INTO ps VALUES (9000, '2024-01-01 03:03', 1), (9001, '2024-05-05', 2);
DELETE FROM ps WHERE id < 5;
UPDATE tbl SET note = 'changed' WHERE id BETWEEN 10 AND 14;
});
cmp_ok(fn_sink_diff($node, 'src', @{ $flows{$_} }), '>', 0, "src: $_ has windows pending at dump time")
  for @names;
cmp_ok(fn_sink_diff($node, 'src', @one_row[ 1, 2 ]), '>', 0, "src: $one_row[0] is pending at dump time");
is( $node->safe_psql('src', "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'a_copy_pkey'"),
	'PRIMARY KEY (id, ts)', 'the copy\'s sink is keyed by the source\'s primary key');

$node->command_ok([ 'pg_dump', '-Fc', '-f', "$dir/full.fc", '-d', $node->connstr('src') ], 'pg_dump -Fc');
$node->command_ok([ 'pg_dump', '-f', "$dir/full.sql", '-d', $node->connstr('src') ], 'pg_dump (plain)');

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
# stays 'restored' (docs/user-guide.md §11), read_flow refuses it and refresh_flow binds
# it (the order is pg_restore's: a copy flow over a partitioned source is usually bound
# when the last partition's index is attached, after the flows' rows).
sub check_restored
{
	my ($db, $parallel) = @_;
	my $left = $node->safe_psql($db,
		q{SELECT string_agg(flow_name, ',' ORDER BY flow_name) FROM flownode.flows
            WHERE state NOT IN ('active', 'waiting_for_worker') AND flow_name <> 'ps_total'});
	is($left, '', "$db: the restore bound every flow but the one-row flow") unless $parallel;
	for my $f ($parallel ? split(/,/, $left) : ())
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
	ok(fn_wait_worker($node, $db, $_), "$db: worker of $_ runs") for @names;

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
	for my $f (@names)
	{
		my ($sink, $query) = @{ $flows{$f} };
		is(read_diff($db, $sink, $query), '0', "$db: $f: read_flow is the query before any flush");
	}
	for my $f (@names)
	{
		$node->safe_psql($db, "SELECT flownode.flush_flow('$f')");
		is(fn_sink_diff($node, $db, @{ $flows{$f} }), '0', "$db: $f: the sink is the query after a flush");
	}

	# the one-row flow, left 'restored': read_flow refuses it as flush_flow does, rather
	# than return the sink the dump left (the writes above are not in it), and
	# refresh_flow binds it
	my ($flow, $sink, $query) = @one_row;
	my ($rc, $out, $err) = $node->psql($db, "SELECT * FROM flownode.read_flow(NULL::$sink)");
	like($err, qr/flow "$flow" was restored and is not bound to its tables yet/,
		"$db: read_flow refuses the flow the restore left unbound");
	($rc, $out, $err) = $node->psql($db, "SELECT flownode.flush_flow('$flow')");
	like($err, qr/was restored and is not bound/, "$db: so does flush_flow");
	$node->safe_psql($db, "SELECT flownode.refresh_flow('$flow')");
	is(fn_sink_diff($node, $db, $sink, $query), '0', "$db: $flow: refresh_flow binds it, exact");
	$node->safe_psql($db, q{INSERT INTO ps VALUES (30000, '2024-01-02 07:00', 5)});
	is(read_diff($db, $sink, $query), '0', "$db: $flow: bound, read_flow has the write");
	$node->safe_psql($db, "SELECT flownode.flush_flow('$flow')");
	is(fn_sink_diff($node, $db, $sink, $query), '0', "$db: $flow: bound, writes are marked");
}

restore_ok('r_fc', 'pg_restore', 'pg_restore', '--exit-on-error', '-v', "$dir/full.fc");
check_restored('r_fc');
restore_ok('r_par', 'pg_restore -j 2', 'pg_restore', '--exit-on-error', '-v', '-j', '2', "$dir/full.fc");
check_restored('r_par', 1);
restore_ok('r_sql', 'psql of the plain dump', 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', "$dir/full.sql");
check_restored('r_sql');

$node->stop;
done_testing();
