# Flow servers (docs/operations.md "Flow servers"): the fan-in topology. Two
# primaries (shards by device) take the writes and publish `metrics`; they carry no
# flownode. A flow server subscribes to both into one table and runs the flows over
# it, one of them a chain (f_hour reads f_min's sink). After each step
# flownode.wait_for_publishers, called at once after the primaries' commits (no
# wait_for_catchup), must leave every sink equal to its query over the union of the
# shards' rows, read from the primaries. Faults: the flow server restarts and crashes
# during writes, a publisher restarts, a subscription is disabled (the call fails
# naming it) and enabled, a column added on a publisher only stops the subscription
# (the call says it is failing), and a new flow server built with copy_data = true
# catches up. The flows view's replication column says, at each fault, what each
# subscription feeding a flow is doing: streaming, disabled, failing.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use FlownodeTAP;

my $table = q{CREATE TABLE metrics (device int NOT NULL, ts timestamptz NOT NULL, v int NOT NULL,
  PRIMARY KEY (device, ts))};
my %pubs;
for my $shard ('a', 'b')
{
	my $p = PostgreSQL::Test::Cluster->new("primary_$shard");
	$p->init(allows_streaming => 'logical');
	$p->start;
	my $parity = $shard eq 'a' ? 0 : 1;
	$p->safe_psql('postgres', qq{
$table;
INSERT INTO metrics SELECT d, timestamptz '2024-03-01' + i * interval '41 seconds', (i * 7 + d) % 97
  FROM generate_series(0, 19) d, generate_series(1, 150) i WHERE d % 2 = $parity;
CREATE PUBLICATION pub FOR TABLE metrics;
});
	$pubs{$shard} = $p;
}

# flow => [sink, query over `metrics`]
my %flows = (
	f_min => [
		'sink_min',
		q{SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, count(*) AS n, sum(v) AS total
  FROM metrics GROUP BY 1}
	],
	f_dev => [
		'sink_dev',
		q{SELECT date_trunc('hour', ts) AS hour, device, count(*) AS n, max(v) AS hi FROM metrics GROUP BY 1, 2}
	],);
# the chain's query over the sink, and the same over the shards' rows for the check
my $hour_sql = q{SELECT date_trunc('hour', minute) AS hour, sum(n) AS n, sum(total) AS total FROM sink_min GROUP BY 1};
my $hour_direct = q{SELECT date_trunc('hour', ts) AS hour, count(*)::numeric AS n, sum(v)::numeric AS total
  FROM metrics GROUP BY 1};

# A flow server: the table, its flows, and one subscription per primary.
sub flow_server
{
	my ($name, $prefix, $ddl) = @_;
	my $fs = fn_node($name, q{timezone = 'UTC'}, 'wal_retrieve_retry_interval = 500ms');
	$fs->safe_psql('postgres', "CREATE EXTENSION flownode; $table; CREATE INDEX ON metrics (ts); " . ($ddl // ''));
	$fs->safe_psql('postgres', "CREATE TABLE oracle (device int, ts timestamptz, v int)");
	for my $f (sort keys %flows)
	{
		$fs->safe_psql('postgres',
			"SELECT flownode.create_flow('$f', '$flows{$f}[0]', \$q\$$flows{$f}[1]\$q\$, eval_interval => '1 hour')");
	}
	$fs->safe_psql('postgres',
		"SELECT flownode.create_flow('f_hour', 'sink_hour', \$q\$$hour_sql\$q\$, eval_interval => '1 hour')");
	for my $shard ('a', 'b')
	{
		my $conn = $pubs{$shard}->connstr . ' dbname=postgres';
		$fs->safe_psql('postgres', "CREATE SUBSCRIPTION ${prefix}_$shard CONNECTION '$conn' PUBLICATION pub");
	}
	return $fs;
}

# Every sink against its query over the shards' rows, copied from the primaries now.
sub check_exact
{
	my ($fs, $what) = @_;
	my $rows = join(',',
		grep { $_ ne '' }
		  map { $pubs{$_}->safe_psql('postgres', q{SELECT string_agg(format('(%s,%L,%s)', device, ts, v), ',') FROM metrics}) }
		  'a', 'b');
	$fs->safe_psql('postgres', "TRUNCATE oracle; INSERT INTO oracle VALUES $rows");
	is($fs->safe_psql('postgres', 'SELECT count(*) FROM metrics'),
		$fs->safe_psql('postgres', 'SELECT count(*) FROM oracle'), "$what: the flow server has every shard's rows");
	for my $f (sort keys %flows)
	{
		(my $q = $flows{$f}[1]) =~ s/FROM metrics/FROM oracle/;
		is(fn_sink_diff($fs, 'postgres', $flows{$f}[0], $q), '0', "$what: $f: sink = query over the shards' rows");
	}
	(my $q = $hour_direct) =~ s/FROM metrics/FROM oracle/;
	is(fn_sink_diff($fs, 'postgres', 'sink_hour', $q), '0', "$what: f_hour (a chain): sink = query over the shards' rows");
}

# The exact-as-of call for each top flow (f_hour flushes f_min below it), then the check.
sub exact
{
	my ($fs, $what) = @_;
	$fs->safe_psql('postgres', "SELECT flownode.wait_for_publishers('$_', timeout => '60 s')") for 'f_hour', 'f_dev';
	check_exact($fs, $what);
}

sub write_both
{
	my ($n) = @_;
	for my $shard ('a', 'b')
	{
		my $parity = $shard eq 'a' ? 0 : 1;
		$pubs{$shard}->safe_psql('postgres', qq{
INSERT INTO metrics SELECT d, timestamptz '2024-03-02' + (i + $n * 1000) * interval '13 seconds', i % 50
  FROM generate_series(20, 29) d, generate_series(1, 100) i WHERE d % 2 = $parity;
UPDATE metrics SET v = v + 1 WHERE device IN (0, 1) AND ts < '2024-03-01 00:30';
DELETE FROM metrics WHERE device IN (2, 3) AND ts BETWEEN '2024-03-01 01:00' AND '2024-03-01 01:10';
});
	}
}

# Writes in many small transactions on both primaries, in the background.
sub start_writers
{
	my ($n) = @_;
	my @h;
	for my $shard ('a', 'b')
	{
		my $parity = $shard eq 'a' ? 0 : 1;
		my $sql = qq{DO \$\$ BEGIN FOR i IN 1..150 LOOP
  INSERT INTO metrics SELECT d, timestamptz '2024-03-05' + ($n * 1000 + i) * interval '7 seconds', i
    FROM generate_series(30, 39) d WHERE d % 2 = $parity;
  COMMIT; PERFORM pg_sleep(0.01); END LOOP; END \$\$};
		push @h, IPC::Run::start([ 'psql', '-X', '-q', '-d', $pubs{$shard}->connstr('postgres'), '-c', $sql ],
			'>', \my $out, '2>', \my $err);
	}
	return @h;
}

# The flows view's replication column of a flow.
sub replication
{
	my ($fs, $flow) = @_;
	return $fs->safe_psql('postgres', "SELECT replication FROM flownode.flows WHERE flow_name = '$flow'");
}
my $streams = qr/streams \(applied up to [0-9A-F]+\/[0-9A-F]+\)/;

my $fs = flow_server('flow_server', 'sub');
exact($fs, 'initial copy from both shards');
like(replication($fs, 'f_hour'), qr/^subscription "sub_a" $streams; subscription "sub_b" $streams$/,
	'flows.replication: both subscriptions feeding the chain stream, with the position applied');

write_both(1);
exact($fs, 'writes on both primaries');

# the caller's positions: the primaries' insert positions taken after the commits
write_both(2);
my %lsn = map { $_ => $pubs{$_}->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()') } 'a', 'b';
$fs->safe_psql('postgres',
	qq{SELECT flownode.wait_for_publishers('$_', positions => '{"sub_a": "$lsn{a}", "sub_b": "$lsn{b}"}')})
  for 'f_hour', 'f_dev';
check_exact($fs, 'positions passed by the caller');

my ($rc, $out, $err) = $fs->psql('postgres', q{SELECT flownode.wait_for_publishers('f_dev', positions => '{"nope": "0/1"}')});
like($err, qr/subscription "nope" in positions does not feed flow "f_dev"/, 'a position for another subscription is refused');

# a point the publisher has not reached: the timeout, saying how far it got
($rc, $out, $err) = $fs->psql('postgres',
	q{SELECT flownode.wait_for_publishers('f_dev', timeout => '1 s', positions => '{"sub_b": "FF/0"}')});
like($err, qr/subscription "sub_b" feeding flow "f_dev" did not apply its publisher's changes up to FF\/0 in time/,
	'the timeout names the subscription and its point');
like($err, qr/It has applied and committed the changes up to [0-9A-F]+\/[0-9A-F]+\./, 'and says how far it got');

# EXECUTE is not PUBLIC's (the call connects with the subscriptions' credentials);
# granted, the caller must still own the flow
$fs->safe_psql('postgres', 'CREATE ROLE app');
($rc, $out, $err) = $fs->psql('postgres', q{SET ROLE app; SELECT flownode.wait_for_publishers('f_dev')});
like($err, qr/permission denied for function wait_for_publishers/, 'not executable by PUBLIC');
$fs->safe_psql('postgres', 'GRANT EXECUTE ON FUNCTION flownode.wait_for_publishers TO app');
($rc, $out, $err) = $fs->psql('postgres', q{SET ROLE app; SELECT flownode.wait_for_publishers('f_dev')});
like($err, qr/must be owner of flow "f_dev"/, 'granted: the caller must own the flow');

$fs->safe_psql('postgres', q{CREATE TABLE local_t (ts timestamptz NOT NULL, v int);
SELECT flownode.create_flow('f_local', 'sink_local', 'SELECT date_trunc(''hour'', ts) AS h, count(*) AS n FROM local_t GROUP BY 1')});
($rc, $out, $err) = $fs->psql('postgres', q{SELECT flownode.wait_for_publishers('f_local')});
like($err, qr/no subscription feeds flow "f_local"/, 'a flow on a table no subscription fills is refused');
is($fs->safe_psql('postgres', q{SELECT replication IS NULL FROM flownode.flows WHERE flow_name = 'f_local'}),
	't', 'flows.replication is NULL for a flow no subscription feeds');

# the flow server restarts, then crashes, while both primaries write
my @w = start_writers(1);
sleep 1;
$fs->restart;
$_->finish for @w;
exact($fs, 'flow server restarted during writes');

@w = start_writers(2);
sleep 1;
$fs->stop('immediate');
$fs->start;
$_->finish for @w;
exact($fs, 'flow server crashed during writes');

# a publisher restarts; its subscription's worker reconnects
$pubs{b}->restart;
write_both(3);
ok(fn_poll($fs, 'postgres', q{SELECT pid IS NOT NULL FROM pg_stat_subscription WHERE subname = 'sub_b' AND relid IS NULL}),
	'the apply worker of sub_b runs again');
exact($fs, 'publisher restarted');

# a disabled subscription: the call fails at once, naming it
$fs->safe_psql('postgres', 'ALTER SUBSCRIPTION sub_a DISABLE');
write_both(4);
($rc, $out, $err) = $fs->psql('postgres', q{SELECT flownode.wait_for_publishers('f_hour', timeout => '60 s')});
like($err, qr/subscription "sub_a" feeding flow "f_hour" is disabled/, 'a disabled subscription: the call names it');
like(replication($fs, 'f_hour'), qr/^subscription "sub_a" is disabled; subscription "sub_b" streams \(applied up to /,
	'flows.replication: the disabled subscription first, the other one streaming');
$fs->safe_psql('postgres', 'ALTER SUBSCRIPTION sub_a ENABLE');
exact($fs, 'subscription enabled again');

# DDL is not replicated: a column added on a primary only stops its subscription
$pubs{a}->safe_psql('postgres', q{ALTER TABLE metrics ADD COLUMN note text;
INSERT INTO metrics VALUES (0, '2024-04-01', 5, 'new')});
($rc, $out, $err) = $fs->psql('postgres', q{SELECT flownode.wait_for_publishers('f_dev', timeout => '60 s')});
like($err, qr/subscription "sub_a" feeding flow "f_dev" is failing/, 'a column missing here: the call says the subscription fails');
like($err, qr/failed \d+ times? while the call waited/, 'and how often it failed');
($rc, $out, $err) = $fs->psql('postgres', q{SELECT flownode.wait_for_publishers('f_dev', timeout => '2 s')});
like($err, qr/subscription "sub_a" feeding flow "f_dev" (is failing|has no running apply worker|did not apply)/,
	'a short timeout fails too, naming the subscription');
# between two attempts of its apply worker (restarted every wal_retrieve_retry_interval)
ok( fn_poll(
		$fs, 'postgres', q{SELECT replication ~ '^subscription "sub_a" is failing \(\d+ failures? since its statistics were reset; the server log has the (last )?error\); subscription "sub_b" streams'
  FROM flownode.flows WHERE flow_name = 'f_dev'}),
	'flows.replication: the subscription is failing, and the log has why');
$fs->safe_psql('postgres', 'ALTER TABLE metrics ADD COLUMN note text');
exact($fs, 'the column added on the flow server too');
like(replication($fs, 'f_dev'), qr/^subscription "sub_a" streams \(applied up to [0-9A-F]+\/[0-9A-F]+; \d+ failures? since its statistics were reset\); subscription "sub_b" streams/,
	'flows.replication: the subscription streams again, its failures counted');

# a new flow server from scratch: copy_data = true, then the call at once
my $fs2 = flow_server('flow_server_2', 'sub2', 'ALTER TABLE metrics ADD COLUMN note text');
exact($fs2, 'a new flow server caught up');
write_both(5);
exact($fs2, 'the new flow server follows');
exact($fs, 'the first flow server follows');

$_->stop for $fs, $fs2, values %pubs;
done_testing();
