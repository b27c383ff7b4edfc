# refresh_flow's range is durable once it returns (docs/reference.md, refresh_flow):
# the range it recomputes is recorded nowhere (no mark, no durable record), so the
# worker's commit of it must reach the WAL on disk before the caller is told, even
# though the worker's other refreshes commit without waiting (their windows stay in
# the durable record until a refresh's commit, lost or not). Here the WAL writer
# sleeps for a minute: an immediate stop right after refresh_flow (as TimescaleDB's
# CALL refresh_continuous_aggregate on a WITH NO DATA flow) must not lose the sink's
# rows. Found by the randomized oracle (seed 274972782, a pg_upgrade after an
# immediate stop).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

my $node = fn_node('repair_durable', 'wal_writer_delay = 10s', 'wal_writer_flush_after = 0',
	'checkpoint_timeout = 1h');
my $query = q{SELECT date_trunc('day', ts) AS d, count(*) AS n, sum(v) AS s FROM src GROUP BY 1};
$node->safe_psql('postgres', qq{
SET timezone = 'UTC';
CREATE EXTENSION flownode;
CREATE TABLE src (ts timestamptz NOT NULL, v int NOT NULL);
CREATE INDEX ON src (ts);
INSERT INTO src SELECT timestamptz '2025-01-01' + i * interval '7 minutes', i FROM generate_series(1, 3000) i;
SELECT * FROM flownode.execute(\$ts\$CREATE MATERIALIZED VIEW daily WITH (timescaledb.continuous) AS
  SELECT time_bucket('1 day', ts) AS d, count(*) AS n, sum(v) AS s FROM src GROUP BY 1 WITH NO DATA\$ts\$);
});
ok(fn_wait_worker($node, 'postgres', 'daily'), 'flow worker runs');
is($node->safe_psql('postgres', 'SELECT count(*) FROM daily'), '0', 'WITH NO DATA: the sink is empty');
is($node->safe_psql('postgres', q{SELECT count(*) FROM flownode.execute($ts$CALL refresh_continuous_aggregate('daily', NULL, NULL)$ts$)}),
	'0', 'refresh_continuous_aggregate returns');
my $rows = $node->safe_psql('postgres', 'SELECT count(*) FROM daily');
ok($rows > 0, "the sink is filled ($rows rows)");

$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', 'SELECT count(*) FROM daily'), $rows,
	'after an immediate stop the sink still holds what refresh_flow wrote');
my $q = q{SELECT flownode.time_bucket('1 day', ts) AS d, count(*) AS n, sum(v) AS s FROM src GROUP BY 1};
is(fn_sink_diff($node, 'postgres', 'daily', $q), '0', 'and equals its query');

$node->stop;
done_testing();
