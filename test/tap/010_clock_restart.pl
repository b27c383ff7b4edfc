# A flow whose query compares its time column with now() (a sliding filter) keeps its
# clock, the scheduled time its sink follows, in flownode.flow_clock. After a restart,
# clean or immediate, the worker marks from that clock: rows that left the filter while
# the server was down leave the sink, which is again the query at the clock's time
# (docs/internals.md §2, invariants 1 and 4).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

my $node = fn_node('clock_restart');
$node->safe_psql('postgres', q{
CREATE EXTENSION flownode;
CREATE TABLE ev (id int PRIMARY KEY, ts timestamptz NOT NULL, v int);
CREATE INDEX ON ev (ts);
INSERT INTO ev SELECT i, date_trunc('second', now()) + i * interval '1 second', i
  FROM generate_series(-300, 60) i;
SELECT flownode.create_flow('recent', 'recent',
  $q$SELECT date_bin('10 seconds', ts, timestamptz '2000-01-01') AS w, count(*) AS n, sum(v) AS s
       FROM ev WHERE ts > now() - interval '2 minutes' GROUP BY 1$q$,
  eval_interval => '1 second');
});

# The sink against the query at the flow's clock, in one snapshot.
my $diff_sql = q{
BEGIN ISOLATION LEVEL REPEATABLE READ;
WITH c AS (SELECT evaluated_at AS t FROM flownode.flow_clock),
     q AS (SELECT date_bin('10 seconds', ts, timestamptz '2000-01-01') AS w, count(*) AS n, sum(v) AS s
             FROM ev, c WHERE ts > c.t - interval '2 minutes' GROUP BY 1)
SELECT (SELECT count(*) FROM (TABLE recent EXCEPT ALL TABLE q) a)
     + (SELECT count(*) FROM (TABLE q EXCEPT ALL TABLE recent) b);
COMMIT;
};

ok(fn_wait_worker($node, 'postgres', 'recent'), 'the worker runs');
$node->safe_psql('postgres', "SELECT flownode.flush_flow('recent')");
is($node->safe_psql('postgres', $diff_sql), '0', 'the sink is the query at the clock');

foreach my $mode ('immediate', 'fast')
{
	my $before = $node->safe_psql('postgres',
		"SELECT evaluated_at || '|' || (SELECT sum(n) FROM recent) FROM flownode.flow_clock");
	my ($clock, $rows) = split /\|/, $before;
	$node->stop($mode);
	sleep 4;    # rows leave the filter while nothing runs
	$node->start;
	ok(fn_wait_worker($node, 'postgres', 'recent'), "the worker runs again after a $mode stop");
	ok(fn_poll($node, 'postgres',
		"SELECT evaluated_at >= timestamptz '$clock' + interval '4 seconds' FROM flownode.flow_clock",
		't', 30), "the clock moved on after the $mode stop");
	ok(fn_poll($node, 'postgres', $diff_sql, '0', 30),
		"without a flush, the sink is the query at the clock after the $mode stop");
	cmp_ok($node->safe_psql('postgres', 'SELECT sum(n) FROM recent'), '<', $rows,
		"rows that left the filter while the server was down ($mode) left the sink");
	$node->safe_psql('postgres', "SELECT flownode.flush_flow('recent')");
	is($node->safe_psql('postgres', $diff_sql), '0', "exact after a flush too ($mode)");
}

$node->stop;
done_testing();
