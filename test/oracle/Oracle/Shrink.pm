# Shrinking a failing case: the steps after the failing one are cut, then steps
# are dropped, in halves, quarters, ... down to one at a time (delta debugging),
# as long as the case still fails the same way (same check, same flow). Setup
# steps marked essential (extensions, tables) are kept. Then the case is
# written out as a runnable SQL script.
package Oracle::Shrink;

use strict;
use warnings;
use POSIX qw(ceil);
use Time::HiRes qw(time);

sub same_failure
{
	my ($f, $want) = @_;
	return $f && $f->{kind} eq $want->{kind}
	  && ($f->{flow} // '') eq ($want->{flow} // '');
}

# Steps up to the failing one (all of them for a failure found after the last
# step, such as one in the server log).
sub cut_after
{
	my ($steps, $failure) = @_;
	my $last = $failure->{step} // $#$steps;
	$last = $#$steps if $failure->{kind} eq 'server_log';
	return [ @{$steps}[ 0 .. $last ] ];
}

# $run->(\@steps) runs a case and returns ($failure, $script). Returns the
# smallest failing steps found before $deadline, its failure and its script.
sub shrink
{
	my ($run, $steps, $failure, $deadline) = @_;
	my $want = $failure;
	my ($best, $best_f, $best_script) = (cut_after($steps, $failure), $failure, undef);
	my ($f, $script) = $run->($best);
	return ($steps, $failure, undef) unless same_failure($f, $want);    # flaky
	($best_f, $best_script) = ($f, $script);
	$best = cut_after($best, $f);
	my $n = 2;
	while (time() < $deadline)
	{
		my @cand = grep { !$best->[$_]{essential} } 0 .. $#$best - 1;
		last unless @cand;
		$n = @cand if $n > @cand;
		my $chunk = ceil(@cand / $n);
		my $reduced = 0;
		for (my $i = 0; $i < @cand && time() < $deadline; $i += $chunk)
		{
			my $end = $i + $chunk - 1;
			$end = $#cand if $end > $#cand;
			my %drop = map { $cand[$_] => 1 } $i .. $end;
			my $try = [ map { $best->[$_] } grep { !$drop{$_} } 0 .. $#$best ];
			my ($tf, $ts) = $run->($try);
			next unless same_failure($tf, $want);
			($best, $best_f, $best_script) = (cut_after($try, $tf), $tf, $ts);
			$reduced = 1;
			$n = $n > 2 ? $n - 1 : 2;
			last;
		}
		next if $reduced;
		last if $chunk == 1;
		$n *= 2;
	}
	return ($best, $best_f, $best_script);
}

1;
