# pg_dump and pg_restore of flows whose time column is not a timestamp
# (docs/operations.md "Backup and restore", time inputs in docs/reference.md): a date column and an integer epoch
# column (milliseconds and seconds), dumped without the sinks' rows
# (pg_dump --exclude-table-data), so that binding each restored flow finds its sink
# empty and records every window of the source's rows for the worker to fill.
#
# Before the flow's time column was read in one place (src/query/time_column.c),
# binding read the source's extent as raw int64 microseconds: the date flow was
# bound 'active' with its windows recorded around 2000-01-01, flush_flow refreshed
# 1-2 windows and the sink stayed empty (42 rows missing, silently); the epoch flow
# failed to bind (function pg_catalog.isfinite(bigint) does not exist), stayed
# 'restored', and writes to its source were not marked.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

my $node = fn_node('restore_inputs', 'max_worker_processes = 32');
my $dir = PostgreSQL::Test::Utils::tempdir;

# flow => its query; each flow's sink is named ${flow}_sink
my %flows = (
	days => q{SELECT date_trunc('week', d::timestamptz) AS w, host, count(*) AS n, sum(v) AS s
	            FROM days GROUP BY 1, 2},
	ms => q{SELECT date_bin('1 hour', to_timestamp(ts / 1000.0), timestamptz '2000-01-01') AS w,
	               count(*) AS n, sum(v) AS s FROM ms GROUP BY 1},
	secs => q{SELECT date_trunc('day', to_timestamp(ts)) AS w, count(*) AS n FROM secs GROUP BY 1},
	# group keys it does not output (docs/reference.md "Group keys that are not output
	# columns"): the window, shown only as a date, and the host are hidden key columns of
	# the sink, which the dump carries and the restored flow's binding checks
	weeks => q{SELECT date_trunc('week', d::timestamptz)::date AS w, count(*) AS n, sum(v) AS s
	             FROM days GROUP BY date_trunc('week', d::timestamptz), host},);
# the sink's columns that are the query's (its hidden key columns left out)
my %visible = (weeks => 'w, n, s');

# the number of rows by which a sink and its query differ, both ways (in the flows'
# time zone, which their queries' date_trunc and casts of dates depend on)
sub diff_sql
{
	my ($f) = @_;
	# rows at +-infinity belong to no window (docs/reference.md, "Windows and time zones"): the first column
	# of each query is its window, w
	my $q = "SELECT * FROM ($flows{$f}) q WHERE isfinite(q.w)";
	my $sink = $visible{$f} ? "SELECT $visible{$f} FROM ${f}_sink" : "TABLE ${f}_sink";
	return "(SELECT count(*) FROM ($sink EXCEPT ALL ($q)) a)"
	  . " + (SELECT count(*) FROM (($q) EXCEPT ALL $sink) b)";
}

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', q{
SET timezone = 'Europe/Berlin';
CREATE EXTENSION flownode;
CREATE TABLE days (d date NOT NULL, host text, v int);
CREATE INDEX ON days (d);
INSERT INTO days SELECT date '2024-01-01' + (i % 90), 'h' || (i % 3), i FROM generate_series(1, 900) i;
INSERT INTO days VALUES ('infinity', 'h0', 1), ('-infinity', 'h1', 1);
CREATE TABLE ms (ts bigint NOT NULL, v int);
CREATE INDEX ON ms (ts);
INSERT INTO ms SELECT 1704067200000 + i * 61000, i FROM generate_series(1, 900) i;
CREATE TABLE secs (ts bigint NOT NULL);  -- no index: the extent reads the table
INSERT INTO secs SELECT 1704067200 + i * 7200 FROM generate_series(1, 300) i;
});
for my $f (sort keys %flows)
{
	$node->safe_psql('src',
		    "SET timezone = 'Europe/Berlin'; SELECT flownode.create_flow('$f', '${f}_sink', "
		  . "\$q\$$flows{$f}\$q\$, eval_interval => '1 hour')");
	is($node->safe_psql('src', "SET timezone = 'Europe/Berlin'; SELECT " . diff_sql($f)),
		'0', "$f is exact before the dump");
}

my %dump = (custom => "$dir/db.dump", plain => "$dir/db.sql");
for my $format (sort keys %dump)
{
	command_ok(
		[
			'pg_dump', '-d', $node->connstr('src'), '-F', substr($format, 0, 1),
			'--exclude-table-data', '*_sink', '-f', $dump{$format}
		],
		"pg_dump ($format) without the sinks' rows");
	my $db = "dst_$format";
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	if ($format eq 'custom')
	{
		command_ok([ 'pg_restore', '-d', $node->connstr($db), '-j', '2', $dump{$format} ],
			"pg_restore -j 2 into $db");
	}
	else
	{
		$node->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $db, '-f', $dump{$format} ],
			"psql -f into $db");
	}
	for my $f (sort keys %flows)
	{
		my $state = $node->safe_psql($db, "SELECT state FROM flownode.flows WHERE flow_name = '$f'");
		isnt($state, 'restored', "$format: restored flow $f is bound ($state)");
		ok( fn_poll(
				$node, $db,
				"SET timezone = 'Europe/Berlin'; SELECT flownode.flush_flow('$f') >= 0; SELECT "
				  . diff_sql($f) . " = 0", "t\nt", 10),
			"$format: the empty sink of $f is filled and equals its query");
	}
	# writes after the restore are marked and reach the sinks
	$node->safe_psql($db, q{
INSERT INTO days VALUES ('2024-06-01', 'h9', 5), ('2023-12-31', 'h0', 7);
UPDATE days SET v = v + 1 WHERE d = '2024-01-10';
INSERT INTO ms VALUES (1714564800000, 3);
DELETE FROM secs WHERE ts < 1704067200 + 50 * 7200;
});
	for my $f (sort keys %flows)
	{
		is( $node->safe_psql($db, "SELECT dirty_windows > 0 FROM flownode.flows WHERE flow_name = '$f'"),
			't', "$format: a write to the source of $f after the restore is marked");
		is( $node->safe_psql(
				$db,
				"SET timezone = 'Europe/Berlin'; SELECT flownode.flush_flow('$f') > 0; SELECT " . diff_sql($f)
			),
			"t\n0",
			"$format: $f is exact after the writes");
	}
}

# A restore that builds a sink's key (post-data: binding its flow) while the source's
# rows are still being loaded by another session (pg_restore -j loads them in
# parallel): the binding waits for the source's lock, and must then read the source
# in a snapshot taken after that wait. It read it in the statement's snapshot, from
# before the wait, found the source empty, recorded nothing for the empty sink, and
# the flow was 'active' with nothing dirty and an empty sink (the oracle's seed
# 1530021794).
$node->safe_psql('src', q{
CREATE TABLE lt (ts timestamptz NOT NULL, v int);
CREATE INDEX ON lt (ts);
INSERT INTO lt SELECT timestamptz '2024-03-01' + i * interval '17 minutes', i FROM generate_series(1, 300) i;
SELECT flownode.create_flow('lt_h', 'lt_sink',
  $q$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, count(*) AS n, sum(v) AS s FROM lt GROUP BY 1$q$,
  eval_interval => '1 hour');
});
my $lt_query = q{SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, count(*) AS n, sum(v) AS s FROM lt GROUP BY 1};
command_ok([ 'pg_dump', '-d', $node->connstr('src'), '-Fc', '--exclude-table-data', 'lt_sink',
		'--exclude-table-data', 'lt', '-f', "$dir/late.dump" ], 'pg_dump without lt\'s and lt_sink\'s rows');
$node->safe_psql('postgres', 'CREATE DATABASE dst_late');
command_ok([ 'pg_restore', '--section=pre-data', '--section=data', '-d', $node->connstr('dst_late'),
		"$dir/late.dump" ], 'pre-data and data restored');
my $loader = $node->background_psql('dst_late');
$loader->query_safe(q{BEGIN; INSERT INTO lt SELECT timestamptz '2024-03-01' + i * interval '17 minutes', i
  FROM generate_series(1, 300) i});
my ($out, $err) = ('', '');
my $post = IPC::Run::start([ 'pg_restore', '--section=post-data', '-d', $node->connstr('dst_late'),
		"$dir/late.dump" ], '>', \$out, '2>', \$err);
ok( fn_poll($node, 'dst_late',
		"SELECT count(*) > 0 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'lt' AND NOT l.granted"),
	'the binding waits for the source\'s rows being loaded');
$loader->query_safe('COMMIT');
$loader->quit;
$post->finish;
is($post->result(0), 0, 'post-data restored') or diag($err);
is($node->safe_psql('dst_late', "SELECT state FROM flownode.flows WHERE flow_name = 'lt_h'"),
	'active', 'the flow is bound');
is( $node->safe_psql('dst_late',
		"SELECT count(*) FROM ((SELECT * FROM flownode.read_flow(NULL::lt_sink) EXCEPT ALL ($lt_query))"
		  . " UNION ALL (($lt_query) EXCEPT ALL SELECT * FROM flownode.read_flow(NULL::lt_sink))) d"),
	'0', 'read_flow is the query: the loaded rows are pending');
$node->safe_psql('dst_late', "SELECT flownode.flush_flow('lt_h')");
is( $node->safe_psql('dst_late',
		"SELECT (SELECT count(*) FROM (TABLE lt_sink EXCEPT ALL ($lt_query)) a) + "
		  . "(SELECT count(*) FROM (($lt_query) EXCEPT ALL TABLE lt_sink) b)"),
	'0', 'after a flush the sink is the query');

done_testing();
