# ALTER EXTENSION flownode UPDATE from 0.2 to 0.4, through 0.3 (docs/operations.md
# "Upgrades"):
# from 0.3 on, creating a flow needs EXECUTE on flownode.create_flow, which PUBLIC no
# longer has; the update keeps every flow and the right of each role owning one.
#   1. with the 0.2 release's source (FLOWNODE_V02_SRC, prepared by test/run_all.sh):
#      its library runs flows with windows pending; the current scripts are installed
#      but the server still runs the 0.2 library: ALTER EXTENSION flownode UPDATE
#      refuses, saying to restart, and changes nothing. Without it, 0.2's objects
#      are created by this library (CREATE EXTENSION flownode VERSION '0.2').
#   2. the current library with 0.2's objects: the flows run and are flushed, and
#      0.2's rights hold (any role may still create flows).
#   3. ALTER EXTENSION flownode UPDATE: the flows keep running and nothing written
#      is lost; fn_bob, who owns a flow, still creates flows; fn_carol, who owned
#      none, may not; the catalog is that of a fresh 0.4 install with the same grant;
#      a fresh install gives the right to no one.
#   4. pg_dump and pg_restore of the updated database into one whose caps
#      (flownode.max_flows_per_database, flownode.max_flows_per_role) are below its
#      flows: every flow comes back and runs, fn_bob's grant too, and only new flows
#      are refused.
use strict;
use warnings;
use File::Copy qw(copy);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

my $v02 = $ENV{FLOWNODE_V02_SRC};
$v02 = undef unless $v02 && -f "$v02/sql/flownode--0.2.sql";
my $tmp = PostgreSQL::Test::Utils::tempdir;
my $sharedir = `pg_config --sharedir`;
chomp $sharedir;

# the 0.2 release, built against the installation under test, in a copy of it
my ($old, $old_ext) = $v02 ? fn_release_install($v02, '0.2', $tmp) : ();
my $node = PostgreSQL::Test::Cluster->new('rights', $old ? (install_path => $old) : ());
$node->init;
$node->append_conf('postgresql.conf', "max_worker_processes = 32\n");
$node->start;

# flow => [sink, query]
my %flows = (
	f_bob => [
		'sink_bob',
		q{SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, host, count(*) AS n, sum(v) AS s
  FROM m GROUP BY 1, 2}
	],
	f_admin => [ 'sink_admin', q{SELECT date_trunc('day', ts, 'UTC') AS d, count(*) AS n FROM m GROUP BY 1} ],);
my @names = sort keys %flows;
my $create_flow = 'flownode.create_flow(text,text,text,interval,interval,text,boolean,boolean,text)';
my $may_create = qq{SELECT coalesce(string_agg(r, ',' ORDER BY r), '') FROM unnest(ARRAY['fn_bob', 'fn_carol', 'public']) r
 WHERE has_function_privilege(r, '$create_flow', 'EXECUTE')};

sub check_exact
{
	my ($db, $when) = @_;
	$node->safe_psql($db, 'SELECT flownode.flush_flow(flow_name) FROM flownode.flows');
	is(fn_sink_diff($node, $db, @{ $flows{$_} }), '0', "$db: $_: sink = query after a flush $when") for @names;
}

# ---- 0.2 ----
$node->safe_psql('postgres', q{CREATE ROLE fn_bob LOGIN; CREATE ROLE fn_carol LOGIN; CREATE DATABASE up;});
$node->safe_psql('up', $v02 ? 'CREATE EXTENSION flownode' : "CREATE EXTENSION flownode VERSION '0.2'");
is($node->safe_psql('up', "SELECT extversion FROM pg_extension WHERE extname = 'flownode'"),
	'0.2', $v02 ? 'the 0.2 release installs' : '0.2 installs');
$node->safe_psql('up', qq{
GRANT CREATE ON SCHEMA public TO fn_bob, fn_carol;
CREATE TABLE m (ts timestamptz NOT NULL, host text, v int NOT NULL);
CREATE INDEX ON m (ts);
GRANT SELECT, TRIGGER ON m TO fn_bob, fn_carol;
INSERT INTO m SELECT timestamptz '2024-05-01' + i * interval '50 seconds', 'h' || (i % 4), i
  FROM generate_series(0, 1999) i;
SELECT flownode.create_flow('f_admin', 'sink_admin', \$q\$$flows{f_admin}[1]\$q\$, eval_interval => '1 hour');
SET ROLE fn_bob;
SELECT flownode.create_flow('f_bob', 'sink_bob', \$q\$$flows{f_bob}[1]\$q\$, eval_interval => '1 hour');
});
is($node->safe_psql('up', $may_create), 'fn_bob,fn_carol,public', '0.2: every role may create flows');
ok(fn_wait_worker($node, 'up', $_), "0.2: worker of $_ runs") for @names;
# windows pending (the workers evaluate only after an hour)
$node->safe_psql('up', q{
INSERT INTO m VALUES ('2024-05-01 00:00:30', 'h1', 1000), ('2024-05-03 00:00:00', NULL, 5);
DELETE FROM m WHERE v BETWEEN 100 AND 120;
});
cmp_ok(fn_sink_diff($node, 'up', @{ $flows{$_} }), '>', 0, "0.2: $_ has windows pending") for @names;

# ---- 1. the current scripts installed, the server still on the 0.2 library ----
SKIP:
{
	skip 'FLOWNODE_V02_SRC (the 0.2 release\'s source, set by test/run_all.sh) is not set', 3 unless $v02;
	copy($_, $old_ext) or BAIL_OUT("copy $_: $!") for glob("$sharedir/extension/flownode*");
	my ($ret, $out, $err) = $node->psql('up', 'ALTER EXTENSION flownode UPDATE');
	isnt($ret, 0, 'the update fails while the server runs the 0.2 library');
	like($err, qr/library loaded by this server is older than version 0\.3.*HINT:.*Restart the server/s,
		'... saying to restart the server');
	is($node->safe_psql('up', "SELECT extversion FROM pg_extension WHERE extname = 'flownode'"),
		'0.2', '... and nothing changed');
	$node->stop;
	delete $node->{_install_path};    # back to the installation under test
	$node->start;
}

# ---- 2. the current library, the database still at 0.2 ----
ok(fn_wait_worker($node, 'up', $_), "0.4 library, 0.2 objects: worker of $_ runs") for @names;
$node->safe_psql('up', q{INSERT INTO m VALUES ('2024-05-01 06:00:10', 'h2', 7)});
check_exact('up', 'with the 0.4 library and 0.2 objects');
is($node->safe_psql('up', q{SET ROLE fn_carol; SELECT flownode.create_flow('f_carol02', 'sink_carol02',
  'SELECT host, count(*) AS n FROM m GROUP BY 1', eval_interval => '1 hour') > 0}),
	't', '0.4 library, 0.2 objects: 0.2\'s rights hold (any role creates flows)');
$node->safe_psql('up', q{SET ROLE fn_carol; SELECT flownode.drop_flow('f_carol02'); DROP TABLE sink_carol02});
$node->safe_psql('up', q{INSERT INTO m VALUES ('2024-05-01 00:01:10', 'h3', 9)});
my %pid = map { $_ => fn_worker_pid($node, 'up', $_) } @names;

# ---- 3. ALTER EXTENSION flownode UPDATE ----
$node->safe_psql('up', 'ALTER EXTENSION flownode UPDATE');
is($node->safe_psql('up', "SELECT extversion FROM pg_extension WHERE extname = 'flownode'"), '0.4', 'updated to 0.4');
is(fn_worker_pid($node, 'up', $_), $pid{$_}, "0.4: the worker of $_ runs on through the update") for @names;
is($node->safe_psql('up', $may_create), 'fn_bob', 'the right to create flows is kept by fn_bob, who owns one, only');
check_exact('up', 'after the update (writes before it included)');
is($node->safe_psql('up', q{SET ROLE fn_bob; SELECT flownode.create_flow('f_bob2', 'sink_bob2',
  'SELECT host, count(*) AS n FROM m GROUP BY 1', eval_interval => '1 hour') > 0}),
	't', 'fn_bob still creates flows');
my ($ret, $out, $err) = $node->psql('up', q{SET ROLE fn_carol; SELECT flownode.create_flow('f_carol', 'sink_carol',
  'SELECT host, count(*) AS n FROM m GROUP BY 1', eval_interval => '1 hour')});
like($err, qr/ERROR:  permission denied for function create_flow/, 'fn_carol, who owned no flow, may not');
($ret, $out, $err) = $node->psql('up', q{SET ROLE fn_carol; SELECT * FROM flownode.execute(
  'CREATE FLOW f_carol SINK TO sink_carol EVAL INTERVAL ''1 hour'' AS SELECT host, count(*) AS n FROM m GROUP BY host')});
like($err, qr/ERROR:  permission denied for function create_flow/, '... nor through CREATE FLOW');
$node->safe_psql('up', q{INSERT INTO m VALUES ('2024-05-01 00:02:10', 'h0', 3)});
check_exact('up', 'after a write following the update');

$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION flownode');
is($node->safe_psql('fresh', $may_create), '', 'a fresh 0.4 install gives no one the right to create flows');
$node->safe_psql('fresh', "GRANT EXECUTE ON FUNCTION $create_flow TO fn_bob");
is(fn_extension_catalog($node, 'up'), fn_extension_catalog($node, 'fresh'),
	'the updated catalog is that of a fresh 0.4 install where fn_bob was granted the right');

# ---- 4. dump and restore under caps ----
my $dump = "$tmp/up.fc";
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('up') ], 'pg_dump of the updated database');
$node->safe_psql('postgres', q{CREATE DATABASE restored;
ALTER DATABASE restored SET flownode.max_flows_per_database = 1;
ALTER ROLE fn_bob IN DATABASE restored SET flownode.max_flows_per_role = 0;});
$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', $node->connstr('restored'), $dump ],
	'pg_restore into a database whose caps are below its flows');
is($node->safe_psql('restored', "SELECT string_agg(flow_name || ':' || owner, ',' ORDER BY flow_name) FROM flownode.flows WHERE state <> 'restored'"),
	'f_admin:postgres,f_bob:fn_bob,f_bob2:fn_bob', 'every flow is back and bound');
is($node->safe_psql('restored', $may_create), 'fn_bob', 'fn_bob\'s grant is restored');
ok(fn_wait_worker($node, 'restored', $_), "restored: worker of $_ runs") for @names;
$node->safe_psql('restored', q{INSERT INTO m VALUES ('2024-05-02 02:02:02', 'h0', 11)});
check_exact('restored', 'after the restore and a write');
($ret, $out, $err) = $node->psql('restored', q{SELECT flownode.create_flow('f_new', 'sink_new',
  'SELECT host, count(*) AS n FROM m GROUP BY 1', eval_interval => '1 hour')});
like($err, qr/ERROR:  flownode\.max_flows_per_database \(1\) reached: database "restored" has 3 flows/,
	'a new flow is refused by the database\'s cap');

$node->stop;
done_testing();
