# Hot standby and promotion. On a streaming standby nothing of flownode runs: every
# management call fails at once with PostgreSQL's wording for it (SQLSTATE 25006,
# "cannot execute flush_flow() during recovery"), a direct call of the marking
# functions does nothing, and the flows view says 'standby' with the dirty windows
# counted from the replicated durable record (flownode.pending), also for a role
# that cannot read that table. After the primary dies (immediate stop: its workers
# refresh nothing first) and the standby is promoted, the flows' workers start
# there and flush_flow makes every sink exact: no pending window was lost.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);
use FlownodeTAP;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->start;

my %query = (
	f_min => q{SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, host,
  count(*) AS n, sum(v) AS s FROM m GROUP BY 1, 2},
	f_day => q{SELECT date_trunc('day', ts, 'UTC') AS d, count(*) AS n, max(v) AS hi FROM m GROUP BY 1},
	f_total => q{SELECT host, count(*) AS n FROM m GROUP BY 1},
	f_clean => q{SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, count(*) AS n
  FROM quiet GROUP BY 1},);
my %sink = (f_min => 'sink_min', f_day => 'sink_day', f_total => 'sink_total',
	f_clean => 'sink_clean');

# eval_interval of an hour: the workers never refresh on their own during the test.
# f_min belongs to fn_alice, who may not read flownode.pending.
$primary->safe_psql('postgres', qq{
CREATE EXTENSION flownode;
CREATE ROLE fn_alice LOGIN;
GRANT CREATE ON SCHEMA public TO fn_alice;
GRANT EXECUTE ON FUNCTION flownode.create_flow TO fn_alice;
CREATE TABLE m (ts timestamptz NOT NULL, host text NOT NULL, v int NOT NULL);
CREATE INDEX ON m (ts);
GRANT SELECT, TRIGGER ON m TO fn_alice;
CREATE TABLE quiet (ts timestamptz NOT NULL, v int NOT NULL);
INSERT INTO m VALUES ('2024-05-01 09:00:10+00', 'a', 1), ('2024-05-01 11:30:00+00', 'b', 2),
  ('2024-05-01 11:45:00+00', 'a', 3);
INSERT INTO quiet VALUES ('2024-05-01 09:00:10+00', 1);
SET ROLE fn_alice;
SELECT flownode.create_flow('f_min', 'sink_min', \$q\$$query{f_min}\$q\$, eval_interval => '1 hour');
RESET ROLE;
SELECT flownode.create_flow('f_day', 'sink_day', \$q\$$query{f_day}\$q\$, eval_interval => '1 hour');
SELECT flownode.create_flow('f_total', 'sink_total', \$q\$$query{f_total}\$q\$, eval_interval => '1 hour');
SELECT flownode.create_flow('f_clean', 'sink_clean', \$q\$$query{f_clean}\$q\$, eval_interval => '1 hour');
});
ok(fn_wait_worker($primary, 'postgres', $_), "worker of $_ runs on the primary")
  for sort keys %query;

$primary->backup('bk');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'bk', has_streaming => 1);
$standby->start;

# Committed writes, never refreshed. Windows of f_min: 10:00-10:02 (3), 10:01 again
# and 12:00 (1 more), 11:30 (a delete), 09:00 and 09:05 (an update moving a row),
# 2024-05-03 12:00: 8. Days of f_day: 2024-05-01 and 2024-05-03, not the day between.
$primary->safe_psql('postgres', q{
INSERT INTO m VALUES ('2024-05-01 10:00:05+00', 'a', 10), ('2024-05-01 10:01:05+00', 'b', 11),
  ('2024-05-01 10:02:05+00', 'a', 12);
INSERT INTO m VALUES ('2024-05-01 10:01:30+00', 'c', 13), ('2024-05-01 12:00:00+00', 'a', 14);
DELETE FROM m WHERE ts = '2024-05-01 11:30:00+00';
UPDATE m SET ts = '2024-05-01 09:05:10+00' WHERE ts = '2024-05-01 09:00:10+00';
INSERT INTO m VALUES ('2024-05-03 12:00:00+00', 'd', 15);
});
my $expected = 'f_clean|0,f_day|2,f_min|8,f_total|1';
my $dirty_sql = q{SELECT string_agg(flow_name || '|' || dirty_windows, ',' ORDER BY flow_name)
  FROM flownode.flows};
is($primary->safe_psql('postgres', $dirty_sql), $expected,
	'the primary counts the dirty windows');
$primary->wait_for_catchup($standby);

# ---- on the standby ----
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 't', 'the standby is in recovery');
is($standby->safe_psql('postgres', q{
SELECT string_agg(flow_name || '|' || state || '|' || dirty_windows || '|' || runs || '|'
  || (worker_pid IS NULL) || '|' || (last_error IS NULL), ',' ORDER BY flow_name) FROM flownode.flows NATURAL JOIN (SELECT flow_id, runs FROM flownode.flow_info) i}),
	'f_clean|standby|0|0|true|true,f_day|standby|2|0|true|true,'
	  . 'f_min|standby|8|0|true|true,f_total|standby|1|0|true|true',
	'the flows view says standby, with the dirty windows of the replicated record');
is($standby->safe_psql('postgres', q{
SELECT string_agg(flow_name || '|' || coalesce((lag > interval '0')::text, '-') || '|'
  || coalesce((oldest_dirty_window = (SELECT to_timestamp(min(t) / 1e6 + 946684800) FROM
       (SELECT lower(r) FROM flownode.pending p, unnest(p.ranges) r WHERE p.flow_id = v.flow_id
        UNION ALL SELECT window_start FROM flownode.pending_keys k WHERE k.flow_id = v.flow_id) o(t)))::text, '-'),
  ',' ORDER BY flow_name) FROM flownode.flows v NATURAL JOIN (SELECT flow_id, oldest_dirty_window FROM flownode.flow_info) i}),
	'f_clean|-|-,f_day|true|true,f_min|true|true,f_total|true|-',
	'its lag and oldest dirty window come from the record (commit times, ranges, key marks)');
my ($rc, $out, $err) = $standby->psql('postgres',
	'SET ROLE fn_alice; SELECT count(*) FROM flownode.pending');
like($err, qr/permission denied/, 'fn_alice may not read flownode.pending');
is(fn_try($standby, 'postgres', qq{SET ROLE fn_alice; $dirty_sql}), 'f_min|8',
	'the owner without access to the record sees its flow\'s dirty windows too');
isnt(fn_sink_diff($standby, 'postgres', 'sink_min', $query{f_min}), '0',
	'the sink of f_min lags its query on the standby (the windows are really pending)');

my @calls = (
	[ 'create_flow', q{SELECT flownode.create_flow('f_new', 'sink_new',
  $$SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, count(*) AS n FROM m GROUP BY 1$$)} ],
	[ 'drop_flow',  q{SELECT flownode.drop_flow('f_min')} ],
	[ 'drop_flow',  q{SELECT flownode.drop_flow('no_such_flow', if_exists => true)} ],
	[ 'flush_flow', q{SELECT flownode.flush_flow('f_min')} ],
	[ 'flush_flow', q{SET ROLE fn_alice; SELECT flownode.flush_flow('f_min')} ],
	[ 'alter_flow', q{SELECT flownode.alter_flow('f_min', comment => 'x')} ],
	[ 'pause_flow', q{SELECT flownode.pause_flow('f_min')} ],
	[ 'resume_flow', q{SELECT flownode.resume_flow('f_min')} ],);
for my $c (@calls)
{
	my ($fn, $sql) = @$c;
	my $t0 = time();
	($rc, $out, $err) = $standby->psql('postgres', "\\set VERBOSITY verbose\n$sql");
	my $secs = time() - $t0;
	isnt($rc, 0, "$fn fails on the standby ($sql)");
	like($err, qr/ERROR:  25006: cannot execute \Q$fn\E\(\) during recovery/,
		"$fn: PostgreSQL's message and SQLSTATE read_only_sql_transaction")
	  or diag($err);
	cmp_ok($secs, '<', 5, "$fn fails at once");
}
($rc, $out, $err) = $standby->psql('postgres', q{
SELECT flownode.mark_row('m'::regclass, 1::int2, timestamptz '2030-01-01 00:00+00'),
       flownode.mark_row_removed('m'::regclass, 1::int2, timestamptz '2030-01-01 00:00+00',
                                 timestamptz '2030-01-02 00:00+00')});
is("$rc|$out", '0|f|f', 'a direct call of the marking functions does nothing on the standby')
  or diag($err);
is($standby->safe_psql('postgres', $dirty_sql), $expected, 'and the dirty windows are unchanged');

# ---- the primary dies, the standby takes over ----
$primary->stop('immediate');
$standby->promote;
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'), 'f', 'the standby is promoted');
ok(fn_wait_worker($standby, 'postgres', $_), "worker of $_ starts after the promotion")
  for sort keys %query;
ok(fn_poll($standby, 'postgres', q{SELECT string_agg(flow_name || '|' || state || '|' || dirty_windows,
  ',' ORDER BY flow_name) FROM flownode.flows},
	'f_clean|active|0,f_day|active|2,f_min|active|8,f_total|active|1', 30),
	'the promoted flows are active, with the pending windows reloaded from the record');
is($standby->safe_psql('postgres', q{SELECT flownode.flush_flow('f_min'), flownode.flush_flow('f_day')}),
	'8|2', 'flush_flow refreshes every pending window');
$standby->safe_psql('postgres', "SELECT flownode.flush_flow('$_')") for sort keys %query;
is(fn_sink_diff($standby, 'postgres', $sink{$_}, $query{$_}), '0',
	"after the promotion the sink of $_ equals its query (nothing lost)")
  for sort keys %query;

# and the promoted server manages flows again
($rc, $out, $err) = $standby->psql('postgres', q{
INSERT INTO m VALUES ('2024-05-02 08:00:00+00', 'e', 16);
SELECT flownode.flush_flow('f_min');
SELECT flownode.drop_flow('f_clean');});
is($rc, 0, 'flush_flow and drop_flow work after the promotion') or diag($err);
is(fn_sink_diff($standby, 'postgres', 'sink_min', $query{f_min}), '0', 'f_min follows new writes');

$standby->stop;
done_testing();
