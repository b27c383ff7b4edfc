# The oracle's own pseudo-random generator (xorshift32). A case must be the same
# for the same seed on every machine and Perl build, so nothing here reads the
# clock or Perl's rand(); every random choice of a case goes through one Rng.
package Oracle::Rng;

use strict;
use warnings;

my $MASK = 0xFFFFFFFF;

sub new
{
	my ($class, $seed) = @_;
	my $s = (($seed // 1) ^ 0x9E3779B9) & $MASK;
	$s = 1 if $s == 0;    # xorshift never leaves 0
	my $self = bless { s => $s }, $class;
	$self->next for 1 .. 8;    # spread close seeds apart
	return $self;
}

# The next 32-bit value.
sub next
{
	my ($self) = @_;
	my $x = $self->{s};
	$x ^= ($x << 13) & $MASK;
	$x ^= $x >> 17;
	$x ^= ($x << 5) & $MASK;
	$self->{s} = $x;
	return $x;
}

# An integer in [0, n).
sub below
{
	my ($self, $n) = @_;
	return $self->next % $n;
}

# An integer in [lo, hi].
sub range
{
	my ($self, $lo, $hi) = @_;
	return $lo + $self->below($hi - $lo + 1);
}

sub pick
{
	my ($self, @items) = @_;
	return $items[ $self->below(scalar @items) ];
}

# True with probability p.
sub chance
{
	my ($self, $p) = @_;
	return $self->next / 4294967296.0 < $p;
}

# A key of %weights, each with the probability of its weight. Keys are taken in
# sorted order so that the choice does not depend on Perl's hash order.
sub weighted
{
	my ($self, %weights) = @_;
	my @keys = sort grep { $weights{$_} > 0 } keys %weights;
	my $total = 0;
	$total += $weights{$_} for @keys;
	my $at = $self->below($total);
	for my $k (@keys)
	{
		return $k if $at < $weights{$k};
		$at -= $weights{$k};
	}
	return $keys[-1];
}

# A few distinct items of @items, in their order.
sub some
{
	my ($self, $min, $max, @items) = @_;
	my $n = $self->range($min, $max);
	$n = @items if $n > @items;
	my @left = @items;
	my %taken;
	while (keys %taken < $n)
	{
		$taken{ $self->below(scalar @left) } = 1;
	}
	return @left[ sort { $a <=> $b } keys %taken ];
}

1;
