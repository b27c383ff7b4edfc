# Time values of the generated rows, and how each time input type writes them.
# A value is microseconds since 1970-01-01 UTC, or one of the specials 'null',
# 'infinity', '-infinity'. The time input types are those of docs/reference.md
# §4 "Date and integer time columns".
package Oracle::Time;

use strict;
use warnings;
use POSIX qw(floor);
use Exporter 'import';

our @EXPORT_OK = qw(time_types sql_type time_expr sql_lit copy_lit cast_lit
  delta_sql has_infinity window_base_type);

# 2024-03-08 00:00 UTC: the workload spans both 2024 daylight saving changes
# (America/New_York on 03-10, Europe/Berlin on 03-31).
our $BASE_US = 1709856000 * 1_000_000;

my %SQL_TYPE = (
	timestamptz => 'timestamptz',
	timestamp => 'timestamp',
	date => 'date',
	epoch_s => 'bigint',
	epoch_ms => 'bigint',
	epoch_us => 'bigint');

sub time_types { return sort keys %SQL_TYPE }

sub sql_type { return $SQL_TYPE{ $_[0] } }

sub has_infinity { return $_[0] =~ /^(timestamptz|timestamp|date)$/ }

# The time column as the flow query reads it; the accepted spellings of the user
# guide, picked at random where there are two.
sub time_expr
{
	my ($tt, $col, $r) = @_;
	return "to_timestamp($col)" if $tt eq 'epoch_s';
	if ($tt eq 'epoch_ms')
	{
		return $r->chance(0.5)
		  ? "to_timestamp($col / 1000.0)"
		  : "to_timestamp(${col}::float8 / 1000)";
	}
	if ($tt eq 'epoch_us')
	{
		return $r->chance(0.5)
		  ? "to_timestamp($col / 1000000.0)"
		  : "to_timestamp(${col}::float8 / 1000000)";
	}
	return $col;
}

# The type a window function sees: the epochs are read as timestamptz.
sub window_base_type
{
	my ($tt) = @_;
	return $tt =~ /^epoch/ ? 'timestamptz' : $tt;
}

sub fmt_utc
{
	my ($us, $date_only) = @_;
	my $s = floor($us / 1_000_000);
	my $frac = $us - $s * 1_000_000;
	my @g = gmtime($s);
	my $d = sprintf('%04d-%02d-%02d', $g[5] + 1900, $g[4] + 1, $g[3]);
	return $d if $date_only;
	my $t = sprintf('%02d:%02d:%02d', $g[2], $g[1], $g[0]);
	$t .= sprintf('.%06d', $frac) if $frac;
	return "$d $t";
}

# The value as the column stores it, unquoted (COPY text format); undef for NULL.
sub raw_value
{
	my ($tt, $v) = @_;
	return undef if $v eq 'null';
	return $v if $v =~ /infinity/;
	return fmt_utc($v) . '+00' if $tt eq 'timestamptz';
	return fmt_utc($v) if $tt eq 'timestamp';
	return fmt_utc($v, 1) if $tt eq 'date';
	return floor($v / 1_000_000) if $tt eq 'epoch_s';
	return floor($v / 1_000) if $tt eq 'epoch_ms';
	return $v;
}

# An SQL literal for INSERT ... VALUES (the column's type makes it typed).
sub sql_lit
{
	my ($tt, $v) = @_;
	my $raw = raw_value($tt, $v);
	return 'NULL' unless defined $raw;
	return $raw if $tt =~ /^epoch/;
	return "'$raw'";
}

# A typed literal, for VALUES lists whose types nothing else fixes (MERGE).
sub cast_lit
{
	my ($tt, $v) = @_;
	return sql_lit($tt, $v) . '::' . sql_type($tt);
}

sub copy_lit
{
	my ($tt, $v) = @_;
	my $raw = raw_value($tt, $v);
	return defined $raw ? $raw : '\N';
}

# An expression moving a time value by about $secs seconds (a row moved to
# another window by an UPDATE).
sub delta_sql
{
	my ($tt, $col, $secs, $ms) = @_;
	$ms //= 0;
	if ($tt eq 'date')
	{
		my $days = int($secs / 86400) || ($secs < 0 ? -1 : 1);
		return "$col + ($days)";
	}
	return "$col + ($secs)" if $tt eq 'epoch_s';
	return "$col + (" . ($secs * 1000 + $ms) . ")" if $tt eq 'epoch_ms';
	return "$col + (" . ($secs * 1000_000 + $ms * 1000) . ")"
	  if $tt eq 'epoch_us';
	return "$col + interval '$secs seconds $ms milliseconds'";
}

1;
