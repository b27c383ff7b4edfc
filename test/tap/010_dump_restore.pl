# pg_dump and pg_restore keep flows (docs/operations.md "Backup and restore", docs/internals.md §9).
# A database with five flows (two owners, a source whose columns a restore
# renumbers, names that need quotes, an existing sink granted to the flow's owner,
# a window-less flow, windows pending at dump time) is dumped with the real pg_dump
# and restored with the real pg_restore and psql, in every way a DBA would:
#   - pg_dump -Fc + pg_restore, plain + psql, pg_restore --single-transaction,
#     pg_restore -j 4: every flow comes back (definition, options, owner, comment),
#     with its triggers, a running worker, and its pending windows: one flush_flow
#     refreshes exactly the windows that were pending at dump time (no refill of
#     the sinks) and every sink equals its query; no error (no duplicate key);
#     later writes are marked; a new flow gets a new id.
#   - a dump without a sink's rows (--exclude-table-data): the flow fills its empty
#     sink.
#   - pg_upgrade, which keeps no trigger of flownode's: every flow is bound again
#     in the new cluster, and a flush makes it exact.
#   - --schema-only then --data-only (plain, and pg_restore --data-only
#     --disable-triggers): the flows come back 'restored' (not bound, flush_flow
#     says so; a later index on a sink does not bind them), and the documented
#     step, refresh_flow, binds them and makes every sink exact, including a write
#     made before it.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

my $node = fn_node('dump', 'max_worker_processes = 48');
my $dir = PostgreSQL::Test::Utils::tempdir;

# flow => [sink, query]
my %flows = (
	cpu_1m => [
		'cpu_1m',
		q{SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, host,
  avg(usage) AS avg_usage, count(*) AS n FROM cpu GROUP BY 1, 2}
	],
	cpu_1h => [
		'cpu_hourly',
		q{SELECT date_trunc('hour', ts, 'UTC') AS hour, count(*) AS n, max(usage) AS hi
  FROM cpu GROUP BY 1}
	],
	'Event kinds' => [
		'"Ops"."Daily"',
		q{SELECT date_trunc('day', at) AS day, kind, count(*) AS n FROM "Ops"."Events" GROUP BY 1, 2}
	],
	hosts => [ 'hosts', q{SELECT host, count(*) AS n FROM cpu GROUP BY host} ],
	ev_alice => [
		'ev_alice',
		q{SELECT date_bin('15 minutes', at, timestamp '2000-01-01') AS w, count(*) AS n
  FROM "Ops"."Events" GROUP BY 1}
	],);
my @names = sort keys %flows;

$node->safe_psql('postgres', q{
CREATE ROLE fn_alice LOGIN;
CREATE DATABASE src;
});
# eval_interval of an hour everywhere: no worker refreshes on its own, so what is
# pending stays pending until a flush.
$node->safe_psql('src', qq{
CREATE EXTENSION flownode;
GRANT CREATE ON SCHEMA public TO fn_alice;
GRANT EXECUTE ON FUNCTION flownode.create_flow TO fn_alice;
-- a dropped column before the time column: a restore renumbers the columns
CREATE TABLE cpu (junk int, ts timestamptz NOT NULL, host text, usage float8);
ALTER TABLE cpu DROP COLUMN junk;
CREATE INDEX ON cpu (ts);
GRANT SELECT, TRIGGER ON cpu TO fn_alice;
CREATE SCHEMA "Ops";
GRANT USAGE ON SCHEMA "Ops" TO fn_alice;
CREATE TABLE "Ops"."Events" (id int, at timestamp NOT NULL, kind text NOT NULL);
GRANT SELECT, TRIGGER ON "Ops"."Events" TO fn_alice;
-- an existing sink owned by postgres, granted to alice: the grant comes back in the
-- restore's last pass, after the flows were bound
CREATE TABLE cpu_hourly (hour timestamptz PRIMARY KEY, n bigint, hi float8);
GRANT SELECT, INSERT, UPDATE, DELETE ON cpu_hourly TO fn_alice;
INSERT INTO cpu SELECT timestamptz '2024-01-01' + i * interval '10 seconds', 'h' || (i % 3), i
  FROM generate_series(0, 2999) i;
INSERT INTO "Ops"."Events" SELECT i, timestamp '2024-01-01' + i * interval '7 minutes',
  CASE WHEN i % 4 = 0 THEN 'Err' ELSE 'ok' END FROM generate_series(0, 999) i;
SELECT flownode.create_flow('cpu_1m', 'cpu_1m', \$q\$$flows{cpu_1m}[1]\$q\$,
  eval_interval => '1 hour', comment => 'per minute and host');
SELECT flownode.create_flow('Event kinds', '"Ops"."Daily"', \$q\$$flows{'Event kinds'}[1]\$q\$,
  eval_interval => '1 hour');
SELECT flownode.create_flow('hosts', 'hosts', \$q\$$flows{hosts}[1]\$q\$, eval_interval => '1 hour');
SET ROLE fn_alice;
SELECT flownode.create_flow('cpu_1h', 'cpu_hourly', \$q\$$flows{cpu_1h}[1]\$q\$,
  eval_interval => '1 hour', expire_after => '1000 years', comment => 'alice''s hours');
SELECT flownode.create_flow('ev_alice', 'ev_alice', \$q\$$flows{ev_alice}[1]\$q\$,
  eval_interval => '1 hour');
RESET ROLE;
});
ok(fn_wait_worker($node, 'src', $_), "worker of $_ runs") for @names;

# Writes after the fill: part refreshed (a flush), the rest pending at dump time.
$node->safe_psql('src', q{
INSERT INTO cpu VALUES ('2024-01-01 00:03:05', 'h1', 1000), ('2024-01-01 05:00:00', 'h9', 7);
SELECT flownode.flush_flow('cpu_1m');
INSERT INTO cpu VALUES ('2024-01-01 00:20:05', 'h2', 500), ('2024-01-02 00:00:00', NULL, 1);
UPDATE cpu SET ts = ts + interval '3 hours' WHERE ts = '2024-01-01 00:30:00';
DELETE FROM cpu WHERE ts >= '2024-01-01 01:00:00' AND ts < '2024-01-01 01:00:30';
INSERT INTO "Ops"."Events" VALUES (5000, '2024-01-03 10:00', 'new'), (5001, '2023-12-31 23:59', 'ok');
DELETE FROM "Ops"."Events" WHERE id = 7;
});

my $def_sql = q{SELECT flow_id, flow_name, source_table, sink_table, time_column, window_expr,
  eval_interval, expire_after, comment, owner FROM flownode.flows NATURAL JOIN (SELECT flow_id, expire_after, comment FROM flownode.flow_info) i ORDER BY flow_id};
my $defs = $node->safe_psql('src', $def_sql);
my $queries = $node->safe_psql('src',
	'SELECT flow_id, query, user_query, timezone FROM flownode.flow ORDER BY flow_id');
my $record = $node->safe_psql('src', 'SELECT flow_id, ranges FROM flownode.pending ORDER BY 1, 2');
my %dirty;
for my $f (@names)
{
	$dirty{$f} = fn_flow_field($node, 'src', $f, 'dirty_windows');
	cmp_ok(fn_sink_diff($node, 'src', @{ $flows{$f} }), '>', 0,
		"src: $f has windows pending at dump time (its sink differs from its query)");
}

my %dump = (
	fc => "$dir/full.fc",
	sql => "$dir/full.sql",
	schema => "$dir/schema.sql",
	data => "$dir/data.sql");
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump{fc}, '-d', $node->connstr('src') ], 'pg_dump -Fc');
$node->command_ok([ 'pg_dump', '-f', $dump{sql}, '-d', $node->connstr('src') ], 'pg_dump (plain)');
$node->command_ok([ 'pg_dump', '--schema-only', '-f', $dump{schema}, '-d', $node->connstr('src') ],
	'pg_dump --schema-only');
$node->command_ok([ 'pg_dump', '--data-only', '-f', $dump{data}, '-d', $node->connstr('src') ],
	'pg_dump --data-only');
$node->command_ok(
	[ 'pg_dump', '-Fc', '--exclude-table-data=public.cpu_1m', '-f', "$dir/nosink.fc", '-d', $node->connstr('src') ],
	'pg_dump --exclude-table-data of a sink');

sub psql_file
{
	my ($db, $file, $what) = @_;
	$node->command_ok(
		[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr($db), '-f', $file ],
		"$db: $what");
}

# Every flow is back as it was defined, with its query and time zone.
sub check_definitions
{
	my ($db) = @_;
	is($node->safe_psql($db, $def_sql), $defs, "$db: every flow is back: definition, options, owner, comment");
	is( $node->safe_psql($db,
			'SELECT flow_id, query, user_query, timezone FROM flownode.flow ORDER BY flow_id'),
		$queries, "$db: stored queries and time zones are back");
}

# Bound: triggers that fire always, a worker.
sub check_running
{
	my ($db) = @_;
	is( $node->safe_psql($db,
			"SELECT string_agg(format('%s:%s', flow_name, marking_enabled), ',' ORDER BY flow_name) FROM flownode.flows"),
		join(",", map { "$_:t" } @names),
		"$db: every flow's triggers fire in every replication role");
	ok(fn_wait_worker($node, $db, $_), "$db: worker of $_ runs") for @names;
}

sub check_exact
{
	my ($db, $when) = @_;
	is(fn_sink_diff($node, $db, @{ $flows{$_} }), '0', "$db: $_: sink = query $when") for @names;
}

# Later writes are marked, on the source whose columns were renumbered too.
sub check_marking
{
	my ($db) = @_;
	$node->safe_psql($db, q{
INSERT INTO cpu VALUES ('2024-01-01 00:07:30', 'h0', 77), ('2024-01-05 00:00:00', 'h5', 5);
UPDATE cpu SET usage = usage + 1 WHERE ts < '2024-01-01 00:02:00';
DELETE FROM cpu WHERE ts >= '2024-01-01 02:00:00' AND ts < '2024-01-01 02:01:00';
INSERT INTO "Ops"."Events" VALUES (6000, '2024-01-04 08:00', 'Err');
});
	$node->safe_psql($db, "SELECT flownode.flush_flow(flow_name) FROM flownode.flows");
	check_exact($db, 'after later writes and a flush');
	my $max = $node->safe_psql($db, 'SELECT max(flow_id) FROM flownode.flow');
	is( $node->safe_psql($db, qq{SELECT flownode.create_flow('later', 'later_sink',
  \$q\$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, count(*) AS n FROM cpu GROUP BY 1\$q\$,
  eval_interval => '1 hour') > $max}),
		't', "$db: a new flow gets an id after the restored ones");
}

# A whole restore: bound automatically by the restore itself (the sinks' keys are
# built after every row); one flush refreshes exactly what was pending.
sub check_whole_restore
{
	my ($db) = @_;
	check_definitions($db);
	is($node->safe_psql($db, 'SELECT flow_id, ranges FROM flownode.pending ORDER BY 1, 2'),
		$record, "$db: the windows pending at dump time are back");
	check_running($db);
	is($node->safe_psql($db, "SELECT flownode.flush_flow('$_')"),
		$dirty{$_}, "$db: $_: one flush refreshes the $dirty{$_} windows pending at dump time, no more")
	  for @names;
	check_exact($db, 'after one flush');
	check_marking($db);
	$node->safe_psql('postgres', "DROP DATABASE $db");
}

$node->safe_psql('postgres', 'CREATE DATABASE r_fc');
$node->command_ok(
	[ 'pg_restore', '--exit-on-error', '-d', $node->connstr('r_fc'), $dump{fc} ],
	'pg_restore of pg_dump -Fc');
check_whole_restore('r_fc');

$node->safe_psql('postgres', 'CREATE DATABASE r_sql');
psql_file('r_sql', $dump{sql}, 'psql restores the plain dump');
check_whole_restore('r_sql');

$node->safe_psql('postgres', 'CREATE DATABASE r_one');
$node->command_ok(
	[ 'pg_restore', '--exit-on-error', '--single-transaction', '-d', $node->connstr('r_one'), $dump{fc} ],
	'pg_restore --single-transaction');
check_whole_restore('r_one');

# A dump without a sink's rows: the sink comes back empty over a source with rows,
# which its restored record cannot tell; the flow fills it instead of staying empty.
$node->safe_psql('postgres', 'CREATE DATABASE r_nosink');
$node->command_ok(
	[ 'pg_restore', '--exit-on-error', '-d', $node->connstr('r_nosink'), "$dir/nosink.fc" ],
	'pg_restore of the dump without a sink\'s rows');
is($node->safe_psql('r_nosink', 'SELECT count(*) FROM cpu_1m'), '0', 'r_nosink: the sink comes back empty');
check_running('r_nosink');
$node->safe_psql('r_nosink', "SELECT flownode.flush_flow(flow_name) FROM flownode.flows");
check_exact('r_nosink', 'after a flush (the empty sink was filled)');
$node->safe_psql('postgres', 'DROP DATABASE r_nosink');

# pg_restore -j: the sinks' keys may be built before the flows are restored; flows
# that were not bound by the restore say 'restored' and the documented step binds
# them. Either way nothing is lost.
$node->safe_psql('postgres', 'CREATE DATABASE r_par');
$node->command_ok(
	[ 'pg_restore', '--exit-on-error', '-j', '4', '-d', $node->connstr('r_par'), $dump{fc} ],
	'pg_restore -j 4');
check_definitions('r_par');
$node->safe_psql('r_par',
	"SELECT flownode.refresh_flow(flow_name) FROM flownode.flows WHERE state = 'restored'");
check_running('r_par');
$node->safe_psql('r_par', "SELECT flownode.flush_flow(flow_name) FROM flownode.flows");
check_exact('r_par', 'after the restore and a flush');
check_marking('r_par');
$node->safe_psql('postgres', 'DROP DATABASE r_par');

# --schema-only, then --data-only: no flow before the data; after it every flow is
# 'restored' (nothing was indexed after its rows), flush_flow says what to do, a
# write now is not marked, and refresh_flow, the documented step, binds each flow
# and recomputes it: exact at once, the write included.
sub check_split
{
	my ($db, $load_data) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	psql_file($db, $dump{schema}, 'psql restores the --schema-only dump');
	is($node->safe_psql($db, 'SELECT count(*) FROM flownode.flows'), '0', "$db: no flow from the schema alone");
	$load_data->($db);
	check_definitions($db);
	is( $node->safe_psql($db,
			"SELECT string_agg(DISTINCT format('%s:%s', state, marking_enabled), ',') FROM flownode.flows"),
		'restored:f', "$db: after the data alone every flow is restored, not bound");
	my ($ret, $out, $err) = $node->psql($db, "SELECT flownode.flush_flow('cpu_1m')");
	like($err, qr/flow "cpu_1m" was restored and is not bound to its tables yet.*HINT:.*refresh_flow/s,
		"$db: flush_flow of a restored flow says how to bind it");
	$node->safe_psql($db, q{INSERT INTO cpu VALUES ('2024-01-01 00:11:11', 'h1', 42);
UPDATE "Ops"."Events" SET kind = 'Err' WHERE id = 8;
CREATE UNIQUE INDEX ON cpu_1m (host, minute) NULLS NOT DISTINCT;});
	is($node->safe_psql($db, "SELECT state FROM flownode.flows WHERE flow_name = 'cpu_1m'"),
		'restored', "$db: an index built later on a sink that had its key does not bind its flow");
	$node->safe_psql($db, 'SELECT flownode.refresh_flow(flow_name) FROM flownode.flows ORDER BY flow_id');
	check_exact($db, 'after refresh_flow, writes before it included');
	check_running($db);
	check_marking($db);
	$node->safe_psql('postgres', "DROP DATABASE $db");
}

check_split('r_split', sub { psql_file($_[0], $dump{data}, 'psql restores the --data-only dump') });
check_split(
	'r_split_dt',
	sub {
		$node->command_ok(
			[
				'pg_restore', '--exit-on-error', '--data-only', '--disable-triggers',
				'-d', $node->connstr($_[0]), $dump{fc}
			],
			"$_[0]: pg_restore --data-only --disable-triggers");
	});

# the source database's flows went on untouched
$node->safe_psql('src', "SELECT flownode.flush_flow(flow_name) FROM flownode.flows");
check_exact('src', 'in the dumped database after a flush');

# pg_upgrade keeps the catalog, the record and the sinks, but not the (internal)
# triggers: in the new cluster every flow's binding names the old cluster, and the
# database's starter binds it again, without a recompute; a write made before the
# upgrade (pending in the record) and one after are refreshed by a flush
# (023_pg_upgrade.pl checks the rest: no recompute, writers that come first).
$node->safe_psql('src', q{INSERT INTO cpu VALUES ('2024-01-01 00:09:09', 'h2', 99);
INSERT INTO "Ops"."Events" VALUES (7000, '2024-01-06 06:06', 'ok');});
my $bindir = `pg_config --bindir`;
chomp $bindir;
my $new = PostgreSQL::Test::Cluster->new('upgraded');
$new->init;
$new->append_conf('postgresql.conf', "max_worker_processes = 48\n");
$node->stop;
command_ok(
	[
		'pg_upgrade', '--no-sync', '-d', $node->data_dir, '-D', $new->data_dir, '-b', $bindir,
		'-B', $bindir, '-s', $new->host, '-p', $node->port, '-P', $new->port
	],
	'pg_upgrade');
$new->start;
$node = $new;    # the helpers above use $node
ok(fn_poll($node, 'src', "SELECT bool_and(state = 'active' AND marking_enabled) FROM flownode.flows"),
	'after pg_upgrade every flow is bound again');
$node->safe_psql('src', q{INSERT INTO cpu VALUES ('2024-01-01 00:10:10', 'h0', 98)});
$node->safe_psql('src', 'SELECT flownode.flush_flow(flow_name) FROM flownode.flows ORDER BY flow_id');
check_exact('src', 'after pg_upgrade and a flush');
check_running('src');
check_marking('src');

$node->stop;
done_testing();
