# Each flow keeps its own statements and fold in a shared pool worker (
# docs/internals.md §6, "Each flow's statements and fold"): one worker
# (flownode.max_workers = 1) refreshes two flows in turn, and each folds its open
# window's new rows (flow_info's folded_refreshes), where one set per process
# was freed at every turn to the other flow and neither ever folded. A relcache
# invalidation of a flow whose set is kept while the worker serves the other (a
# RENAME COLUMN of its source) makes it analyse and prepare again, and every sink
# stays exact (flownode.verify_folds checks each fold against the query).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

my $node = fn_node('plans', 'flownode.max_workers = 1');

sub q_of
{
	my ($i, $col) = @_;
	$col //= 'v';
	return "SELECT date_trunc('day', ts) AS d, count(*) AS n, sum($col) AS s, max($col) AS hi FROM src_$i GROUP BY 1";
}

sub diff
{
	my ($i, $col) = @_;
	my $q = q_of($i, $col);
	return $node->safe_psql('postgres',
		"SELECT (SELECT count(*) FROM (TABLE sink_$i EXCEPT ALL ($q)) a) + (SELECT count(*) FROM (($q) EXCEPT ALL TABLE sink_$i) b)");
}

# a row at now() (today's window, the open one) and the flow's flush
sub write_and_flush
{
	my ($i, $col) = @_;
	$col //= 'v';
	$node->safe_psql('postgres',
		"INSERT INTO src_$i (ts, $col) VALUES (now(), 1); SELECT flownode.flush_flow('f$i');");
}

for my $i (1, 2)
{
	$node->safe_psql('postgres', ($i == 1 ? 'CREATE EXTENSION flownode;' : '')
		  . "CREATE TABLE src_$i (ts timestamptz NOT NULL, v int NOT NULL); CREATE INDEX ON src_$i (ts);"
		  . "INSERT INTO src_$i SELECT date_trunc('day', now()) + (now() - date_trunc('day', now())) * (g / 1000.0), g"
		  . " FROM generate_series(0, 999) g;"
		  . "SELECT flownode.create_flow('f$i', 'sink_$i', \$q\$@{[ q_of($i) ]}\$q\$, eval_interval => '1 day');");
}
ok(fn_poll($node, 'postgres',
	'SELECT count(*) FILTER (WHERE worker_pid IS NOT NULL) = 2 AND count(DISTINCT worker_pid) = 1 FROM flownode.flows'),
	'one worker serves both flows');

# The two flows in turn: the first refresh of each recomputes its window and starts
# a fold, the next ones fold.
for (1 .. 4) { write_and_flush(1); write_and_flush(2); }
my $folds = $node->safe_psql('postgres',
	"SELECT string_agg(flow_name || '=' || folded_refreshes, ',' ORDER BY flow_name) FROM flownode.flow_info");
note("folded refreshes: $folds");
is($node->safe_psql('postgres', 'SELECT bool_and(folded_refreshes >= 3) FROM flownode.flow_info'),
	't', 'each flow folds while the worker refreshes them in turn');
is(diff(1) + diff(2), 0, 'both sinks equal their queries');

# f1's set is kept while the worker refreshes f2 last; a RENAME COLUMN of f1's
# source rewrites its stored query and invalidates the source: f1's next refresh
# analyses and prepares again, with the new name.
$node->safe_psql('postgres', 'ALTER TABLE src_1 RENAME COLUMN v TO val');
write_and_flush(2);
write_and_flush(1, 'val');
is($node->safe_psql('postgres', "SELECT consecutive_failures FROM flownode.flows WHERE flow_name = 'f1'"),
	'0', 'the renamed source\'s flow refreshes (its kept statements were made stale)');
write_and_flush(1, 'val');
write_and_flush(2);
is(diff(1, 'val') + diff(2), 0, 'both sinks equal their queries after the rename');

$node->stop;
done_testing();
