# A flow dropped right after it is created, while its new worker is still starting,
# leaves no worker behind. The drop can commit after the worker read the flow's
# row but before the worker put itself on the flow's shared slot; then the drop
# finds a slot without a worker and frees it, and the worker must notice on its
# own that the flow is gone. Many create/drop cycles make that window likely.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

my $node = fn_node('drop_before_attach');
my $cycles = 100;

$node->safe_psql('postgres', q{
CREATE EXTENSION flownode;
CREATE TABLE src (ts timestamptz NOT NULL, v int NOT NULL);
INSERT INTO src SELECT timestamptz '2024-03-01' + j * interval '7 seconds', j
  FROM generate_series(1, 200) j;
});

# Half the cycles drop the flow with drop_flow, half by dropping its sink table
# (the event trigger drops the flow); each statement commits on its own, so the
# drop races the worker that create_flow's commit started. The pause between the
# two sweeps 0 to 25 ms, across the time a new worker takes to start.
my $script = '';
for my $i (1 .. $cycles)
{
	my $drop = $i % 2
	  ? "SELECT flownode.drop_flow('r$i');"
	  : "DROP TABLE rsink_$i;";
	my $pause = ($i % 50) * 0.0005;
	$script .= qq{SELECT flownode.create_flow('r$i', 'rsink_$i',
  \$q\$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, count(*) AS n
  FROM src GROUP BY 1\$q\$);
SELECT pg_sleep($pause);
$drop
};
}
my ($rc, $out, $err) = $node->psql('postgres', $script);
is($rc, 0, "$cycles create/drop cycles succeed") or diag($err);
is($node->safe_psql('postgres', 'SELECT count(*) FROM flownode.flows'), '0',
	'no flow is left in the catalog');

ok(fn_poll($node, 'postgres',
	"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'flownode flow'", '0', 30),
	'no flow worker is left running');

# A flow created afterwards under a dropped flow's name works normally.
$node->safe_psql('postgres', q{
SELECT flownode.create_flow('r1', 'rsink_1',
  $q$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, count(*) AS n
  FROM src GROUP BY 1$q$);
});
ok(fn_wait_worker($node, 'postgres', 'r1'), 'the re-created flow gets exactly one worker');
$node->safe_psql('postgres',
	"INSERT INTO src VALUES (timestamptz '2024-03-01 05:00:10', 1)");
$node->safe_psql('postgres', "SELECT flownode.flush_flow('r1')");
is(fn_sink_diff($node, 'postgres', 'rsink_1', q{SELECT date_bin('1 minute', ts,
  timestamptz '2000-01-01') AS w, count(*) AS n FROM src GROUP BY 1}), '0',
	'the re-created flow\'s sink equals its query');

$node->stop;
done_testing();
