# flownode's randomized differential oracle. From a seed it
# generates cases: a schema, 1-3 flows and a workload of writes, operations and
# checkpoints (Oracle::Gen), runs each on one PostgreSQL node in a database of
# its own (Oracle::Exec; a case with a standby promotion goes on on the
# promoted node, then the main node takes over again) and checks that every
# flow's sink and read_flow equal its query (Oracle::Check). A failing case is
# shrunk (Oracle::Shrink) and written as a runnable SQL script. Output is TAP: one test per case,
#   ok 3 - seed 123456
#   not ok 4 - seed 789 - read_flow f1
#
#   oracle.pl [--seed N] [--minutes M] [--cases K] [--skip FEATURE,...]
#             [--found DIR] [--shrink-seconds S] [--settings-seed R] [--verbose]
#
# Run it as run_all.sh's suite "oracle" does (as postgres, PATH with the
# server's bindir, -I <pgxs>/src/test/perl, TEMP_CONFIG=test/flownode.conf).
# Reproduce a case with --seed S --cases 1: a case depends on its seed only, and
# the server's settings on the run's seed (--settings-seed R when the case was not
# the run's first: its failure says so).
use strict;
use warnings;
use FindBin;
use lib $FindBin::Bin;
use Getopt::Long;
use File::Find;
use File::Path qw(make_path);
use Time::HiRes qw(time);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Oracle::Rng;
use Oracle::Gen;
use Oracle::Exec;
use Oracle::Shrink;

my %o = (minutes => 4, skip => '', found => "$FindBin::Bin/found", 'shrink-seconds' => 240);
GetOptions(\%o, 'seed=i', 'minutes=f', 'cases=i', 'skip=s', 'found=s',
	'shrink-seconds=i', 'settings-seed=i', 'verbose')
  or die "usage: oracle.pl [--seed N] [--minutes M] [--cases K] [--skip F,...]\n";

# A fresh seed unless one is given; the only value taken from the clock.
my $seed = $o{seed} // ((int(time() * 1000) ^ ($$ << 16)) & 0x7FFFFFFF);
my %skip = map { $_ => 1 } grep { length } split /,/, $o{skip};
my $deadline = time() + $o{minutes} * 60;
my $settings_seed = $o{'settings-seed'} // $seed;
my $settings = Oracle::Gen::server_settings($settings_seed);
diag "oracle: seed $seed, --minutes $o{minutes}"
  . ($o{cases} ? ", --cases $o{cases}" : '')
  . (%skip ? ", --skip " . join(',', sort keys %skip) : '')
  . ($settings ? ', ' . settings_note() : '') . "\n";

my $node = start_node();
my %opt = (skip => \%skip, ext => available_extensions($node));
my $src_files = flownode_source_files();
my $tmp = PostgreSQL::Test::Utils::tempdir;
my $master = Oracle::Rng->new($seed);

my $n = 0;
while (time() < $deadline && (!$o{cases} || $n < $o{cases}))
{
	$n++;
	my $case_seed = $n == 1 ? $seed : $master->next & 0x7FFFFFFF;
	run_case($n, $case_seed);
}
$node->stop;
done_testing();

# The run's server settings (Oracle::Gen::server_settings), in one line.
sub settings_note
{
	return "server settings (of seed $settings_seed): " . join('; ', split /\n/, $settings);
}

sub start_node
{
	my $node = PostgreSQL::Test::Cluster->new('oracle');
	$node->init;
	# LOG level: a crashed server process is logged at LOG ("terminated by signal")
	$node->append_conf('postgresql.conf',
		"max_worker_processes = 64\nlog_min_messages = log\nlog_checkpoints = off\n$settings");
	# the standby promotions take base backups and stream (init's allows_streaming
	# would also shrink shared_buffers and max_connections); wal_level stays
	# init's minimal with --skip standby
	$node->append_conf('postgresql.conf', "wal_level = replica\nmax_wal_senders = 10\n")
	  unless $skip{standby};
	$node->start;
	return $node;
}

sub available_extensions
{
	my ($node) = @_;
	my $out = $node->safe_psql('postgres',
		"SELECT string_agg(name, ' ') FROM pg_available_extensions WHERE name IN ('hll', 'tdigest')");
	return { map { $_ => 1 } split / /, $out };
}

# Basenames of flownode's source files: an ERROR whose LOCATION is one of them
# was raised by flownode.
sub flownode_source_files
{
	my %files;
	find(sub { $files{$_} = 1 if /\.(c|cc|cpp|h|hpp)$/ }, "$FindBin::Bin/../../src");
	return \%files;
}

sub executor
{
	my ($case, $db) = @_;
	return Oracle::Exec->new(node => $node, case => $case, db => $db,
		src_files => $src_files, tmp => $tmp, verbose => $o{verbose});
}

# The window function a flow's query groups by, for the case's line: which shapes
# a run exercised shows in its log.
sub window_tag
{
	my ($flow) = @_;
	my $q = $flow->{query} // '';
	return '/time_bucket_cagg' if $flow->{ts};    # created as TimescaleDB's continuous aggregate
	return '/zoned_date_bin' if $q =~ /date_bin\(.*AT TIME ZONE/;
	return '/time_bucket' if $q =~ /flownode\.time_bucket\(/;
	return '/date_bin' if $q =~ /date_bin\(/;
	return '/date_trunc' if $q =~ /date_trunc\(/;
	return '';
}

sub run_case
{
	my ($n, $case_seed) = @_;
	my $case = Oracle::Gen::case_plan($case_seed, \%opt);
	my $ex = executor($case, "oc$n");
	my $failure = $ex->run_steps($case->{steps});
	my $promotions = grep { $_->{kind} eq 'promote' } @{ $case->{steps} };
	note(sprintf('case %d: seed %d, %s, %d steps%s, flows %s, %d refusals, %s keyed',
		$n, $case_seed, describe($case), scalar @{ $case->{steps} },
		$promotions ? ", $promotions promotion" . ($promotions > 1 ? 's' : '') : '',
		join(' ', map { "$_->{name}:$_->{kind}" . window_tag($_) } @{ $case->{flows} }),
		scalar @{ $ex->{refusals} }, $ex->{keyed} // '?'));
	note("  refused: $_") for grep { /create_flow/ } @{ $ex->{refusals} };
	if (!$failure)
	{
		ok(1, "seed $case_seed");
		return;
	}
	my $title = "$failure->{kind}" . ($failure->{flow} ? " $failure->{flow}" : '');
	diag("case $n (seed $case_seed) failed at step $failure->{step} ($failure->{what}): $title\n"
		  . $failure->{detail});
	my $path = shrink_and_write($n, $case, $failure);
	# again, last: CI shows the lines just before a failing test, and the shrinking
	# printed many since
	diag("case $n (seed $case_seed): $title at step $failure->{step} ($failure->{what}):\n"
		  . ($settings ? settings_note() . "\n" : '') . $failure->{detail});
	ok(0, "seed $case_seed - $title" . ($path ? " - $path" : ''));
}

sub describe
{
	my ($case) = @_;
	my $s = $case->{src};
	return "$s->{tt}" . ($s->{part} ? ' partitioned' : '') . ($case->{dim} ? ' +dimension' : '')
	  . ", tz $case->{tz}";
}

sub shrink_and_write
{
	my ($n, $case, $failure) = @_;
	my $tries = 0;
	my $run = sub {
		my ($steps) = @_;
		my $ex = executor($case, "oc${n}_s" . ++$tries);
		my $f = $ex->run_steps($steps);
		return ($f, join('', @{ $ex->{script} }));
	};
	# the run stays bounded: a failure found late gets 30 s of shrinking at most
	my $left = $deadline - time();
	my $budget = $o{'shrink-seconds'};
	$budget = ($left > 30 ? $left : 30) if $budget > $left;
	my ($steps, $f, $script) =
	  Oracle::Shrink::shrink($run, $case->{steps}, $failure, time() + $budget);
	if (!defined $script)
	{
		diag("the failure did not come back on a re-run (timing-dependent): not shrunk");
		(undef, $script) = (undef, "-- not reproduced on a re-run; the steps of the case:\n"
			  . join('', map { "-- [$_->{kind}] $_->{what}\n" } @{ $case->{steps} }));
		$f = $failure;
	}
	my $text = script_header($case, $f, scalar @$steps, $tries) . $script;
	make_path($o{found});
	my $path = "$o{found}/seed-$case->{seed}-$f->{kind}.sql";
	open my $fh, '>', $path or die "cannot write $path: $!";
	print $fh $text;
	close $fh;
	diag("shrunk to " . scalar(@$steps) . " steps in $tries runs; script: $path\n$text");
	return $path;
}

sub script_header
{
	my ($case, $f, $nsteps, $tries) = @_;
	my $db = 'oracle_repro';
	return "-- flownode oracle: seed $case->{seed}, failure $f->{kind}"
	  . ($f->{flow} ? " of flow $f->{flow}" : '') . " at step $f->{what}\n"
	  . "-- shrunk to $nsteps steps ($tries runs). Reproduce the case:\n"
	  . "--   test/oracle/oracle.pl --seed $case->{seed} --cases 1"
	  . ($settings_seed != $case->{seed} ? " --settings-seed $settings_seed" : '') . "\n"
	  . ($settings ? '-- with the ' . settings_note() . "\n" : '')
	  . "-- or run this script as a superuser with psql -X -f on a server with\n"
	  . "-- shared_preload_libraries = 'flownode' (\\! lines need pg_ctl, pg_dump,\n"
	  . "-- pg_basebackup, PGDATA; a standby goes to the next port, PGDATA.standby).\n"
	  . "-- Database names below are those of the oracle's run.\n"
	  . "\\set VERBOSITY verbose\n"
	  . "SET timezone = '$case->{tz}';\n";
}
