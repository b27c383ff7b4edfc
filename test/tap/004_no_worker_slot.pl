# With more flows than background worker slots, the flows without a worker show
# state 'waiting_for_worker', a WARNING naming max_worker_processes is logged,
# writers are not affected, and a waiting flow starts as soon as a slot frees,
# with nothing it was marked for lost.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

# 4 slots: the flownode launcher and the logical replication launcher take
# one each, so at most two of the four flows get a worker.
my $node = fn_node('no_worker_slot', 'max_worker_processes = 4',
	'max_parallel_workers_per_gather = 0');
my $nflows = 4;
my $query = q{SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w,
  count(*) AS n, sum(v) AS s FROM src_%d GROUP BY 1};
sub q_of { return sprintf($query, $_[0]); }

my $offset = -s $node->logfile;
$node->safe_psql('postgres', 'CREATE EXTENSION flownode');
for my $i (1 .. $nflows)
{
	my ($rc, $out, $err) = $node->psql('postgres', qq{
CREATE TABLE src_$i (ts timestamptz NOT NULL, v int NOT NULL);
CREATE INDEX ON src_$i (ts);
INSERT INTO src_$i SELECT timestamptz '2024-02-01' + j * interval '17 seconds', j
  FROM generate_series(1, 100) j;
SELECT flownode.create_flow('w$i', 'wsink_$i', \$q\$@{[ q_of($i) ]}\$q\$);
});
	is($rc, 0, "create_flow w$i succeeds even without a free worker slot")
	  or diag($err);
}

ok(fn_poll($node, 'postgres',
	"SELECT count(*) >= 1 FROM flownode.flows WHERE state = 'waiting_for_worker'", 't', 30),
	'at least one flow is waiting_for_worker');
my $waiting = $node->safe_psql('postgres',
	"SELECT flow_name FROM flownode.flows WHERE state = 'waiting_for_worker' "
	  . "ORDER BY flow_name DESC LIMIT 1");
like($waiting, qr/^w\d$/, "waiting flow: $waiting");
(my $wi = $waiting) =~ s/^w//;
is(fn_worker_pid($node, 'postgres', $waiting), '', 'the waiting flow has no worker process');
cmp_ok($node->safe_psql('postgres',
	"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'flownode flow'"),
	'<=', 2, 'no more flow workers than free slots');

ok(fn_wait_log($node, qr/WARNING:.*\n(?:.*\n){0,3}?.*max_worker_processes/, $offset),
	'server log has a WARNING whose hint names max_worker_processes');

# Writers to the waiting flow's source are not blocked and their marks are kept.
my ($rc, $out, $err) = $node->psql('postgres', qq{
SET statement_timeout = '20s';
INSERT INTO src_$wi SELECT timestamptz '2024-02-01' + j * interval '23 seconds', 1000 + j
  FROM generate_series(1, 150) j;
UPDATE src_$wi SET ts = ts + interval '4 minutes' WHERE v % 6 = 0;
DELETE FROM src_$wi WHERE v % 9 = 0;
});
is($rc, 0, 'writes to the waiting flow\'s source succeed') or diag($err);
is(fn_flow_field($node, 'postgres', $waiting, 'state'), 'waiting_for_worker',
	'flow still waiting after the writes');
cmp_ok(fn_flow_field($node, 'postgres', $waiting, 'dirty_windows'), '>', 0,
	'waiting flow keeps its dirty windows');

# Free slots: drop every other flow.
for my $i (grep { $_ != $wi } 1 .. $nflows)
{
	$node->safe_psql('postgres', "SELECT flownode.drop_flow('w$i')");
}
ok(fn_poll($node, 'postgres',
	"SELECT state FROM flownode.flows WHERE flow_name = '$waiting'", 'active', 60),
	'waiting flow becomes active once a slot frees');
ok(fn_wait_worker($node, 'postgres', $waiting), 'its worker is running');

# More writes now that it runs, then exact.
$node->safe_psql('postgres',
	"INSERT INTO src_$wi VALUES (timestamptz '2024-02-01 00:00:30', 7), (timestamptz '2024-02-01 03:00', 8)");
($rc, $out, $err) = $node->psql('postgres', "SELECT flownode.flush_flow('$waiting')");
is($rc, 0, 'flush_flow of the formerly waiting flow succeeds') or diag($err);
is(fn_sink_diff($node, 'postgres', "wsink_$wi", q_of($wi)), '0',
	'sink of the formerly waiting flow equals its query: nothing was dropped while it waited');

$node->stop;
done_testing();
