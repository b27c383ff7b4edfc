# A refresh that fails (division by zero in the flow query) puts its windows
# back, shows state 'failing' with last_error, retries with exponential backoff
# capped by flownode.max_backoff, never blocks writers or other flows, and heals
# by itself once the cause is gone.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use FlownodeTAP;

my $node = fn_node('failing_heals', "flownode.max_backoff = '2s'");
my $bad_q = q{SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w,
  count(*) AS n, sum(1000 / v) AS inv FROM bad GROUP BY 1};
my $good_q = q{SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w,
  count(*) AS n, sum(v) AS s FROM good GROUP BY 1};

$node->safe_psql('postgres', qq{
CREATE EXTENSION flownode;
CREATE TABLE bad (ts timestamptz NOT NULL, v int NOT NULL);
CREATE INDEX ON bad (ts);
CREATE TABLE good (ts timestamptz NOT NULL, v int NOT NULL);
CREATE INDEX ON good (ts);
INSERT INTO bad SELECT timestamptz '2024-04-01' + i * interval '10 seconds', i FROM generate_series(1, 100) i;
INSERT INTO good SELECT timestamptz '2024-04-01' + i * interval '10 seconds', i FROM generate_series(1, 100) i;
SELECT flownode.create_flow('fbad', 'sink_bad', \$q\$$bad_q\$q\$, eval_interval => '1 second');
SELECT flownode.create_flow('fgood', 'sink_good', \$q\$$good_q\$q\$, eval_interval => '1 second');
});
ok(fn_wait_worker($node, 'postgres', 'fbad'), 'worker of fbad runs');
ok(fn_wait_worker($node, 'postgres', 'fgood'), 'worker of fgood runs');

# The row with v = 0 makes every refresh of its window fail.
$node->safe_psql('postgres', q{
INSERT INTO bad VALUES (timestamptz '2024-04-01 00:05:05', 0), (timestamptz '2024-04-01 02:00', 5)});
ok(fn_poll($node, 'postgres',
	"SELECT state FROM flownode.flows WHERE flow_name = 'fbad'", 'failing', 30),
	'fbad becomes failing');
my $t_first = time();
like(fn_flow_field($node, 'postgres', 'fbad', 'last_error'), qr/division by zero/,
	'last_error names the cause');
is(fn_try($node, 'postgres', q{SELECT last_error_at IS NOT NULL, last_error_sqlstate
  FROM flownode.flows WHERE flow_name = 'fbad'}), 't|22012',
	'while failing, last_error_at is its time and last_error_sqlstate its SQLSTATE (division_by_zero)');
is(fn_try($node, 'postgres', q{SELECT kind, sqlstate, error FROM flownode.runs WHERE flow_name = 'fbad'
  AND NOT succeeded ORDER BY started_at DESC LIMIT 1}), 'refresh|22012|division by zero',
	'the failed refresh is in the run history, with its SQLSTATE and message');
cmp_ok($node->safe_psql('postgres', "SELECT failures FROM flownode.flow_info WHERE flow_name = 'fbad'"), '>', 0,
	'failures counted');
cmp_ok(fn_flow_field($node, 'postgres', 'fbad', 'dirty_windows'), '>', 0,
	'failed windows were put back (still dirty)');

my ($rc, $out, $err) = $node->psql('postgres', "SELECT flownode.flush_flow('fbad')");
isnt($rc, 0, 'flush_flow of the failing flow raises an error');
like($err, qr/division by zero/, 'the flush error names the cause');

# Backoff from 1 s doubling, capped at 2 s: six failures take about 1+2+2+2+2 s
# after the first (uncapped it would be 1+2+4+8+16 s).
ok(fn_poll($node, 'postgres',
	"SELECT failures >= 6 FROM flownode.flow_info WHERE flow_name = 'fbad'", 't',
	18 - (time() - $t_first)),
	'the failing flow keeps retrying, with backoff capped by max_backoff = 2s');
is(fn_flow_field($node, 'postgres', 'fbad', 'state'), 'failing', 'still failing while the cause remains');

# Writers of the failing flow's source are not blocked.
($rc, $out, $err) = $node->psql('postgres', q{
SET statement_timeout = '10s';
INSERT INTO bad SELECT timestamptz '2024-04-01 01:00' + i * interval '7 seconds', 200 + i FROM generate_series(1, 50) i;
UPDATE bad SET ts = ts + interval '3 minutes' WHERE v % 8 = 1;
DELETE FROM bad WHERE v % 10 = 3;});
is($rc, 0, 'writes to the failing flow\'s source are not blocked') or diag($err);

# The other flow keeps working, on its own cadence and with flush.
$node->safe_psql('postgres', q{
SET statement_timeout = '10s';
INSERT INTO good SELECT timestamptz '2024-04-01 00:30' + i * interval '13 seconds', 500 + i FROM generate_series(1, 60) i;
DELETE FROM good WHERE v % 7 = 0;});
ok(fn_poll($node, 'postgres',
	"SELECT (SELECT count(*) FROM (TABLE sink_good EXCEPT ALL ($good_q)) a)"
	  . " + (SELECT count(*) FROM (($good_q) EXCEPT ALL TABLE sink_good) b) = 0", 't', 30),
	'the other flow catches up by itself while fbad fails');
($rc, $out, $err) = $node->psql('postgres', "SELECT flownode.flush_flow('fgood')");
is($rc, 0, 'flush_flow of the other flow succeeds') or diag($err);
is(fn_sink_diff($node, 'postgres', 'sink_good', $good_q), '0', 'the other flow\'s sink is exact');
is(fn_flow_field($node, 'postgres', 'fgood', 'state'), 'active', 'the other flow is active');

# Fix the cause: the flow heals by itself.
$node->safe_psql('postgres', 'DELETE FROM bad WHERE v = 0');
ok(fn_poll($node, 'postgres',
	"SELECT state FROM flownode.flows WHERE flow_name = 'fbad'", 'active', 60),
	'fbad heals by itself once the bad row is gone');
# Healed: the error is no longer current, but the last failure stays visible.
is(fn_try($node, 'postgres', q{SELECT last_error IS NULL, last_error_at IS NULL, consecutive_failures
  FROM flownode.flows WHERE flow_name = 'fbad'}), 't|t|0',
	'a healed flow shows no current error (last_error, last_error_at NULL)');
like(fn_try($node, 'postgres', q{SELECT error FROM flownode.runs WHERE flow_name = 'fbad' AND NOT succeeded
  ORDER BY started_at DESC LIMIT 1}) // '',
	qr/division by zero/, 'a healed flow keeps its last failure in the run history');
is(fn_try($node, 'postgres', q{SELECT max(h.started_at) FILTER (WHERE NOT h.succeeded) BETWEEN now() - interval '5 minutes' AND now()
  AND max(h.started_at) FILTER (WHERE NOT h.succeeded) < f.last_run_at
  FROM flownode.runs h JOIN flownode.flows f USING (flow_name) WHERE flow_name = 'fbad' GROUP BY f.last_run_at}), 't',
	'and when it happened, before the healing run');
is(fn_try($node, 'postgres', q{SELECT f.last_error IS NULL AND NOT EXISTS (SELECT FROM flownode.runs h
  WHERE h.flow_name = f.flow_name AND NOT h.succeeded) FROM flownode.flows f WHERE flow_name = 'fgood'}), 't',
	'a flow that never failed has no failure in its history');
ok(fn_poll($node, 'postgres',
	"SELECT (SELECT count(*) FROM (TABLE sink_bad EXCEPT ALL ($bad_q)) a)"
	  . " + (SELECT count(*) FROM (($bad_q) EXCEPT ALL TABLE sink_bad) b) = 0", 't', 30),
	'the healed flow catches up without a flush');
($rc, $out, $err) = $node->psql('postgres', "SELECT flownode.flush_flow('fbad')");
is($rc, 0, 'flush_flow of the healed flow succeeds') or diag($err);
is(fn_sink_diff($node, 'postgres', 'sink_bad', $bad_q), '0', 'the healed flow\'s sink is exact');
is(fn_sink_diff($node, 'postgres', 'sink_good', $good_q), '0', 'the other flow\'s sink is still exact');

$node->stop;
done_testing();
