# The flows' dirty sets take shared memory by what they hold, not by the cap:
# a slot holds 16 ranges of each set, larger sets grow into a pool
# of flownode.dirty_ranges_memory (at most 64 MB by default), doubling up to
# flownode.dirty_ranges_per_flow. So max_flows = 10,000 takes tens of megabytes,
# where a slot used to reserve both sets at the cap (10,000 x 4,096 x 32 bytes,
# 1.3 GB). And a set that grows past its start (also when a crash or a killed
# worker makes shared memory anew), past its cap, or past what the pool has
# left, keeps every mark: the sink ends exact; an emptied set frees its memory.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

my $query = q{SELECT date_bin('1 minute', ts, timestamptz '2000-01-01') AS w,
  count(*) AS n, sum(v) AS s FROM src_%s GROUP BY 1};

# A paused flow over its own source, $windows windows dirty in 3 commits: every
# other minute, so no two windows touch and each is a range of its own.
sub dirty_many
{
	my ($node, $name, $windows) = @_;
	my $q = sprintf($query, $name);
	$node->safe_psql('postgres', qq{
CREATE TABLE src_$name (ts timestamptz NOT NULL, v int NOT NULL);
SELECT flownode.create_flow('$name', 'snk_$name', \$q\$$q\$q\$, eval_interval => '1 hour');
SELECT flownode.pause_flow('$name');
});
	my $per = int($windows / 3);
	for my $k (0 .. 2)
	{
		$node->safe_psql('postgres',
			"INSERT INTO src_$name SELECT timestamptz '2024-03-01' + (2 * i) * interval '1 minute', i"
			  . " FROM generate_series($k * $per, ($k + 1) * $per - 1) i");
	}
	return $q;
}

# Resumed and flushed: the sink equals its query and the record is empty.
sub flushed_exact
{
	my ($node, $name, $q, $what) = @_;
	$node->safe_psql('postgres', "SELECT flownode.resume_flow('$name')");
	my ($rc, $out, $err) =
	  $node->psql('postgres', "SELECT flownode.flush_flow('$name')");
	is($rc, 0, "$what: flush_flow succeeds") or diag($err);
	is(fn_sink_diff($node, 'postgres', "snk_$name", $q), '0', "$what: sink exact");
	is(dirty_ranges($node, $name), '0',
		"$what: nothing left dirty");
}

# The ranges of the flow's dirty set in shared memory (flownode.flow_info).
sub dirty_ranges
{
	my ($node, $name) = @_;
	return $node->safe_psql('postgres',
		"SELECT dirty_ranges FROM flownode.flow_info WHERE flow_name = '$name'");
}

sub shmem_size
{
	my ($node, $name) = @_;
	return $node->safe_psql('postgres',
		"SELECT coalesce(sum(size), 0) FROM pg_shmem_allocations WHERE name = '$name'");
}

# 10,000 slots. A slot is its header: the worker's state, three 512-byte error
# messages and the two sets' first 16 ranges (16 bytes each): about 2.5 KiB, so
# 3 KiB bounds it with room for new fields. The pool is 64 MB at most by default.
my $node = fn_node('big', 'flownode.max_flows = 10000');
my $slots = shmem_size($node, 'flownode slots');
my $pool = shmem_size($node, 'flownode dirty sets');
cmp_ok($slots, '<', 10000 * 3 * 1024, "10,000 slots take $slots bytes: under 3 KiB each");
cmp_ok($slots, '>', 10000 * 544, 'each slot holds the first 16 ranges of its two sets');
cmp_ok($pool, '<=', 64 * 1024 * 1024, "the pool the sets grow into is $pool bytes: at most 64 MB");
cmp_ok($slots + $pool, '<', 10000 * 4096 * 32 / 10,
	'a tenth of what reserving every set at the cap took');

# past the 16 ranges a set starts with: 3,000 ranges, none coalesced
$node->safe_psql('postgres', 'CREATE EXTENSION flownode');
my $q = dirty_many($node, 'grows', 3000);
is(dirty_ranges($node, 'grows'), '3000',
	'the dirty set grew to 3,000 ranges, none coalesced');
# a crash loses the pool with shared memory: the record fills the sets again,
# growing them as the worker loads it
my $pid = fn_wait_worker($node, 'postgres', 'grows');
$node->stop('immediate');
$node->start;
ok(fn_wait_worker($node, 'postgres', 'grows', $pid), 'the worker is back after a crash');
ok(fn_poll($node, 'postgres',
		"SELECT dirty_ranges FROM flownode.flow_info WHERE flow_name = 'grows'", '3000'),
	'the record brought back all 3,000 ranges');
# a killed worker: the postmaster makes shared memory anew, and the pool in it
$pid = fn_worker_pid($node, 'postgres', 'grows');
my $offset = -s $node->logfile;
ok(kill('KILL', $pid), 'SIGKILL sent to the flow worker');
ok(fn_wait_reinit($node, $offset), 'shared memory made anew');
ok(fn_wait_worker($node, 'postgres', 'grows', $pid), 'the worker is back');
ok(fn_poll($node, 'postgres',
		"SELECT dirty_ranges FROM flownode.flow_info WHERE flow_name = 'grows'", '3000'),
	'the record filled the new pool with all 3,000 ranges');
flushed_exact($node, 'grows', $q, 'grown set');
$node->stop;

# past the cap: a set of at most 8 ranges coalesces 600 windows
my $capped = fn_node('capped', 'flownode.dirty_ranges_per_flow = 8');
$capped->safe_psql('postgres', 'CREATE EXTENSION flownode');
$q = dirty_many($capped, 'capped', 600);
cmp_ok(dirty_ranges($capped, 'capped'), '<=', 8,
	'the set stays within flownode.dirty_ranges_per_flow');
flushed_exact($capped, 'capped', $q, 'set at its cap');
$capped->stop;

# past the pool: two flows of 3,000 ranges cannot both grow in 128 kB (each set
# at 4,096 ranges takes 64 kB); the one that cannot coalesces, and stays exact
my $small = fn_node('small', 'flownode.dirty_ranges_memory = 128kB');
$small->safe_psql('postgres', 'CREATE EXTENSION flownode');
my $qa = dirty_many($small, 'a', 3000);
my $qb = dirty_many($small, 'b', 3000);
my $held = $small->safe_psql('postgres',
	"SELECT sum(dirty_ranges) FROM flownode.flow_info WHERE flow_name IN ('a', 'b')");
cmp_ok($held, '<', 6000, "the pool could not hold both sets ($held ranges): they coalesced");
my $first = dirty_ranges($small, 'a'); # what a set reaches in the empty pool
flushed_exact($small, 'a', $qa, 'first flow, pool used up');
flushed_exact($small, 'b', $qb, 'second flow, pool used up');
# emptied by their flushes, both sets gave the pool its memory back
my $qc = dirty_many($small, 'c', 3000);
cmp_ok(dirty_ranges($small, 'c'), '>=', $first,
	"a third flow grows as far as the first did ($first ranges): the others gave their memory back");
flushed_exact($small, 'c', $qc, 'third flow');
$small->stop;

done_testing();
