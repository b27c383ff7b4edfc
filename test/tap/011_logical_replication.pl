# Logical replication (docs/operations.md "Logical replication"). The flows are
# on the subscriber's copy of a published table. Their triggers fire ALWAYS, so the
# subscription's workers mark, although they apply with session_replication_role =
# replica: the initial table sync (a COPY in a tablesync worker) and every streamed
# INSERT, UPDATE (within and across windows), DELETE and TRUNCATE. The flows'
# workers never refresh on their own here (eval_interval of an hour): after each
# step, one flush_flow on the subscriber makes every sink equal to its query, which
# holds only if the replicated change was marked.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

my $pub = PostgreSQL::Test::Cluster->new('publisher');
$pub->init(allows_streaming => 'logical');
$pub->start;
my $sub = fn_node('subscriber');

my $table = q{CREATE TABLE m (id int PRIMARY KEY, ts timestamptz NOT NULL, host text, v int NOT NULL)};
$pub->safe_psql('postgres', qq{
$table;
INSERT INTO m SELECT i, timestamptz '2024-03-01' + i * interval '37 seconds', 'h' || (i % 5), i
  FROM generate_series(1, 3000) i;
CREATE PUBLICATION p FOR TABLE m;
});

# flow => [sink, query]
my %flows = (
	f_min => [
		'sink_min',
		q{SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, host, count(*) AS n,
  sum(v) AS s FROM m GROUP BY 1, 2}
	],
	f_hour => [ 'sink_hour', q{SELECT date_trunc('hour', ts, 'UTC') AS h, count(*) AS n, max(v) AS hi FROM m GROUP BY 1} ],
	f_hosts => [ 'sink_hosts', q{SELECT host, count(*) AS n FROM m GROUP BY 1} ],);
my @names = sort keys %flows;

# The flows exist before the subscription: the initial sync fills their source.
$sub->safe_psql('postgres', qq{
CREATE EXTENSION flownode;
$table;
CREATE INDEX ON m (ts);
});
for my $f (@names)
{
	$sub->safe_psql('postgres',
		"SELECT flownode.create_flow('$f', '$flows{$f}[0]', \$q\$$flows{$f}[1]\$q\$, eval_interval => '1 hour')");
}
ok(fn_wait_worker($sub, 'postgres', $_), "worker of $_ runs on the subscriber") for @names;
is($sub->safe_psql('postgres', 'SELECT count(*) FROM sink_min'), '0', 'the sinks start empty');

sub step
{
	my ($what, $sql) = @_;
	$pub->safe_psql('postgres', $sql) if defined $sql;
	$pub->wait_for_catchup('s');
	is( $sub->safe_psql('postgres', 'SELECT count(*) FROM m'),
		$pub->safe_psql('postgres', 'SELECT count(*) FROM m'),
		"$what: the subscriber has the publisher's rows");
	$sub->safe_psql('postgres', 'SELECT flownode.flush_flow(flow_name) FROM flownode.flows');
	is(fn_sink_diff($sub, 'postgres', @{ $flows{$_} }), '0', "$what: $_: sink = query after a flush")
	  for @names;
}

my $connstr = $pub->connstr . ' dbname=postgres';
$sub->safe_psql('postgres', "CREATE SUBSCRIPTION s CONNECTION '$connstr' PUBLICATION p");
$sub->poll_query_until('postgres',
	q{SELECT count(*) = 0 FROM pg_subscription_rel WHERE srsubstate NOT IN ('r', 's')})
  or die 'the initial table sync did not finish';
cmp_ok($sub->safe_psql('postgres', 'SELECT dirty_windows FROM flownode.flows WHERE flow_name = \'f_min\''),
	'>', 0, 'the initial table sync marked windows');
step('initial table sync');

step('streamed INSERT', q{
INSERT INTO m VALUES (5001, '2024-03-01 00:00:10', 'h1', 100), (5002, '2024-03-05 12:00:00', NULL, 7);
INSERT INTO m SELECT 6000 + i, timestamptz '2024-04-01' + i * interval '1 hour', 'h9', i FROM generate_series(1, 50) i;
});
step('streamed UPDATE within a window and across windows', q{
UPDATE m SET v = v * 2 WHERE id BETWEEN 10 AND 20;
UPDATE m SET ts = ts + interval '1 day', host = 'moved' WHERE id BETWEEN 100 AND 110;
});
step('streamed DELETE', q{DELETE FROM m WHERE id BETWEEN 500 AND 900});
step('a transaction of several kinds', q{
BEGIN;
INSERT INTO m VALUES (7001, '2024-03-02 03:03:03', 'h3', 3);
UPDATE m SET ts = '2024-03-09 09:09:09' WHERE id = 7001;
DELETE FROM m WHERE id = 1000;
COMMIT;
});
step('streamed TRUNCATE', q{TRUNCATE m});
is($sub->safe_psql('postgres', 'SELECT count(*) FROM sink_min'), '0', 'TRUNCATE emptied the sinks');
step('INSERT after TRUNCATE', q{
INSERT INTO m SELECT i, timestamptz '2024-06-01' + i * interval '13 seconds', 'h' || (i % 2), i
  FROM generate_series(1, 500) i;
});

$sub->stop;
$pub->stop;
done_testing();
