# Steering across restarts: a paused flow stays paused after a clean restart and
# after a crash (its pause is in the catalog), its writes made while paused come back
# from the durable record with their commit time (the lag), and on resume it catches
# up on its own; a renamed flow's worker comes back under its new name; a background
# backfill goes on after a restart from the chunk it had reached (its progress is
# committed with each chunk); create_flow's 'now' fill reports its progress when it
# takes more than a few seconds.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

my $node = fn_node('steer', 'flownode.backfill_chunk_rows = 50');
my $query = q{SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, host,
  count(*) AS n, sum(v) AS s FROM src GROUP BY 1, 2};

$node->safe_psql('postgres', qq{
CREATE EXTENSION flownode;
CREATE TABLE src (ts timestamptz NOT NULL, host text NOT NULL, v int NOT NULL);
CREATE INDEX ON src (ts);
INSERT INTO src SELECT timestamptz '2024-01-01' + i * interval '7 seconds', 'h' || (i % 3), i
  FROM generate_series(1, 300) i;
SELECT flownode.create_flow('f', 'snk', \$q\$$query\$q\$, eval_interval => '1 second');
});
my $pid = fn_wait_worker($node, 'postgres', 'f');
ok($pid, 'the flow runs');

# ---- paused: writes are recorded, nothing is refreshed, across restarts ----
$node->safe_psql('postgres', q{
SELECT flownode.pause_flow('f');
INSERT INTO src VALUES ('2024-01-01 00:00:01', 'p', 1), ('2024-01-02 10:00', 'p', 2);
UPDATE src SET v = v + 1000 WHERE v % 50 = 0;
DELETE FROM src WHERE v % 77 = 0;});
my $dirty = fn_flow_field($node, 'postgres', 'f', 'dirty_windows');
cmp_ok($dirty, '>', 0, 'writes while paused mark windows');
sleep(3);
is(fn_flow_field($node, 'postgres', 'f', 'state'), 'paused', 'the flow is paused');
isnt(fn_sink_diff($node, 'postgres', 'snk', $query), '0', 'nothing was refreshed while paused');

$node->restart;
ok(fn_wait_worker($node, 'postgres', 'f'), 'after a restart the worker is back');
ok(fn_poll($node, 'postgres', "SELECT dirty_windows FROM flownode.flows WHERE flow_name = 'f'", $dirty, 30),
	'the windows written while paused are reloaded from the record');
is(fn_flow_field($node, 'postgres', 'f', 'state'), 'paused', 'still paused after the restart');
is(fn_flow_field($node, 'postgres', 'f', "lag >= interval '3 seconds'"), 't',
	'the lag counts from the writes\' commit, recorded before the restart');
sleep(2);
is($node->safe_psql('postgres', "SELECT runs FROM flownode.flow_info WHERE flow_name = 'f'"), '0', 'nothing is refreshed after the restart either');
isnt(fn_sink_diff($node, 'postgres', 'snk', $query), '0', 'the sink still lags');
my ($rc, $out, $err) = $node->psql('postgres', "SELECT flownode.flush_flow('f')");
like($err, qr/cannot flush flow "f" because it is paused/, 'flush_flow says it is paused');

# a crash while paused
$node->safe_psql('postgres', q{INSERT INTO src VALUES ('2024-01-03 00:00', 'c', 3);});
$node->stop('immediate');
$node->start;
ok(fn_wait_worker($node, 'postgres', 'f'), 'after a crash the worker is back');
is(fn_flow_field($node, 'postgres', 'f', 'state'), 'paused', 'still paused after the crash');

# renamed while paused, then resumed: it catches up without a flush
$node->safe_psql('postgres',
	q{SELECT flownode.alter_flow('f', new_name => 'g', eval_interval => '200 milliseconds')});
ok(fn_wait_worker($node, 'postgres', 'g'), 'the worker shows the new name');
$node->safe_psql('postgres', q{SELECT flownode.resume_flow('g')});
ok(fn_poll($node, 'postgres', "SELECT state || '|' || dirty_windows || '|' || (lag IS NULL)
  FROM flownode.flows WHERE flow_name = 'g'", 'active|0|true', 30), 'resumed, it catches up');
is(fn_sink_diff($node, 'postgres', 'snk', $query), '0', 'the sink equals its query');
$node->restart;
ok(fn_wait_worker($node, 'postgres', 'g'), 'after a restart the worker comes back as g');

# ---- a background backfill goes on after a restart ----
# one row a minute for 17 hours, hourly windows: chunks of 50 rows are one hour each;
# a zero in hour 8 stops it there
my $bq = q{SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, count(*) AS n,
  sum(100 / v) AS s FROM bf GROUP BY 1};
$node->safe_psql('postgres', qq{
CREATE TABLE bf (ts timestamptz NOT NULL, v int NOT NULL);
CREATE INDEX ON bf (ts);
INSERT INTO bf SELECT timestamptz '2024-02-01' + i * interval '1 minute', i + 1
  FROM generate_series(0, 1019) i;
UPDATE bf SET v = 0 WHERE ts = '2024-02-01 08:30+00';
SELECT flownode.create_flow('b', 'bsnk', \$q\$$bq\$q\$, eval_interval => '1 hour',
  backfill => 'background');
});
ok(fn_poll($node, 'postgres', q{SELECT state || '|' || backfill_windows_done || '|' || backfill_windows_total
  FROM flownode.flow_info WHERE flow_name = 'b'}, 'failing|8|17', 30),
	'the backfill reaches hour 8 and fails there');
# the worker commits asynchronously (synchronous_commit = off: a lost chunk is filled
# again); what must survive is the progress it committed, so flush the WAL first
$node->safe_psql('postgres', 'CHECKPOINT');
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', "SELECT backfill_windows_done || '|' || backfill_windows_total FROM flownode.flow_info WHERE flow_name = 'b'"), '8|17',
	'its progress survives a crash');
ok(fn_wait_worker($node, 'postgres', 'b'), 'the worker is back');
$node->safe_psql('postgres', q{
UPDATE bf SET v = 1 WHERE v = 0;
INSERT INTO bf VALUES ('2024-02-01 14:30+00', 9);});
($rc, $out, $err) = $node->psql('postgres', "SELECT flownode.flush_flow('b')");
is($rc, 0, 'a flush finishes the backfill') or diag($err);
is($node->safe_psql('postgres', "SELECT state || '|' || (backfill_windows_total IS NULL) FROM flownode.flow_info WHERE flow_name = 'b'"), 'active|true',
	'the backfill is done');
is(fn_sink_diff($node, 'postgres', 'bsnk', $bq), '0', 'the backfilled sink equals its query');
ok($node->log_contains(qr/flow "b" is backfilled/), 'the end of the backfill is logged');

# ---- create_flow's 'now' fill reports its progress ----
# 0.02 s per row (a function declared IMMUTABLE is taken at its word), 420 rows in
# hourly chunks of 60: about 8 s
$node->safe_psql('postgres', q{
CREATE FUNCTION slow(v int) RETURNS int IMMUTABLE LANGUAGE plpgsql AS
  $$BEGIN PERFORM pg_sleep(0.02); RETURN v; END$$;
CREATE TABLE sl (ts timestamptz NOT NULL, v int NOT NULL);
CREATE INDEX ON sl (ts);
INSERT INTO sl SELECT timestamptz '2024-03-01' + i * interval '1 minute', i FROM generate_series(0, 419) i;});
my $sq = q{SELECT date_bin('1 hour', ts, timestamptz '2000-01-01') AS h, sum(slow(v)) AS s FROM sl GROUP BY 1};
($rc, $out, $err) = $node->psql('postgres', "SELECT flownode.create_flow('s', 'ssnk', \$q\$$sq\$q\$)");
is($rc, 0, 'a long fill succeeds') or diag($err);
like($err, qr/NOTICE:  flow "s": filled \d+ of 7 windows \(\d+ sink rows\) in \d+\.\d s/,
	'it reports its progress while it runs');
like($err, qr/NOTICE:  flow "s": sink filled with 7 rows in \d+\.\d s/, 'and how long it took');
is(fn_sink_diff($node, 'postgres', 'ssnk', $sq), '0', 'the sink equals its query');
is($node->safe_psql('postgres', "SELECT rows_written || '|' || (last_run_duration > interval '5 s') FROM flownode.flow_info WHERE flow_name = 's'"),
	'7|true', 'the flows view shows the fill');

$node->stop;
done_testing();
