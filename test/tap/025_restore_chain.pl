# A restore of a chain (docs/internals.md §9): a flow whose source is another
# flow's sink is bound when the restore builds its own sink's key, and trusts its
# restored sink and record. The flow below it is bound earlier (its sink's key
# comes first) and its worker starts at once: had it refreshed its sink (the
# upper flow's source) before the upper flow was bound, nothing would have marked
# that write for the upper flow, whose sink would then stay wrong while it says
# active (the oracle's seed 690925970 on PostgreSQL 18).
#
# The post-data section is restored in two steps, so the window between the two
# bindings is as long as the test wants: while the upper flow waits for its key,
# the lower flow's worker (eval_interval 1 s) and a flush_flow of the lower flow
# must not write its sink; once the key is built both flows go on, and after a
# flush every sink equals its query, read_flow included.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

my $node = fn_node('chain', 'max_worker_processes = 16');
my $dir = PostgreSQL::Test::Utils::tempdir;

my $q_day = q{SELECT date_bin('1 day', ts, timestamptz '2000-01-01') AS d, k, count(*) AS n,
  sum(v) AS sv FROM src GROUP BY 1, 2};
my $q_month = q{SELECT date_trunc('month', d, 'UTC') AS m, k, sum(n) AS n, max(sv) AS mx
  FROM day_sink GROUP BY 1, 2};

$node->safe_psql('postgres', 'CREATE DATABASE a');
$node->safe_psql('a', qq{
CREATE EXTENSION flownode;
CREATE TABLE src (ts timestamptz NOT NULL, k int, v int);
CREATE INDEX ON src (ts);
INSERT INTO src SELECT timestamptz '2024-01-01' + i * interval '1 hour', i % 3, i
  FROM generate_series(0, 999) i;
SELECT flownode.create_flow('day', 'day_sink', \$q\$$q_day\$q\$, eval_interval => '1 hour');
SELECT flownode.create_flow('month', 'month_sink', \$q\$$q_month\$q\$, eval_interval => '1 hour');
-- pending at dump time in the lower flow only: its refresh after the restore is
-- what the upper flow must see
INSERT INTO src SELECT timestamptz '2024-01-03' + i * interval '1 hour', 7, 1000 + i
  FROM generate_series(0, 99) i;
DELETE FROM src WHERE ts < '2024-01-02';
});
cmp_ok(fn_sink_diff($node, 'a', 'day_sink', $q_day), '>', 0, 'the lower flow has windows pending at dump time');
is(fn_sink_diff($node, 'a', 'month_sink', $q_month), '0', 'the upper flow is exact at dump time');

my $dump = "$dir/a.fc";
$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('a') ], 'pg_dump -Fc');
my $list = `pg_restore -l $dump`;
my @items = split /\n/, $list;
my @upper_key = grep { /CONSTRAINT .*month_sink/ } @items;
is(scalar @upper_key, 1, "the dump builds the upper flow's sink key in one item");
my @rest = grep { !/CONSTRAINT .*month_sink/ } @items;
my ($rest_list, $upper_list) = ("$dir/rest.list", "$dir/upper.list");
PostgreSQL::Test::Utils::append_to_file($rest_list, join("\n", @rest) . "\n");
PostgreSQL::Test::Utils::append_to_file($upper_list, join("\n", @upper_key) . "\n");

$node->safe_psql('postgres', 'CREATE DATABASE b');
$node->command_ok([ 'pg_restore', '--exit-on-error', '-L', $rest_list, '-d', $node->connstr('b'), $dump ],
	'pg_restore of everything but the upper sink key');
is($node->safe_psql('b', "SELECT state FROM flownode.flows WHERE flow_name = 'month'"),
	'restored', 'the upper flow awaits its key');
ok(fn_poll($node, 'b', "SELECT marking_enabled FROM flownode.flows WHERE flow_name = 'day'"),
	'the lower flow is bound');
# the lower flow is due: a second of its eval_interval, then a flush
$node->safe_psql('b', "SELECT flownode.alter_flow('day', eval_interval => '1 second')");
sleep 3;
my ($ret, $out, $err) = $node->psql('b', "SELECT flownode.flush_flow('day')");
like($err, qr/flow "month".*is not bound/s,
	'a flush of the lower flow waits for the restore of the upper one, and says so')
  or diag("flush_flow('day') returned $ret: $out");
cmp_ok(fn_sink_diff($node, 'b', 'day_sink', $q_day), '>', 0,
	"the lower flow has not written its sink while the upper one awaits its key");

$node->command_ok([ 'pg_restore', '--exit-on-error', '-L', $upper_list, '-d', $node->connstr('b'), $dump ],
	"pg_restore of the upper sink's key");
ok(fn_poll($node, 'b', "SELECT bool_and(marking_enabled) FROM flownode.flows"), 'both flows are bound');
$node->safe_psql('b', "SELECT flownode.flush_flow('day'); SELECT flownode.flush_flow('month');");
is(fn_sink_diff($node, 'b', 'day_sink', $q_day), '0', 'the lower sink equals its query');
is(fn_sink_diff($node, 'b', 'month_sink', $q_month), '0', 'the upper sink equals its query');
is( $node->safe_psql('b',
		"SELECT count(*) FROM ((SELECT * FROM flownode.read_flow(NULL::month_sink) EXCEPT ALL $q_month)"
		  . " UNION ALL ($q_month EXCEPT ALL SELECT * FROM flownode.read_flow(NULL::month_sink))) x"),
	'0', 'read_flow of the upper flow equals its query');
$node->safe_psql('b', "INSERT INTO src VALUES ('2024-02-10 10:00', 1, 5)");
$node->safe_psql('b', "SELECT flownode.flush_flow('day'); SELECT flownode.flush_flow('month');");
is(fn_sink_diff($node, 'b', 'month_sink', $q_month), '0', 'later writes reach the upper sink');

$node->stop;
done_testing();
