# pg_upgrade of a logical replication subscriber whose tables flows read
# (docs/internals.md §9 "pg_upgrade").
#
# flownode binds the flows pg_upgrade brought over without a recompute, and a
# statement that writes to one of their tables first binds them (its ExecutorStart
# hook). A subscription's apply worker (and its tablesync worker) write without
# ExecutorStart: on PostgreSQL 17 and later pg_upgrade keeps an enabled subscription
# enabled, so it applies what the publisher wrote at once, before the flows are
# bound, and nothing marks it. A flow over a table an enabled subscription of its
# database writes must then not be bound without a recompute: it says 'restored',
# with a WARNING, until refresh_flow recomputes it. It never says 'active' with a
# sink that differs from its query.
#
# The new cluster starts without the launcher (flownode.launcher = off), so that
# nothing binds the flows while the subscription applies the publisher's rows (on
# 15 and 16, whose pg_upgrade leaves subscriptions disabled and without their
# tables, the test enables it and refreshes its publication first, as a user
# would); then a local write binds the flows of its table (the executor hook's
# path), and a restart with the launcher binds the others (the database starter's
# path). The flows:
#   f_m    over m, which subscription s writes: 'restored' after the starter;
#   f_dim  over the local table l joined to hosts, which s writes: 'restored'
#          after the local write to l that binds it;
#   f_l    over l alone: bound by that write, active;
#   f_n    over n, whose subscription s_n is disabled across the upgrade and
#          enabled only once f_n is bound: bound without a recompute, active,
#          and the rows s_n applies afterwards are marked.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

my %flows = (
	f_m => q{SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w, host, count(*) AS n, sum(v) AS s
  FROM m GROUP BY 1, 2},
	f_dim => q{SELECT date_bin('5 minutes', l.ts, timestamptz '2000-01-01') AS w, h.region, count(*) AS n,
  sum(l.v) AS total FROM l JOIN hosts h ON h.host = l.host GROUP BY 1, 2},
	f_l => q{SELECT date_trunc('hour', ts, 'UTC') AS h, count(*) AS n, sum(v) AS s FROM l GROUP BY 1},
	f_n => q{SELECT date_trunc('hour', ts, 'UTC') AS h, count(*) AS n, max(v) AS hi FROM n GROUP BY 1},);
my @names = sort keys %flows;
my $tables = q{
CREATE TABLE m (ts timestamptz NOT NULL, host text NOT NULL, v int);
CREATE TABLE hosts (host text PRIMARY KEY, region text NOT NULL);
CREATE TABLE n (ts timestamptz NOT NULL, v int);
};

my $pub = PostgreSQL::Test::Cluster->new('publisher');
$pub->init(allows_streaming => 'logical');
$pub->start;
$pub->safe_psql('postgres', qq{
$tables
INSERT INTO m SELECT '2024-01-01'::timestamptz + g * interval '37 seconds', 'h' || g % 3, g FROM generate_series(0, 999) g;
INSERT INTO hosts VALUES ('h0', 'eu'), ('h1', 'us'), ('h2', 'eu');
INSERT INTO n SELECT '2024-01-01'::timestamptz + g * interval '1 minute', g FROM generate_series(0, 299) g;
CREATE PUBLICATION p FOR TABLE m, hosts;
CREATE PUBLICATION p_n FOR TABLE n;
});

sub subscriber
{
	my ($name, @conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf', join("\n", 'max_worker_processes = 32', @conf, ''));
	return $node;
}

sub states
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		"SELECT string_agg(format('%s:%s', flow_name, state), ' ' ORDER BY flow_name) FROM flownode.flows");
}

# Every flow that says active, flushed: its sink must equal its query.
sub active_flows_exact
{
	my ($node, $what) = @_;
	for my $f (split /\n/, $node->safe_psql('postgres',
		"SELECT flow_name FROM flownode.flows WHERE state = 'active' ORDER BY 1"))
	{
		$node->safe_psql('postgres', "SELECT flownode.flush_flow('$f')");
		is(fn_sink_diff($node, 'postgres', $f, $flows{$f}), 0, "$what: $f says active and its sink equals its query");
	}
}

my $old = subscriber('sub_old');
$old->start;
$old->safe_psql('postgres', qq{
CREATE EXTENSION flownode;
$tables
CREATE INDEX ON m (ts);
CREATE INDEX ON n (ts);
CREATE TABLE l (ts timestamptz NOT NULL, host text NOT NULL, v int);
CREATE INDEX ON l (ts);
INSERT INTO l SELECT '2024-01-01'::timestamptz + g * interval '53 seconds', 'h' || g % 3, g FROM generate_series(0, 799) g;
});
$old->safe_psql('postgres',
	"SELECT flownode.create_flow('$_', '$_', \$q\$$flows{$_}\$q\$, eval_interval => '1 hour')")
  for @names;
my $connstr = $pub->connstr . ' dbname=postgres';
$old->safe_psql('postgres', "CREATE SUBSCRIPTION s CONNECTION '$connstr' PUBLICATION p");
$old->safe_psql('postgres', "CREATE SUBSCRIPTION s_n CONNECTION '$connstr' PUBLICATION p_n");
$old->poll_query_until('postgres', q{SELECT count(*) = 3 FROM pg_subscription_rel WHERE srsubstate = 'r'})
  or die 'the initial table sync did not finish';
$pub->wait_for_catchup($_) for ('s', 's_n');
active_flows_exact($old, 'before the upgrade');
is(states($old), 'f_dim:active f_l:active f_m:active f_n:active', 'before the upgrade: every flow is active');
$old->safe_psql('postgres', 'ALTER SUBSCRIPTION s_n DISABLE');
$old->stop;

# the publisher writes on while the subscriber is down (on 17 and later the new
# cluster's subscription applies it at its start; on 15, pg_upgrade's start of the
# old cluster may apply it, marked there). Not to hosts: a dimension's change marks
# every window of l, which would hide the unmarked one below.
$pub->safe_psql('postgres', q{
INSERT INTO m SELECT '2024-01-02'::timestamptz + g * interval '41 seconds', 'h' || g % 3, g FROM generate_series(0, 199) g;
INSERT INTO n SELECT '2024-01-02'::timestamptz + g * interval '7 minutes', g FROM generate_series(0, 99) g;
});

my $new = subscriber('sub_new', 'flownode.launcher = off');
my $bindir = $new->config_data('--bindir');
my ($out, $err) = ('', '');
my $ok = IPC::Run::run(
	[ "$bindir/pg_upgrade", '--no-sync', '-d', $old->data_dir, '-D', $new->data_dir, '-b', $bindir,
		'-B', $bindir, '-s', $new->host, '-p', $old->port, '-P', $new->port ],
	'>', \$out, '2>', \$err);
ok($ok, 'pg_upgrade of the subscriber') or diag("$out\n$err");
$new->start;
my $what = 'after pg_upgrade';
if ($new->pg_version < 17)
{
	# pg_dump wrote the subscriptions disabled and without their tables
	$new->safe_psql('postgres', 'ALTER SUBSCRIPTION s ENABLE');
	$new->safe_psql('postgres', 'ALTER SUBSCRIPTION s REFRESH PUBLICATION WITH (copy_data = false)');
}
is($new->safe_psql('postgres', q{SELECT string_agg(format('%s:%s', subname, subenabled), ' ' ORDER BY subname COLLATE "C")
  FROM pg_subscription}),
	's:t s_n:f', "$what: s is enabled, s_n disabled");

# the subscription applies rows, nothing binds the flows (no launcher, no local write)
$pub->safe_psql('postgres', q{
INSERT INTO m SELECT '2024-01-03'::timestamptz + g * interval '43 seconds', 'h' || g % 3, g FROM generate_series(0, 299) g;
UPDATE hosts SET region = 'sa' WHERE host = 'h2';
});
$pub->wait_for_catchup('s');
my $day3 = q{SELECT count(*) FROM m WHERE ts >= '2024-01-03'};
is($new->safe_psql('postgres', $day3), $pub->safe_psql('postgres', $day3), "$what: s applied the publisher's rows");
is($new->safe_psql('postgres', "SELECT region FROM hosts WHERE host = 'h2'"), 'sa', "$what: and its update of hosts");
is(states($new), 'f_dim:restored f_l:restored f_m:restored f_n:restored', "$what: no flow is bound yet");

# the executor hook's path: a local write to l binds the flows that read l
my ($rc, $o, $e) = $new->psql('postgres', "INSERT INTO l VALUES ('2024-01-01 00:00:01', 'h2', 5)");
is($rc, 0, "$what: a local write to l succeeds");
like($e, qr/WARNING:  flow "f_dim" needs refresh_flow: its table public\.hosts is written by subscription "s"/,
	"$what: the write says that f_dim, whose dimension s writes, needs refresh_flow");

# the starter's path: a restart with the launcher binds the others
my $offset = -s $new->logfile;
$new->append_conf('postgresql.conf', "flownode.launcher = on\n");
$new->restart;
ok(fn_poll($new, 'postgres', "SELECT state = 'active' FROM flownode.flows WHERE flow_name = 'f_n'"),
	"$what: the starter bound f_n");
ok(fn_poll($new, 'postgres', "SELECT count(*) = 0 FROM pg_stat_activity WHERE backend_type = 'flownode db starter'"),
	"$what: the starter is done");
active_flows_exact($new, $what);
is(states($new), 'f_dim:restored f_l:active f_m:restored f_n:active',
	"$what: the flows over tables that s writes wait for refresh_flow, the others are active");
ok(fn_wait_log($new, qr/WARNING:  flow "f_m" needs refresh_flow: its table public\.m is written by subscription "s"/,
		$offset),
	"$what: the starter said why f_m is not bound");

# refresh_flow binds them and recomputes their sinks
$new->safe_psql('postgres', "SELECT flownode.refresh_flow('$_')") for ('f_dim', 'f_m');
is(states($new), 'f_dim:active f_l:active f_m:active f_n:active', "$what: refresh_flow bound them");
active_flows_exact($new, "$what, after refresh_flow");

# s_n, enabled once f_n is bound: what it applies is marked (the triggers fire in
# every replication role), as are s's rows now
$new->safe_psql('postgres', 'ALTER SUBSCRIPTION s_n ENABLE');
$new->safe_psql('postgres', 'ALTER SUBSCRIPTION s_n REFRESH PUBLICATION WITH (copy_data = false)')
  if $new->pg_version < 17;
$pub->safe_psql('postgres', q{
INSERT INTO n SELECT '2024-01-04'::timestamptz + g * interval '3 minutes', g FROM generate_series(0, 99) g;
INSERT INTO m SELECT '2024-01-04'::timestamptz + g * interval '47 seconds', 'h' || g % 3, g FROM generate_series(0, 99) g;
UPDATE hosts SET region = 'eu' WHERE host = 'h0';
});
$pub->wait_for_catchup($_) for ('s', 's_n');
my $day4 = q{SELECT count(*) FROM n WHERE ts >= '2024-01-04'};
is($new->safe_psql('postgres', $day4), $pub->safe_psql('postgres', $day4), "$what: s_n applied the publisher's rows");
active_flows_exact($new, "$what, after more replicated writes");

$new->stop;
$pub->stop;
done_testing();
