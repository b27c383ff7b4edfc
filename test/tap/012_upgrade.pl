# ALTER EXTENSION flownode UPDATE from 0.1 (docs/operations.md "Upgrades"), which
# runs the update scripts 0.1 -> 0.2 -> 0.3 -> 0.4 (the current version) in one
# command, and from 0.3 (step 4).
#
# The 0.1 release runs for real: its library is built from the git history (the
# last commit of 0.1, prepared by test/run_all.sh in FLOWNODE_V01_SRC) and
# installed, with its SQL script, into a copy of the PostgreSQL installation. It
# runs flows with data and windows pending. Then, as a DBA upgrades:
#   1. the current scripts are installed but the server still runs the 0.1 library:
#      ALTER EXTENSION flownode UPDATE refuses, saying to restart, and changes
#      nothing;
#   2. the server restarts on the current library, the database still has 0.1's
#      objects: the flows view, flush_flow and create_flow refuse with a message
#      asking for ALTER EXTENSION flownode UPDATE, no worker runs (a WARNING says
#      why), the server does not crash, and writes to the sources (INSERT, UPDATE,
#      DELETE, TRUNCATE) still work and are marked;
#   3. ALTER EXTENSION flownode UPDATE: the workers start, the catalog is the same
#      as a fresh install (members, functions, the view, columns, constraints,
#      indexes, triggers, configuration tables, privileges) but for the right to
#      create flows that the update grants the roles owning a flow (fn_alice),
#      which keep creating flows while others may not; and after a flush every
#      sink equals its query: nothing written under 0.1 or in between was lost;
#      later writes are marked, a new flow works, and the updated database survives
#      pg_dump and pg_restore, fn_alice's grant included;
#   4. a database created at 0.3: the current library serves 0.3's flows view (its
#      own columns) and runs its flow; ALTER EXTENSION flownode UPDATE keeps the
#      flow's worker running, ends with the catalog of a fresh 0.4 install, and from
#      then on the runs are in flownode.runs.
use strict;
use warnings;
use File::Copy qw(copy);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

my $v01 = $ENV{FLOWNODE_V01_SRC};
plan skip_all => 'FLOWNODE_V01_SRC (the 0.1 release\'s source, set by test/run_all.sh) is not set'
  unless $v01 && -f "$v01/sql/flownode--0.1.sql";

my $tmp = PostgreSQL::Test::Utils::tempdir;

# The 0.1 release, built against the installation under test, in a copy of it.
my ($old, $old_ext) = fn_release_install($v01, '0.1', $tmp);
my $sharedir = `pg_config --sharedir`;
chomp $sharedir;

my $node = PostgreSQL::Test::Cluster->new('upgrade', install_path => $old);
$node->init;
$node->append_conf('postgresql.conf', "max_worker_processes = 32\n");
$node->start;

# flow => [sink, query]
my %flows = (
	f_min => [
		'sink_min',
		q{SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, host, count(*) AS n,
  sum(v) AS s FROM m GROUP BY 1, 2}
	],
	f_day => [ 'sink_day', q{SELECT date_trunc('day', ts, 'UTC') AS d, count(*) AS n, max(v) AS hi FROM m GROUP BY 1} ],
	f_total => [ 'sink_total', q{SELECT host, count(*) AS n FROM m GROUP BY 1} ],
	f_t => [ 'sink_t', q{SELECT date_bin('1 hour', at, timestamp '2000-01-01') AS h, count(*) AS n FROM t GROUP BY 1} ],
);
my @names = sort keys %flows;

sub check_exact
{
	my ($db, $when) = @_;
	is(fn_sink_diff($node, $db, @{ $flows{$_} }), '0', "$db: $_: sink = query $when") for @names;
}

# ---- 0.1 ----
$node->safe_psql('postgres', q{CREATE ROLE fn_alice LOGIN; CREATE DATABASE up;});
is($node->safe_psql('up', "CREATE EXTENSION flownode VERSION '0.1'; SELECT extversion FROM pg_extension WHERE extname = 'flownode'"),
	'0.1', 'the 0.1 release installs');
$node->safe_psql('up', qq{
GRANT CREATE ON SCHEMA public TO fn_alice;
CREATE TABLE m (ts timestamptz NOT NULL, host text, v int NOT NULL);
CREATE INDEX ON m (ts);
GRANT SELECT, TRIGGER ON m TO fn_alice;
CREATE TABLE t (at timestamp NOT NULL);
INSERT INTO m SELECT timestamptz '2024-05-01' + i * interval '50 seconds', 'h' || (i % 4), i
  FROM generate_series(0, 1999) i;
INSERT INTO t SELECT timestamp '2024-05-01' + i * interval '17 minutes' FROM generate_series(0, 99) i;
SELECT flownode.create_flow('f_day', 'sink_day', \$q\$$flows{f_day}[1]\$q\$, eval_interval => '1 hour',
  comment => 'days');
SELECT flownode.create_flow('f_total', 'sink_total', \$q\$$flows{f_total}[1]\$q\$, eval_interval => '1 hour');
SELECT flownode.create_flow('f_t', 'sink_t', \$q\$$flows{f_t}[1]\$q\$, eval_interval => '1 hour');
SET ROLE fn_alice;
SELECT flownode.create_flow('f_min', 'sink_min', \$q\$$flows{f_min}[1]\$q\$, eval_interval => '1 hour');
});
ok(fn_wait_worker($node, 'up', $_), "0.1: worker of $_ runs") for @names;
# windows pending under 0.1 (the workers evaluate only after an hour)
$node->safe_psql('up', q{
INSERT INTO m VALUES ('2024-05-01 00:00:30', 'h1', 1000), ('2024-05-03 00:00:00', NULL, 5);
UPDATE m SET ts = ts + interval '2 days' WHERE v = 10;
DELETE FROM m WHERE v BETWEEN 100 AND 120;
INSERT INTO t VALUES ('2024-05-02 03:00');
});
cmp_ok(fn_sink_diff($node, 'up', @{ $flows{$_} }), '>', 0, "0.1: $_ has windows pending") for @names;
cmp_ok($node->safe_psql('up', 'SELECT count(*) FROM flownode.pending'), '>', 0,
	'0.1: the windows are in the durable record');

# ---- 1. the current scripts installed, the server still on the 0.1 library ----
copy($_, $old_ext) or BAIL_OUT("copy $_: $!") for glob("$sharedir/extension/flownode*");
my ($ret, $out, $err) = $node->psql('up', 'ALTER EXTENSION flownode UPDATE');
isnt($ret, 0, 'the update fails while the server runs the 0.1 library');
like($err, qr/library loaded by this server is older than version 0\.2.*HINT:.*Restart the server/s,
	'... saying to restart the server');
is($node->safe_psql('up', "SELECT extversion FROM pg_extension WHERE extname = 'flownode'"),
	'0.1', '... and nothing changed');

# ---- 2. the current library, the database still at 0.1 ----
$node->stop;
delete $node->{_install_path};    # back to the installation under test (0.4)
my $log_offset = -s $node->logfile;
$node->start;

for my $call ('SELECT * FROM flownode.flows', "SELECT flownode.flush_flow('f_day')",
	q{SELECT flownode.create_flow('x', 'x', 'SELECT host, count(*) AS n FROM m GROUP BY 1', eval_interval => '1 hour')})
{
	($ret, $out, $err) = $node->psql('up', $call);
	like($err,
		qr/flownode objects of database "up" are version 0\.1, but the library loaded is version 0\.4.*HINT:  Run ALTER EXTENSION flownode UPDATE/s,
		"0.4 library, 0.1 objects: refused with a clear message: $call");
}
$node->safe_psql('up', q{
INSERT INTO m VALUES ('2024-05-01 06:00:10', 'h2', 7), ('2024-05-04 00:00:00', 'h1', 8);
UPDATE m SET v = v + 1 WHERE ts < '2024-05-01 00:03:00';
DELETE FROM m WHERE v BETWEEN 300 AND 305;
TRUNCATE t;
INSERT INTO t VALUES ('2024-05-01 00:10'), ('2024-05-05 00:10');
});
pass('0.4 library, 0.1 objects: INSERT, UPDATE, DELETE and TRUNCATE of sources work');
ok(fn_wait_log($node, qr/flows of database "up" wait for ALTER EXTENSION flownode UPDATE/, $log_offset, 30),
	'the log says the flows wait for the update');
is($node->safe_psql('up', q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'flownode flow'}),
	'0', 'no worker runs for objects of the older version');
is($node->safe_psql('up', 'SELECT 1'), '1', 'the server is up');
ok(!$node->log_contains(qr/terminated by signal|server process .* was terminated/, $log_offset), 'nothing crashed');

# ---- 3. ALTER EXTENSION flownode UPDATE ----
$node->safe_psql('up', 'ALTER EXTENSION flownode UPDATE');
is($node->safe_psql('up', "SELECT extversion FROM pg_extension WHERE extname = 'flownode'"), '0.4',
	'updated to 0.4');
ok(fn_wait_worker($node, 'up', $_), "0.4: worker of $_ runs after the update") for @names;

# the right to create flows: kept by fn_alice, who owns one, and by no one else
my $may_create = q{SELECT string_agg(r, ',' ORDER BY r) FROM unnest(ARRAY['fn_alice', 'fn_bob', 'public']) r
 WHERE has_function_privilege(r, 'flownode.create_flow(text,text,text,interval,interval,text,boolean,boolean,text)',
                              'EXECUTE')};
$node->safe_psql('postgres', 'CREATE ROLE fn_bob LOGIN');
is($node->safe_psql('up', $may_create), 'fn_alice', 'the update grants the right to create flows to the owners of flows only');

$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION flownode');
is($node->safe_psql('fresh', $may_create), '', 'a fresh install grants the right to create flows to no one');
# the same grant, given by a DBA
$node->safe_psql('fresh', 'GRANT EXECUTE ON FUNCTION flownode.create_flow TO fn_alice');
my $fresh = fn_extension_catalog($node, 'fresh');
like($fresh, qr/^member table flownode\.flow_binding$/m, 'the catalog description covers the new objects');
like($fresh, qr/^init_privs function flownode\.create_flow\(.*\{postgres=X\/postgres\}$/m,
	'... and the privileges the extension records as its own');
like($fresh, qr/^member table flownode\.run_history$/m, '... the run history');
is(fn_extension_catalog($node, 'up'), $fresh, 'the updated catalog is the same as a fresh 0.4 install');

# the flows: every marking trigger fires always, and nothing was lost
is( $node->safe_psql('up',
		"SELECT string_agg(format('%s:%s:%s', flow_name, owner, marking_enabled), ',' ORDER BY flow_name) FROM flownode.flows"),
	'f_day:postgres:t,f_min:fn_alice:t,f_t:postgres:t,f_total:postgres:t',
	'the flows are all there, with their owners, marking in every replication role');
$node->safe_psql('up', 'SELECT flownode.flush_flow(flow_name) FROM flownode.flows');
check_exact('up', 'after the update and a flush (writes under 0.1 and before the update included)');

# key marks (0.4, on by default): the update gives the flow keyed by a column
# (f_min, by host) the key triggers a fresh install's flow gets at creation
my $key_triggers = q{SELECT count(*) FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid
 WHERE p.proname = 'mark_keyed' AND t.tgrelid = 'm'::regclass};
is($node->safe_psql('up', $key_triggers), '3', 'the update installs the key triggers of f_min, as a fresh install would');

$node->safe_psql('up', q{
INSERT INTO m VALUES ('2024-05-01 00:20:00', 'h3', 9);
DELETE FROM m WHERE v BETWEEN 500 AND 502;
INSERT INTO t VALUES ('2024-05-01 07:07');
});
is($node->safe_psql('up', q{SELECT count(*) > 0 FROM flownode.pending_keys k JOIN flownode.flow f USING (flow_id)
 WHERE f.flow_name = 'f_min'}), 't', 'a late row after the update marks f_min by its keys');
$node->safe_psql('up', 'SELECT flownode.flush_flow(flow_name) FROM flownode.flows');
check_exact('up', 'after later writes and a flush');
is($node->safe_psql('up', q{SELECT flownode.create_flow('f_new', 'sink_new',
  $q$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, count(*) AS n FROM m GROUP BY 1$q$,
  eval_interval => '1 hour') > max(flow_id) FROM flownode.flow WHERE flow_name <> 'f_new'}),
	't', 'a new flow after the update gets a new id');
is($node->safe_psql('up', q{SET ROLE fn_alice; SELECT flownode.create_flow('f_alice', 'sink_alice',
  $q$SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, count(*) AS n FROM m GROUP BY 1$q$,
  eval_interval => '1 hour') > 0}), 't', 'fn_alice, who owned a flow before the update, still creates flows');
$node->safe_psql('up', q{GRANT SELECT, TRIGGER ON m TO fn_bob});
($ret, $out, $err) = $node->psql('up', q{SET ROLE fn_bob; SELECT flownode.create_flow('f_bob', 'public.sink_bob',
  'SELECT host, count(*) AS n FROM m GROUP BY 1', eval_interval => '1 hour')});
like($err, qr/permission denied for function create_flow/, 'a role that owned no flow may not create one');

# the updated database survives a dump and restore
my $dump = "$tmp/up.fc";
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('up') ], 'pg_dump of the updated database');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', $node->connstr('restored'), $dump ], 'pg_restore of it');
is($node->safe_psql('restored', "SELECT count(*) FROM flownode.flows WHERE state <> 'restored'"),
	'6', 'every flow is back and bound');
is($node->safe_psql('restored', $may_create), 'fn_alice', 'the grant to fn_alice is restored, and no other');
is($node->safe_psql('restored', $key_triggers), '3', 'the restored f_min has its key triggers again');
$node->safe_psql('restored', q{INSERT INTO m VALUES ('2024-05-02 02:02:02', 'h0', 11)});
$node->safe_psql('restored', 'SELECT flownode.flush_flow(flow_name) FROM flownode.flows');
check_exact('restored', 'after the restore, a write and a flush');

# ---- 4. from 0.3 ----
my $q3 = q{SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, count(*) AS n FROM m GROUP BY 1};
$node->safe_psql('postgres', 'CREATE DATABASE from03');
$node->safe_psql('from03', qq{
CREATE EXTENSION flownode VERSION '0.3';
CREATE TABLE m (ts timestamptz NOT NULL, host text, v int NOT NULL);
INSERT INTO m SELECT timestamptz '2024-05-01' + i * interval '7 minutes', 'h', i FROM generate_series(0, 99) i;
SELECT flownode.create_flow('f3', 'sink3', \$q\$$q3\$q\$, eval_interval => '1 hour');
GRANT EXECUTE ON FUNCTION flownode.create_flow TO fn_alice;
});
my $pid3 = fn_wait_worker($node, 'from03', 'f3');
ok($pid3, '0.3 objects: the worker of f3 runs');
is($node->safe_psql('from03', q{SELECT state || '|' || (last_failure IS NULL) || '|' || runs || '|' || marking_enabled
  FROM flownode.flows}), 'active|true|0|true', '0.4 library, 0.3 objects: the flows view of 0.3, with its columns');
$node->safe_psql('from03', q{INSERT INTO m VALUES ('2024-05-01 10:00', 'h', 1)});
$node->safe_psql('from03', 'ALTER EXTENSION flownode UPDATE');
is($node->safe_psql('from03', "SELECT extversion FROM pg_extension WHERE extname = 'flownode'"), '0.4',
	'0.3 updated to 0.4');
is(fn_extension_catalog($node, 'from03'), $fresh, 'updated from 0.3: the catalog is the same as a fresh 0.4 install');
is(fn_worker_pid($node, 'from03', 'f3'), $pid3, 'the flow\'s worker ran on through the update');
$node->safe_psql('from03', q{SELECT flownode.flush_flow('f3')});
is(fn_sink_diff($node, 'from03', 'sink3', $q3), '0', 'from 0.3: sink = query after the update and a flush');
is($node->safe_psql('from03', q{SELECT kind || '|' || succeeded || '|' || windows FROM flownode.runs WHERE flow_name = 'f3'}),
	'flush|true|1', 'the runs after the update are in its run history');
is($node->safe_psql('from03', q{SELECT state || '|' || marking_enabled || '|' || (last_error_sqlstate IS NULL)
  FROM flownode.flows}), 'active|true|true', 'and the flows view has the columns of 0.4');

$node->stop;
done_testing();
