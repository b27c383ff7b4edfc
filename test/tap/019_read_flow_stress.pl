# Invariant 9 (docs/internals.md §2) under a sustained write load: read_flow equals
# the flow's query at random moments while writers insert (late rows included),
# move and delete rows in random windows and the workers refresh every 100 ms.
# Three flows on one table: per minute and host, per hour with HAVING (it nests in
# the first: one group of marks), and a window-less one. Each check compares
# read_flow with the query in one snapshot: in one statement (READ COMMITTED), or in
# a REPEATABLE READ transaction whose snapshot is older than refreshes committed
# while it waited, or in a bounded read ("from", "to").
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);
use FlownodeTAP;

my $seconds = 25;
my $node = fn_node('stress');
my %query = (
	s_1m =>
	  q{SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS minute, host, sum(v) AS total, count(*) AS n, max(v) AS top FROM s GROUP BY 1, 2},
	s_1h =>
	  q{SELECT date_trunc('hour', ts) AS hour, count(*) AS n FROM s GROUP BY 1 HAVING count(*) > 335},
	s_hosts => q{SELECT host, count(*) AS n, sum(v) AS total FROM s GROUP BY 1},);
my %eval = (s_1m => '100ms', s_1h => '300ms', s_hosts => '200ms');
$node->safe_psql(
	'postgres', q{
SET timezone = 'UTC';
CREATE EXTENSION flownode;
CREATE TABLE s (ts timestamptz NOT NULL, host text NOT NULL, v int NOT NULL);
CREATE INDEX ON s (ts);
INSERT INTO s SELECT timestamptz '2024-01-01' + (i * 7919 % 86400) * interval '1 second', 'h' || (i % 10), i % 100
  FROM generate_series(1, 8000) i;
});
for my $f (sort keys %query)
{
	$node->safe_psql('postgres',
		    "SET timezone = 'UTC'; SELECT flownode.create_flow('$f', '$f', "
		  . "\$q\$$query{$f}\$q\$, eval_interval => '$eval{$f}')");
	ok(fn_wait_worker($node, 'postgres', $f), "$f: worker started");
}

# rows of read_flow not in the query plus rows of the query not in read_flow, and
# whether the sink differs from the query, in one statement (one snapshot)
sub check_sql
{
	my ($f, $from, $to) = @_;    # SQL expressions of the bounds, if any
	my $q = $query{$f};
	my $read = "flownode.read_flow(NULL::$f)";
	if (defined $from)
	{
		$read = "flownode.read_flow(NULL::$f, $from, $to)";
		# the windows overlapping [from, to)
		$q =
		  "SELECT * FROM ($q) q WHERE q.minute >= date_bin('1 minute', $from, timestamptz '2000-01-01')"
		  . " AND q.minute < $to";
	}
	return "SELECT (SELECT count(*) FROM ((SELECT * FROM $read EXCEPT ALL ($q))"
	  . " UNION ALL (($q) EXCEPT ALL SELECT * FROM $read)) d)"
	  . " || ' ' || (SELECT count(*) > 0 FROM ((TABLE $f EXCEPT ALL ($query{$f})) UNION ALL (($query{$f}) EXCEPT ALL TABLE $f)) d)";
}

# writers: four clients, each transaction an insert (a quarter of them late, in
# the first half day), a move of the rows of a random 20 seconds by 37 s, a delete of
# those of a random 5 seconds; deadlocks between them are retried
my $script = "$PostgreSQL::Test::Utils::tmp_check/stress_writes.sql";
open(my $fh, '>', $script) or die;
print $fh <<'EOF';
\set s random(0, 86399)
\set late random(0, 3)
\set h random(0, 9)
\set v random(0, 99)
BEGIN;
INSERT INTO s VALUES (timestamptz '2024-01-01' + (CASE WHEN :late = 0 THEN :s / 2 ELSE :s END) * interval '1 second', 'h' || :h, :v);
UPDATE s SET ts = ts + interval '37 seconds' WHERE ts >= timestamptz '2024-01-01' + :s * interval '1 second' AND ts < timestamptz '2024-01-01' + (:s + 20) * interval '1 second';
DELETE FROM s WHERE ts >= timestamptz '2024-01-01' + ((:s * 13) % 86400) * interval '1 second' AND ts < timestamptz '2024-01-01' + ((:s * 13) % 86400 + 5) * interval '1 second';
COMMIT;
EOF
close($fh);
my ($out, $err) = ('', '');
my $writers = IPC::Run::start(
	[
		$node->installed_command('pgbench'), '-n', '-c', '4', '-j', '4',
		'-T', $seconds, '--max-tries', '1000', '-f', $script,
		'-h', $node->host, '-p', $node->port, 'postgres'
	],
	'>', \$out, '2>', \$err);

my ($checks, $bad, $lagging) = (0, 0, 0);
my $deadline = time() + $seconds - 2;
my $i = 0;
while (time() < $deadline)
{
	$i++;
	my @flows = sort keys %query;
	my $f = $flows[ $i % 3 ];
	my $mode = $i % 4;
	my $res;
	usleep(int(rand(150_000)));
	if ($mode == 1)
	{
		# an older snapshot: refreshes commit while it waits
		$res = fn_try($node, 'postgres',
			    "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 1; SELECT pg_sleep(0.3); "
			  . check_sql($f)
			  . "; COMMIT;");
		$res = (split /\n/, $res // '')[-1];
	}
	elsif ($mode == 2 && $f eq 's_1m')
	{
		# the windows overlapping a random range of up to two hours
		my $a = int(rand(1400));
		my $b = $a + 1 + int(rand(120));
		$res = fn_try(
			$node, 'postgres',
			check_sql(
				$f,
				"timestamptz '2024-01-01 00:00:30+00' + interval '$a minutes'",
				"timestamptz '2024-01-01 00:00:00+00' + interval '$b minutes'"));
	}
	else
	{
		$res = fn_try($node, 'postgres', check_sql($f));
	}
	if ($i % 7 == 0)
	{
		fn_try($node, 'postgres', "SELECT flownode.flush_flow('$f')");
	}
	next unless defined $res && $res =~ /^(\d+) (true|false)$/;
	$checks++;
	if ($1 ne '0')
	{
		$bad++;
		diag("read_flow of $f differs from its query by $1 rows (check $i, mode $mode)");
	}
	$lagging++ if $2 eq 'true';
}
$writers->finish;
like($out, qr/number of transactions actually processed: \d+/,
	'writers ran') or diag($err);
cmp_ok($checks, '>=', 12, "at least 12 checks ran ($checks)");
is($bad, 0, "read_flow equal to the query in every check ($checks checks)");
cmp_ok($lagging, '>=', $checks / 4,
	"the sink lagged the query in many of them ($lagging)");

# and the sinks converge once the writers stop
for my $f (sort keys %query)
{
	$node->safe_psql('postgres', "SELECT flownode.flush_flow('$f')");
	is(fn_sink_diff($node, 'postgres', $f, $query{$f}), '0', "$f: sink exact after a flush");
}
$node->stop;
done_testing();
