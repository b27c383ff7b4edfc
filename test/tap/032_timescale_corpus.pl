# TimescaleDB's continuous aggregates as their users write them: each definition of
# the corpus test/timescale/caggs.sql (copied from TimescaleDB's own test suite, see
# its header) runs as written through flownode.execute over plain tables; the
# accepted ones are refreshed with CALL refresh_continuous_aggregate, written to
# (late rows, updates of values and of times, deletes, dimension writes), flushed,
# and their sinks compared with their queries.
#
# The test fails only on a wrong sink or a crash: a refusal is a count, with its
# reason, since other work makes more definitions acceptable over time. It prints
# the counts: accepted and exact (or exact to a float's last digits), refused (each
# with its reason), wrong.
use strict;
use warnings;
use File::Basename qw(dirname);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use FlownodeTAP;

# ---- the corpus: schemas, each with its setup, definitions and writes ----
my $path = dirname(__FILE__) . '/../timescale/caggs.sql';
open(my $fh, '<', $path) or die "cannot read $path: $!\n";
my (@schemas, $schema, $cagg, $part);
while (my $line = <$fh>)
{
	if ($line =~ /^-- \@schema (\w+)/)
	{
		$schema = { name => $1, setup => '', writes => '', caggs => [] };
		push @schemas, $schema;
		$part = \$schema->{setup};
	}
	elsif ($line =~ /^-- \@cagg (\w+) (\S+)/)
	{
		$cagg = { name => $1, source => $2, text => '', schema => $schema->{name} };
		push @{ $schema->{caggs} }, $cagg;
		$part = \$cagg->{text};
	}
	elsif ($line =~ /^-- \@writes/)
	{
		$part = \$schema->{writes};
	}
	elsif (defined $part)
	{
		$$part .= $line;
	}
}
close($fh);
my @caggs = map { @{ $_->{caggs} } } @schemas;
cmp_ok(scalar(@caggs), '>=', 40, 'the corpus holds at least 40 definitions');

my $node = fn_node('timescale_corpus');
$node->safe_psql('postgres', q{
CREATE EXTENSION flownode;
-- the sink against its stored query, over the query's own columns: exact, exact
-- with floats rounded to 6 decimals (summation order), or wrong
CREATE FUNCTION public.corpus_diff(p_flow text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  q text; s regclass; cols text; rcols text; missing bigint; extra bigint;
BEGIN
  SELECT query, sink_table::regclass INTO q, s FROM flownode.flow WHERE flow_name = p_flow;
  EXECUTE format('CREATE TEMP VIEW corpus_q AS %s', q);
  SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum),
         string_agg(CASE WHEN atttypid IN ('float4'::regtype, 'float8'::regtype)
                         THEN format('round(%I::numeric, 6)', attname) ELSE quote_ident(attname) END,
                    ', ' ORDER BY attnum)
    INTO cols, rcols
    FROM pg_attribute WHERE attrelid = 'corpus_q'::regclass AND attnum > 0;
  EXECUTE format('SELECT count(*) FROM (SELECT %s FROM corpus_q EXCEPT ALL SELECT %s FROM %s) d', cols, cols, s)
    INTO missing;
  EXECUTE format('SELECT count(*) FROM (SELECT %s FROM %s EXCEPT ALL SELECT %s FROM corpus_q) d', cols, s, cols)
    INTO extra;
  IF missing + extra > 0 THEN
    EXECUTE format('SELECT count(*) FROM (SELECT %s FROM corpus_q EXCEPT ALL SELECT %s FROM %s) d', rcols, rcols, s)
      INTO missing;
    EXECUTE format('SELECT count(*) FROM (SELECT %s FROM %s EXCEPT ALL SELECT %s FROM corpus_q) d', rcols, s, rcols)
      INTO extra;
    DROP VIEW corpus_q;
    RETURN CASE WHEN missing + extra = 0 THEN 'float' ELSE format('wrong: missing=%s extra=%s', missing, extra) END;
  END IF;
  DROP VIEW corpus_q;
  RETURN 'exact';
END $$;
});

sub in_schema
{
	my ($s, $sql) = @_;
	return "SET timezone = 'UTC'; SET search_path = $s, public; $sql";
}

sub alive
{
	return defined fn_try($node, 'postgres', 'SELECT 1');
}

foreach my $s (@schemas)
{
	$node->safe_psql('postgres',
		"SET timezone = 'UTC'; CREATE SCHEMA $s->{name}; SET search_path = $s->{name}; $s->{setup}");
}

# ---- create, then refresh as TimescaleDB's users do after WITH NO DATA ----
my (@accepted, %outcome);
foreach my $c (@caggs)
{
	my ($out, $err) = ('', '');
	my $rc = $node->psql('postgres',
		in_schema($c->{schema}, "SELECT * FROM flownode.execute(\$corpus\$$c->{text}\$corpus\$)"),
		stdout => \$out, stderr => \$err);
	ok(alive(), "the server runs after creating $c->{name}") or BAIL_OUT('server down');
	if ($rc != 0)
	{
		my ($reason) = $err =~ /ERROR:\s+(.*)/;
		$outcome{ $c->{name} } = 'refused: ' . ($reason // $err);
		next;
	}
	push @accepted, $c;
}
foreach my $c (@accepted)
{
	$node->safe_psql('postgres',
		in_schema($c->{schema},
			"SELECT * FROM flownode.execute(\$\$CALL refresh_continuous_aggregate('$c->{name}', NULL, NULL)\$\$)"));
	my $diff = $node->safe_psql('postgres', "SELECT public.corpus_diff('$c->{name}')");
	$outcome{ $c->{name} } = "wrong after the refresh ($diff)" if $diff =~ /^wrong/;
}

# ---- writes, a flush, and the sinks against their queries ----
foreach my $s (@schemas)
{
	$node->safe_psql('postgres', in_schema($s->{name}, $s->{writes}));
}
foreach my $c (@accepted)
{
	$node->safe_psql('postgres', "SELECT flownode.flush_flow('$c->{name}', cascade => true)");
	my $diff = $node->safe_psql('postgres', "SELECT public.corpus_diff('$c->{name}')");
	$outcome{ $c->{name} } //= $diff =~ /^wrong/ ? "wrong after the writes ($diff)" : $diff;
}
ok(alive(), 'the server runs after the writes and flushes');

# ---- the counts ----
my %count = (exact => 0, float => 0, refused => 0, wrong => 0);
foreach my $c (@caggs)
{
	my $o = $outcome{ $c->{name} };
	my $kind = $o =~ /^refused/ ? 'refused' : $o =~ /^wrong/ ? 'wrong' : $o;
	$count{$kind}++;
	diag(sprintf('%-26s %-44s %s', $c->{name}, $c->{source}, $o)) if $kind ne 'exact';
}
diag(sprintf('corpus: %d definitions; accepted and exact %d (%d of them to a float\'s last digits); '
	  . 'refused %d; wrong %d',
	scalar(@caggs), $count{exact} + $count{float}, $count{float}, $count{refused}, $count{wrong}));
is($count{wrong}, 0, 'no accepted continuous aggregate is wrong after writes and a flush');

$node->stop;
done_testing();
