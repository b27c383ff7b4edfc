# With fewer background worker slots than flows, the pool serves every flow with
# the workers it could start (docs/internals.md §6): no flow waits for a worker
# of its own, the startup check's WARNING names max_worker_processes, writers are
# not affected, and every sink ends exact.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

# 4 slots: the flownode launcher and the logical replication launcher take
# one each, so at most two pool workers run (test/flownode.conf allows 16).
my $node = fn_node('no_worker_slot', 'max_worker_processes = 4',
	'max_parallel_workers_per_gather = 0');
my $nflows = 4;
my $query = q{SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w,
  count(*) AS n, sum(v) AS s FROM src_%d GROUP BY 1};
sub q_of { return sprintf($query, $_[0]); }

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
	'SELECT count(*) FILTER (WHERE worker_pid IS NULL) FROM flownode.flows', '0', 60),
	'every flow is served by a pool worker');
cmp_ok($node->safe_psql('postgres',
	"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'flownode flow'"),
	'<=', 2, 'no more flow workers than free slots');
is($node->safe_psql('postgres', "SELECT count(*) FROM flownode.flows WHERE state = 'waiting_for_worker'"),
	'0', 'no flow waits for a worker');
ok(fn_wait_log($node, qr/WARNING:.*\n(?:.*\n){0,3}?.*max_worker_processes/, 0),
	'server log has a WARNING whose hint names max_worker_processes');

# Writers are not affected, and every sink ends exact.
for my $i (1 .. $nflows)
{
	my ($rc, $out, $err) = $node->psql('postgres', qq{
SET statement_timeout = '20s';
INSERT INTO src_$i SELECT timestamptz '2024-02-01' + j * interval '23 seconds', 1000 + j
  FROM generate_series(1, 150) j;
UPDATE src_$i SET ts = ts + interval '4 minutes' WHERE v % 6 = 0;
DELETE FROM src_$i WHERE v % 9 = 0;
SELECT flownode.flush_flow('w$i');
});
	is($rc, 0, "writes to w$i\'s source and its flush succeed") or diag($err);
	is(fn_sink_diff($node, 'postgres', "wsink_$i", q_of($i)), '0', "sink of w$i equals its query");
}

$node->stop;
done_testing();
