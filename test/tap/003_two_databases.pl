# Flows in several databases all come back after a restart (clean and crash),
# each with its pending work, and each sink ends exactly equal to its query.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

my $node = fn_node('two_databases');
my %query = (
	db_a => q{SELECT date_bin('30 seconds', ts, timestamptz '2000-01-01') AS w,
  count(*) AS n, sum(v) AS s FROM src GROUP BY 1},
	db_b => q{SELECT date_trunc('hour', ts) AS w, g, count(*) AS n, max(v) AS hi
  FROM src GROUP BY 1, 2});
my @dbs = sort keys %query;

for my $db (@dbs)
{
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, qq{
CREATE EXTENSION flownode;
CREATE TABLE src (ts timestamptz NOT NULL, g text, v int NOT NULL);
CREATE INDEX ON src (ts);
INSERT INTO src SELECT timestamptz '2024-05-01' + i * interval '97 seconds',
  CASE WHEN i % 4 = 0 THEN NULL ELSE 'g' || (i % 3) END, i FROM generate_series(1, 400) i;
SELECT flownode.create_flow('flow_$db', 'sink_$db', \$q\$$query{$db}\$q\$,
  eval_interval => '1 hour');
});
	ok(fn_wait_worker($node, $db, "flow_$db"), "$db: flow worker runs");
}

# Committed, unflushed changes in every database.
sub write_changes
{
	my ($r) = @_;
	for my $db (@dbs)
	{
		$node->safe_psql($db, qq{
INSERT INTO src SELECT timestamptz '2024-05-01' + i * interval '41 seconds', 'r$r', $r * 1000 + i
  FROM generate_series(1, 200) i;
UPDATE src SET ts = ts + interval '2 hours', g = NULL WHERE v % 10 = $r;
DELETE FROM src WHERE v % 23 = $r;
});
		ok(fn_flow_field($node, $db, "flow_$db", 'dirty_windows') > 0,
			"$db: round $r changes are pending");
	}
}

sub check_all
{
	my ($scenario) = @_;
	for my $db (@dbs)
	{
		ok(fn_wait_worker($node, $db, "flow_$db"),
			"$scenario: $db: flow worker is running again");
		ok(fn_poll($node, $db,
			"SELECT dirty_windows > 0 FROM flownode.flows WHERE flow_name = 'flow_$db'", 't', 30),
			"$scenario: $db: pending windows reloaded");
	}
	is($node->safe_psql('postgres',
		"SELECT string_agg(datname || ':' || application_name, ',' ORDER BY datname) "
		  . "FROM pg_stat_activity WHERE backend_type = 'flownode flow'"),
		join(',', map { "$_:flow_$_" } @dbs),
		"$scenario: exactly one worker per flow, in its database");
	for my $db (@dbs)
	{
		my ($rc, $out, $err) = $node->psql($db, "SELECT flownode.flush_flow('flow_$db')");
		is($rc, 0, "$scenario: $db: flush_flow succeeds") or diag($err);
		is(fn_sink_diff($node, $db, "sink_$db", $query{$db}), '0',
			"$scenario: $db: sink equals its query");
	}
}

write_changes(1);
$node->restart(mode => 'fast');
check_all('fast restart');

write_changes(2);
$node->stop('immediate');
$node->start;
check_all('crash restart');

$node->stop;

# A dropped database's flows free their slots with the drop: a server that drops and
# creates databases with flows in quick succession does not run out of slots (they
# were freed only when the launcher next looked, after the drop's 30 s hold).
my $small = fn_node('few_slots', 'flownode.max_flows = 4');
for my $round (1 .. 3)
{
	my $db = "churn_$round";
	$small->safe_psql('postgres', "CREATE DATABASE $db");
	$small->safe_psql($db, q{
CREATE EXTENSION flownode;
CREATE TABLE t (ts timestamptz NOT NULL, v int);
INSERT INTO t VALUES ('2024-01-01 00:05', 1);
});
	my ($rc, $out, $err) = $small->psql($db, join(";\n",
		map { "SELECT flownode.create_flow('f$_', 's$_', "
			  . "\$q\$SELECT date_trunc('hour', ts) AS h, count(*) AS n FROM t GROUP BY 1\$q\$, "
			  . "eval_interval => '1 hour')" } 1 .. 3));
	is($rc, 0, "round $round: three flows in a new database, 4 slots in all") or diag($err);
	$small->safe_psql('postgres', "DROP DATABASE $db");
}
$small->stop;
done_testing();
