# A flow whose shared dirty set is full coalesces neighbouring ranges; a writer
# whose window lies inside such a coalesced range records the whole range in
# flownode.pending (it is refreshed as one anyway), so later writers into that
# range skip their record. The record must still cover every committed change:
# after a crash, recovery plus flush_flow makes the sink exact.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

my $node = fn_node('coalesced', 'flownode.dirty_ranges_per_flow = 4');
my $query = q{SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w,
  count(*) AS n, sum(v) AS s FROM src GROUP BY 1};

$node->safe_psql('postgres', qq{
CREATE EXTENSION flownode;
CREATE TABLE src (ts timestamptz NOT NULL, v int NOT NULL);
SELECT flownode.create_flow('f', 'snk', \$q\$$query\$q\$, eval_interval => '1 hour');
});
my $pid = fn_wait_worker($node, 'postgres', 'f');
ok($pid, 'flow worker runs');

# 120 single-row transactions, each in another minute of a 40-minute span, in an
# order that jumps around: the 4-range dirty set coalesces early.
my $sql = '';
for my $i (1 .. 120)
{
	my $minute = ($i * 17) % 40;
	$sql .= "INSERT INTO src VALUES (timestamptz '2024-03-01' + interval '$minute minutes'"
	  . " + interval '$i seconds' / 10, $i);\n";
}
$node->safe_psql('postgres', $sql);

my $records = $node->safe_psql('postgres', 'SELECT count(*) FROM flownode.pending');
cmp_ok($records, '<', 42,
	"writers inside coalesced ranges skipped their record ($records records for 120 commits)");
cmp_ok(fn_flow_field($node, 'postgres', 'f', 'dirty_windows'), '>', 0, 'windows are dirty');
isnt(fn_sink_diff($node, 'postgres', 'snk', $query), '0', 'sink lags (eval_interval 1 hour)');

# crash: shared memory is lost; the record alone brings the marks back
$node->stop('immediate');
$node->start;
my $new = fn_wait_worker($node, 'postgres', 'f', $pid);
ok($new, 'flow worker is back after the crash');
my ($rc, $out, $err) = $node->psql('postgres', "SELECT flownode.flush_flow('f')");
is($rc, 0, 'flush_flow succeeds') or diag($err);
is(fn_sink_diff($node, 'postgres', 'snk', $query), '0', 'sink exact after recovery: nothing lost');
is($node->safe_psql('postgres', 'SELECT count(*) FROM flownode.pending'), '0',
	'the record is empty once everything is refreshed');

$node->stop;
done_testing();
