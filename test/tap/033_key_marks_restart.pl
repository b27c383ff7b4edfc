# Key marks survive a crash exactly (docs/internals.md §3 and §4, *Key marks*): late
# rows committed into closed windows and not refreshed yet are rows of
# flownode.pending_keys, committed with them; after an immediate stop and a start,
# the worker finds them, a flush refreshes their groups, and the sink equals its
# query. A group of the same window changed in the sink by hand stays as it was:
# only the marked groups were recomputed, not whole windows.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

my $node = fn_node('key_marks_restart');
$node->append_conf('postgresql.conf', "flownode.key_marks_per_window = 16\n");
$node->restart;
my $query = q{SELECT date_trunc('day', ts) AS d, dev, site, count(*) AS n, sum(v) AS s, max(v) AS mx
  FROM src GROUP BY 1, 2, 3};

$node->safe_psql('postgres', qq{
SET timezone = 'UTC';
CREATE EXTENSION flownode;
CREATE TABLE src (ts timestamptz NOT NULL, dev int, site text, v int NOT NULL);
CREATE INDEX ON src (ts);
CREATE INDEX ON src (flownode.key_hash(dev, site), ts);
INSERT INTO src SELECT timestamptz '2025-01-01' + i * interval '5 minutes', i % 30,
  CASE WHEN i % 11 = 0 THEN NULL ELSE 's' || (i % 2) END, i FROM generate_series(1, 5000) i;
SELECT flownode.create_flow('f', 'snk', \$q\$$query\$q\$, eval_interval => '1 hour');
});
is(fn_sink_diff($node, 'postgres', 'snk', $query), '0', 'create_flow fills the sink');
is($node->safe_psql('postgres',
	"SELECT count(*) FROM pg_trigger WHERE tgrelid = 'src'::regclass AND tgname LIKE 'flownode_mark_keys%'"),
	'3', 'the flow marks keys');
my $pid = fn_wait_worker($node, 'postgres', 'f');
ok($pid, 'flow worker runs');

# a group the refreshes of key marks must leave alone (same day as the late rows)
$node->safe_psql('postgres',
	"UPDATE snk SET n = -1 WHERE d = '2025-01-03' AND dev = 5 AND site = 's1'");

# late rows for a few keys, a new key, a key's last row gone, a key that moves, NULL keys
$node->safe_psql('postgres', q{
INSERT INTO src VALUES ('2025-01-03 10:00+00', 3, 's1', 100000), ('2025-01-03 11:00+00', NULL, NULL, 7),
  ('2025-01-03 12:00+00', 77, 'new', 1), ('2025-01-04 01:00+00', 4, NULL, 9);
DELETE FROM src WHERE dev = 6 AND site = 's0' AND ts >= '2025-01-05' AND ts < '2025-01-06';
UPDATE src SET dev = 78 WHERE dev = 8 AND ts >= '2025-01-07' AND ts < '2025-01-08';
});
my $marks = $node->safe_psql('postgres', 'SELECT count(*) FROM flownode.pending_keys');
ok($marks > 0, "key marks are pending ($marks)");
is($node->safe_psql('postgres', "SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'f'"),
	$node->safe_psql('postgres', 'SELECT count(DISTINCT window_start) FROM flownode.pending_keys'),
	'the flows view counts the windows of the key marks as dirty');

$node->stop('immediate');
$node->start;
$pid = fn_wait_worker($node, 'postgres', 'f', $pid);
ok($pid, 'flow worker is running again after the crash');
is($node->safe_psql('postgres', 'SELECT count(*) FROM flownode.pending_keys'), $marks,
	'the key marks survived the crash');
my ($rc, $out, $err) = $node->psql('postgres', "SELECT flownode.flush_flow('f')");
is($rc, 0, 'flush_flow succeeds') or diag($err);
is($node->safe_psql('postgres', 'SELECT count(*) FROM flownode.pending_keys'), '0',
	'the flush refreshed every key mark');
is($node->safe_psql('postgres',
	"SELECT n FROM snk WHERE d = '2025-01-03' AND dev = 5 AND site = 's1'"), '-1',
	'the untouched group of the same window was not recomputed');
$node->safe_psql('postgres', "SELECT flownode.refresh_flow('f', '2025-01-03', '2025-01-04')");
is(fn_sink_diff($node, 'postgres', 'snk', $query), '0', 'sink equals its query');

# marks committed while the worker is gone (a fast restart) are found at its start
$node->safe_psql('postgres', "INSERT INTO src VALUES ('2025-01-09 10:00+00', 9, 's0', 5)");
$node->restart(mode => 'fast');
$pid = fn_wait_worker($node, 'postgres', 'f', $pid);
($rc, $out, $err) = $node->psql('postgres', "SELECT flownode.flush_flow('f')");
is($rc, 0, 'flush_flow succeeds after a fast restart') or diag($err);
is(fn_sink_diff($node, 'postgres', 'snk', $query), '0', 'sink equals its query after a fast restart');

$node->stop;
done_testing();
