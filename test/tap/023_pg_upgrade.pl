# pg_upgrade keeps every flow bound and exact, without a recompute
# (docs/internals.md §9).
#
# pg_upgrade copies the tables' files (the catalog, the durable record, every sink)
# but no internal trigger. flownode binds the flows it brought over again: the
# database's starter at the first start, or before that the first statement that
# writes to one of their tables (a COPY, a TRUNCATE, an INSERT), never leaving a
# write unmarked. Checked over one chain of upgrades, from each install path in
# FLOWNODE_UPGRADE_FROM (oldest first; run_all.sh sets "/usr/lib/postgresql/15
# /usr/lib/postgresql/17" in the PostgreSQL 18 chroot) to the next and on to the
# running version; without it, two upgrades from the running version to itself.
# The flows: a plain source with windows pending at the upgrade (one flow paused,
# one waiting for its next run), a partitioned source, a dimension join and a
# chain. After each upgrade:
#   - every flow says active with marking enabled, and its pending windows are
#     still pending;
#   - the sinks' rows in the windows that were exact are the same tuples (same
#     ctid and xmin: nothing recomputed them);
#   - after a flush, every sink equals its query, the writes made since included.
# Then the first cluster is dumped by each later version's pg_dump and restored
# into it: the restore binds every flow, and the sinks equal their queries.
# The first hop starts with the launcher off, so that writers bind: a COPY binds
# the flows of its table and no other; a writer that finds the source locked by
# another transaction fails with 55P03 and succeeds once retried.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

my @from = grep { length } split /\s+/, ($ENV{FLOWNODE_UPGRADE_FROM} // '');
my @hops = (@from, undef);    # undef: the running version
@hops = (undef, undef, undef) unless @from;

my %query = (
	cpu_1m => q{SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, host,
  avg(usage) AS avg_usage, count(*) AS n FROM cpu GROUP BY 1, 2},
	cpu_paused => q{SELECT date_trunc('hour', ts, 'UTC') AS hour, max(usage) AS hi, count(*) AS n
  FROM cpu GROUP BY 1},
	m_1h => q{SELECT date_trunc('hour', ts, 'UTC') AS hour, dev, sum(v) AS total FROM m GROUP BY 1, 2},
	region_5m => q{SELECT date_bin('5 minutes', c.ts, timestamptz '2000-01-01') AS w, h.region,
  count(*) AS n, sum(c.usage) AS total FROM cpu c JOIN hosts h ON h.host = c.host GROUP BY 1, 2},
	cpu_1h => q{SELECT date_trunc('hour', minute, 'UTC') AS hour, sum(n) AS n FROM cpu_1m GROUP BY 1},
);
my @flows = ('cpu_1m', 'cpu_paused', 'm_1h', 'region_5m', 'cpu_1h');    # the chain's last

sub node_for
{
	my ($name, $install) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name, defined $install ? (install_path => $install) : ());
	# 18's initdb turns data checksums on, 15's and 17's leave them off, and
	# pg_upgrade needs the same setting on both sides
	$node->init($node->pg_version >= 18 && @from ? (no_data_checksums => 1) : ());
	$node->append_conf('postgresql.conf', "restart_after_crash = on\nmax_worker_processes = 32\n");
	return $node;
}

sub version_of
{
	my ($node) = @_;
	return $node->safe_psql('app', 'SHOW server_version_num') / 10000 | 0;
}

sub check_exact
{
	my ($node, $what) = @_;
	$node->safe_psql('app', 'SELECT flownode.resume_flow(flow_name) FROM flownode.flows WHERE state = \'paused\'');
	$node->safe_psql('app', "SELECT flownode.flush_flow('$_')") for @flows;
	for my $f (@flows)
	{
		is(fn_sink_diff($node, 'app', $f, $query{$f}), 0, "$what: the sink of $f equals its query");
	}
}

# The sinks' rows of the first day, whose windows are exact before each upgrade:
# their tuples, which a recompute would replace.
sub clean_tuples
{
	my ($node) = @_;
	return $node->safe_psql('app', q{SELECT
  (SELECT string_agg(ctid::text || xmin::text, ',' ORDER BY ctid) FROM cpu_1m WHERE minute < '2024-01-02'),
  (SELECT string_agg(ctid::text || xmin::text, ',' ORDER BY ctid) FROM m_1h WHERE hour < '2024-01-02'),
  (SELECT string_agg(ctid::text || xmin::text, ',' ORDER BY ctid) FROM region_5m WHERE w < '2024-01-02')});
}

sub states
{
	my ($node) = @_;
	return $node->safe_psql('app',
		"SELECT string_agg(format('%s:%s:%s', flow_name, state, marking_enabled), ' ' ORDER BY flow_name) FROM flownode.flows");
}

# Debian's 15.20 and 17.12 give every column they create a column option
# pg_attver that sid's 18.6 does not know: pg_upgrade to it fails for any table
# (flownode or not) in its pg_restore, "unrecognized parameter". Removed from the
# user's columns of the old cluster first.
sub strip_attver
{
	my ($old) = @_;
	for my $db (split /\n/, $old->safe_psql('postgres', 'SELECT datname FROM pg_database WHERE datallowconn'))
	{
		$old->safe_psql($db, q{UPDATE pg_attribute SET attoptions = NULLIF(ARRAY(
  SELECT o FROM unnest(attoptions) o WHERE o NOT LIKE 'pg_attver=%'), '{}')
  WHERE attrelid >= 16384 AND attoptions::text LIKE '%pg_attver=%'});
	}
}

# The first cluster: the flows, exact on their first day, then writes on a second
# day that stay pending across the upgrade.
my $node = node_for('hop0', $hops[0]);
my @nodes = ($node);
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql('app', q{
CREATE EXTENSION flownode;
CREATE TABLE cpu (ts timestamptz NOT NULL, host text NOT NULL, usage float8);
CREATE INDEX ON cpu (ts);
CREATE TABLE hosts (host text PRIMARY KEY, region text NOT NULL);
INSERT INTO hosts VALUES ('h0', 'eu'), ('h1', 'us'), ('h2', 'eu');
CREATE TABLE m (ts timestamptz NOT NULL, dev int NOT NULL, v int) PARTITION BY RANGE (ts);
CREATE TABLE m_a PARTITION OF m FOR VALUES FROM ('2024-01-01') TO ('2024-01-02');
CREATE TABLE m_b PARTITION OF m FOR VALUES FROM ('2024-01-02') TO ('2024-02-01');
CREATE INDEX ON m (ts);
INSERT INTO cpu SELECT '2024-01-01'::timestamptz + g * interval '37 seconds', 'h' || g % 3, g % 100
  FROM generate_series(0, 999) g;
INSERT INTO m SELECT '2024-01-01'::timestamptz + g * interval '3 minutes', g % 4, g FROM generate_series(0, 399) g;
});
for my $f ('cpu_1m', 'cpu_paused', 'm_1h', 'region_5m', 'cpu_1h')
{
	my ($sink) = $f;
	$node->safe_psql('app', "SELECT flownode.create_flow('$f', '$sink', \$q\$$query{$f}\$q\$, eval_interval => '1 hour')");
}
check_exact($node, 'before the upgrades');

for my $hop (1 .. $#hops)
{
	my $v = version_of($node);
	# writes of the second day, pending at the upgrade: cpu_paused is paused, the
	# others wait for their next run, an hour away
	$node->safe_psql('app', 'SELECT flownode.pause_flow(\'cpu_paused\')');
	$node->safe_psql('app', qq{
INSERT INTO cpu SELECT '2024-01-02'::timestamptz + g * interval '41 seconds' + interval '$hop hours', 'h' || g % 3, g + $hop
  FROM generate_series(0, 199) g;
INSERT INTO m SELECT '2024-01-02'::timestamptz + g * interval '7 minutes' + interval '$hop hours', g % 4, g * $hop
  FROM generate_series(0, 99) g;
UPDATE hosts SET region = CASE region WHEN 'eu' THEN 'us' ELSE 'eu' END WHERE host = 'h1';
});
	my $pending = $node->safe_psql('app',
		"SELECT string_agg(format('%s:%s', flow_name, dirty_windows > 0), ' ' ORDER BY flow_name) FROM flownode.flows");
	my $tuples = clean_tuples($node);

	my $new = node_for("hop$hop", $hops[$hop]);
	strip_attver($node) if $new->pg_version >= 18 && $node->pg_version < 18;
	# the first hop starts without the launcher: writers bind the flows
	$new->append_conf('postgresql.conf', "flownode.launcher = off\n") if $hop == 1;
	$node->stop;
	my @cmd = (
		$new->config_data('--bindir') . '/pg_upgrade', '--no-sync', '-d', $node->data_dir, '-D', $new->data_dir,
		'-b', $node->config_data('--bindir'), '-B', $new->config_data('--bindir'),
		'-s', $new->host, '-p', $node->port, '-P', $new->port);
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run(\@cmd, '>', \$out, '2>', \$err);
	ok($ok, "pg_upgrade from $v to the next version") or diag("$out\n$err");
	$new->start;
	$node = $new;
	push @nodes, $new;
	my $nv = version_of($node);
	my $what = "after pg_upgrade $v -> $nv";

	if ($hop == 1)
	{
		like(states($node), qr/^cpu_1h:restored:f cpu_1m:restored:f cpu_paused:restored:f m_1h:restored:f region_5m:restored:f$/,
			"$what, before any write: no flow is bound (no launcher)");
		# a writer that finds the source held by another transaction does not wait
		# for its binding (it holds its own table): it fails with 55P03, to be retried
		my $holder = $node->background_psql('app');
		$holder->query_safe('BEGIN; LOCK TABLE m_b IN ROW EXCLUSIVE MODE;');
		my ($rc, $o, $e) = $node->psql('app', "INSERT INTO m VALUES ('2024-01-03 00:30', 1, 7)");
		like($e, qr/could not bind flow "m_1h" before this write to table "m"/,
			"$what: a write to a source another transaction holds fails until the flow is bound");
		$holder->query_safe('COMMIT');
		$holder->quit;
		$node->safe_psql('app', "INSERT INTO m VALUES ('2024-01-03 00:30', 1, 7)");
		like(states($node), qr/m_1h:active:t/, "$what: the retried write bound the flow of its table");
		like(states($node), qr/cpu_1m:restored:f/, "$what: and no other");
		# a COPY binds the flows of its table: those over cpu, the join's too
		$node->safe_psql('app', "COPY cpu FROM STDIN;\n2024-01-03 00:00:05+00\th0\t5\n\\.\n");
		is(states($node), 'cpu_1h:restored:f cpu_1m:active:t cpu_paused:paused:t m_1h:active:t region_5m:active:t',
			"$what: a COPY bound the flows of its table");
		# the dimension: a write to hosts binds nothing new, marks the join's windows
		$node->safe_psql('app', "UPDATE hosts SET region = 'ap' WHERE host = 'h2'");
	}
	else
	{
		ok(fn_poll($node, 'app',
			"SELECT bool_and(state IN ('active', 'paused') AND marking_enabled) FROM flownode.flows"),
			"$what: the starter bound every flow");
		$node->safe_psql('app', "INSERT INTO cpu VALUES ('2024-01-03 00:00:07', 'h1', 3)");
	}
	my $now = $node->safe_psql('app',
		"SELECT string_agg(format('%s:%s', flow_name, dirty_windows > 0), ' ' ORDER BY flow_name) FROM flownode.flows");
	my @lost = grep { my $f = $_; $now !~ /\b\Q$f\E:t/ } map { /^(\w+):t$/ ? $1 : () } split / /, $pending;
	is("@lost", '', "$what: the windows pending at the upgrade are still pending ($pending)");
	is(clean_tuples($node), $tuples, "$what: the rows of the exact windows were not recomputed");
	if ($hop == 1)
	{
		# the chain's source is a sink: the refresh that writes it binds cpu_1h
		$node->safe_psql('app', "SELECT flownode.flush_flow('cpu_1m')");
		like(states($node), qr/cpu_1h:active:t/, "$what: the refresh that wrote the chain's source bound it");
	}
	is($node->safe_psql('app', "SELECT count(*) FROM flownode.flows WHERE state = 'paused'"), '1',
		"$what: the paused flow is still paused");
	check_exact($node, $what);
	# and the flows mark on: every kind of write, then a flush
	$node->safe_psql('app', q{
DELETE FROM cpu WHERE ts BETWEEN '2024-01-01 01:00' AND '2024-01-01 01:10';
UPDATE m SET v = v + 1 WHERE dev = 2 AND ts < '2024-01-01 03:00';
INSERT INTO m VALUES ('2024-01-05 10:00', 9, 9);
UPDATE hosts SET region = 'sa' WHERE host = 'h0';
TRUNCATE m_a;
});
	check_exact($node, "$what, after more writes");
	$node->safe_psql('app', 'SELECT flownode.pause_flow(\'cpu_paused\')') if $hop < $#hops;
	$node->safe_psql('app', 'SELECT flownode.resume_flow(\'cpu_paused\')') if $hop == $#hops;
}
$node->stop;

# pg_dump of the first cluster (pg_upgrade's copy mode left it as it was) with each
# later version's pg_dump, restored into that version: a whole restore binds every
# flow, and after a flush every sink equals its query.
$nodes[0]->start;
for my $n (@nodes[ 1 .. $#nodes ])
{
	$n->start;
	my $bin = $n->config_data('--bindir');
	my $file = $n->basedir . '/app.dump';
	my $what = 'pg_dump of ' . version_of($nodes[0]) . ' restored into ' . version_of($n);
	strip_attver($nodes[0]) if $n->pg_version >= 18 && $nodes[0]->pg_version < 18;    # pg_dump writes it
	command_ok([ "$bin/pg_dump", '-Fc', '-h', $nodes[0]->host, '-p', $nodes[0]->port, '-f', $file, 'app' ],
		"$what: pg_dump");
	$n->safe_psql('postgres', 'CREATE DATABASE restored');
	command_ok([ "$bin/pg_restore", '-h', $n->host, '-p', $n->port, '-d', 'restored', $file ],
		"$what: pg_restore");
	is($n->safe_psql('restored', "SELECT string_agg(DISTINCT state, ',') FROM flownode.flows WHERE flow_name <> 'cpu_paused'"),
		'active', "$what: the restore bound every flow");
	$n->safe_psql('restored', 'SELECT flownode.resume_flow(\'cpu_paused\')');
	$n->safe_psql('restored', "INSERT INTO cpu VALUES ('2024-01-04 00:00:09', 'h2', 4)");
	$n->safe_psql('restored', "SELECT flownode.flush_flow('$_')") for @flows;
	is(fn_sink_diff($n, 'restored', $_, $query{$_}), 0, "$what: the sink of $_ equals its query") for @flows;
	$n->stop;
}
$nodes[0]->stop;

# A flow that cannot be bound in the new cluster (here: flownode.max_flows is lower
# there) says so, and the first write to its source unbinds it for good (the write
# is not marked for it): it says 'restored' until refresh_flow recomputes it.
my $small = node_for('small_old', undef);    # initialised as small_new below
$small->start;
$small->safe_psql('postgres', q{
CREATE EXTENSION flownode;
CREATE TABLE t (ts timestamptz NOT NULL, v int);
INSERT INTO t SELECT '2024-01-01'::timestamptz + g * interval '1 minute', g FROM generate_series(1, 300) g;
});
my %tq = (t_a => q{SELECT date_trunc('hour', ts, 'UTC') AS h, sum(v) AS s FROM t GROUP BY 1},
	t_b => q{SELECT date_trunc('day', ts, 'UTC') AS d, count(*) AS n FROM t GROUP BY 1});
$small->safe_psql('postgres', "SELECT flownode.create_flow('$_', '$_', \$q\$$tq{$_}\$q\$)") for sort keys %tq;
my $one = node_for('small_new', undef);
$one->append_conf('postgresql.conf', "flownode.max_flows = 1
");
$small->stop;
my $bindir = $one->config_data('--bindir');
command_ok([ "$bindir/pg_upgrade", '--no-sync', '-d', $small->data_dir, '-D', $one->data_dir,
		'-b', $bindir, '-B', $bindir, '-s', $one->host, '-p', $small->port, '-P', $one->port ],
	'pg_upgrade into a cluster with one flownode slot');
$one->start;
ok(fn_poll($one, 'postgres', "SELECT count(*) FILTER (WHERE state = 'active') = 1 FROM flownode.flows"),
	'one flow of the two is bound: the other has no slot');
ok(fn_wait_log($one, qr/flow "t_b" is not bound after pg_upgrade yet: too many flows/, 0),
	'the starter said why the other is not bound');
my ($rc, $o, $e) = $one->psql('postgres', "INSERT INTO t VALUES ('2024-01-02 00:00', 1)");
like($e, qr/WARNING:  flow "t_b" does not mark this write to table "t"/,
	'the first write says that the flow that could not be bound does not mark it');
is($one->safe_psql('postgres', "SELECT string_agg(state, ',' ORDER BY flow_name) FROM flownode.flows"),
	'active,restored', 'that flow says restored');
$one->append_conf('postgresql.conf', "flownode.max_flows = 4
");
$one->restart;
is($one->safe_psql('postgres', "SELECT string_agg(state, ',' ORDER BY flow_name) FROM flownode.flows"),
	'active,restored', 'after a restart it still waits for refresh_flow (a write went unmarked)');
$one->safe_psql('postgres', "SELECT flownode.refresh_flow('t_b')");
$one->safe_psql('postgres', "SELECT flownode.flush_flow('$_')") for sort keys %tq;
is(fn_sink_diff($one, 'postgres', $_, $tq{$_}), 0, "$_: the sink equals its query after refresh_flow")
  for sort keys %tq;
$one->stop;
done_testing();
