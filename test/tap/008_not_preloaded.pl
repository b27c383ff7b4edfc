# Without shared_preload_libraries, flownode's SQL objects install and every call
# that needs shared memory fails with an ERROR that says how to fix it; the session
# goes on (defining a server-start setting after startup would end it with FATAL).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

my $node = fn_node('not_preloaded', "shared_preload_libraries = ''");

my ($rc, $out, $err) = $node->psql('postgres', 'CREATE EXTENSION flownode');
is($rc, 0, 'CREATE EXTENSION works without preloading') or diag($err);

$node->safe_psql('postgres', 'CREATE TABLE m (ts timestamptz NOT NULL, v int)');
($rc, $out, $err) = $node->psql('postgres', q{
SELECT flownode.create_flow('f', 'f_sink',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, count(*) AS n FROM m GROUP BY 1$$);
SELECT 'still connected';});
isnt($rc, 0, 'create_flow fails');
like($err, qr/ERROR:  flownode is not loaded through shared_preload_libraries/, 'with an ERROR naming the cause');
like($err, qr/HINT:  Add flownode to shared_preload_libraries/, 'and a hint');
unlike($err, qr/FATAL/, 'not a FATAL');

($rc, $out, $err) = $node->psql('postgres', q{
SELECT count(*) FROM flownode.flows;
SELECT current_setting('flownode.max_rows_per_refresh');
INSERT INTO m VALUES (now(), 1);
SELECT count(*) FROM m;});
is($rc, 0, 'the flows view, settings and writes work in the same session') or diag($err);
is($out, "0\n1000000\n1", 'with their usual answers');

($rc, $out, $err) = $node->psql('postgres', q{SELECT flownode.flush_flow('f')});
like($err, qr/ERROR:  (flownode is not loaded through shared_preload_libraries|flow "f" does not exist)/,
	'flush_flow fails with an ERROR');
unlike($err, qr/FATAL/, 'not a FATAL');

$node->stop;
done_testing();
