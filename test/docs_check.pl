#!/usr/bin/env perl
# docs_check.pl: keeps docs/reference.md in step with the SQL surface (make
# docs-check, suite checks of test/run_all.sh). It reads the extension script of
# flownode.control's default_version and the settings src/flownode.c defines, and
# fails when
#   - a function, view, view column or setting is missing from the reference: a
#     function or a view needs a heading or the first cell of a table row naming
#     flownode.NAME; a setting the first cell of a row of the settings table; each
#     column of a view the first cell of a row under the view's heading;
#   - the reference (or any other document under docs/, or the README) names a
#     flownode.NAME that is no function, view, table, index or setting, or a view's
#     table names a column the view does not have;
#   - a link to docs/*.md (in docs/ or the README) names a file or an anchor that
#     does not exist.
# Run from the repository's root: perl test/docs_check.pl
use strict;
use warnings;

my @errors;
sub fail_with { push @errors, join('', @_) }

sub slurp {
	my ($path) = @_;
	open(my $fh, '<', $path) or die "cannot read $path: $!\n";
	local $/;
	return scalar <$fh>;
}

# --- the SQL surface -------------------------------------------------------
my ($version) = slurp('flownode.control') =~ /^default_version\s*=\s*'([^']+)'/m
  or die "no default_version in flownode.control\n";
my $script = "sql/flownode--$version.sql";
my $sql = slurp($script);
$sql =~ s/--[^\n]*//g;    # comments say nothing about what exists

# an aggregate is a function too (pg_proc), documented as one
my %functions = map { $_ => 1 } $sql =~ /\bCREATE\s+(?:OR\s+REPLACE\s+)?(?:FUNCTION|AGGREGATE)\s+flownode\.(\w+)/gi;
my %tables    = map { $_ => 1 } $sql =~ /\bCREATE\s+TABLE\s+flownode\.(\w+)/gi;
my %indexes   = map { $_ => 1 } $sql =~ /\bCREATE\s+(?:UNIQUE\s+)?INDEX\s+(\w+)\s+ON\s+flownode\./gi;
my %views;    # name => [columns]
while ($sql =~ /\bCREATE\s+(?:OR\s+REPLACE\s+)?VIEW\s+flownode\.(\w+)\s+AS\s+SELECT\s+(.*?);\s*$/gsmi) {
	$views{$1} = [ view_columns($2) ];
}

# The output names of a view's SELECT list (up to its FROM outside parentheses):
# split at the commas outside parentheses and CASE ... END, each item's name its AS
# alias or its last identifier (r.flow_id).
sub view_columns {
	my ($list) = @_;
	my (@items, $depth, $cur);
	($depth, $cur) = (0, '');
	for my $tok ($list =~ /('(?:[^']|'')*'|\b\w+\b|[(),]|[^'(),\w]+)/g) {
		last if $depth == 0 && uc($tok) eq 'FROM';
		$depth++ if $tok eq '(' || uc($tok) eq 'CASE';
		$depth-- if $tok eq ')' || uc($tok) eq 'END';
		if ($tok eq ',' && $depth == 0) { push @items, $cur; $cur = ''; next }
		$cur .= $tok;
	}
	push @items, $cur if $cur =~ /\S/;
	my @names;
	for my $item (@items) {
		if ($item =~ /\bAS\s+"?(\w+)"?\s*$/i) { push @names, $1 }
		elsif ($item =~ /(?:^|\.)"?(\w+)"?\s*$/) { push @names, $1 }
		else { die "$script: cannot name the view column '$item'\n" }
	}
	return @names;
}

my $c = slurp('src/flownode.c');
my %settings = map { $_ => 1 } $c =~ /DefineCustom\w+Variable\(\s*"flownode\.(\w+)"/g;

die "$script: no function or view found\n" unless %functions && %views;
die "src/flownode.c: no setting found\n" unless %settings;

# --- the reference ---------------------------------------------------------
my $ref_path = 'docs/reference.md';
my @ref = split /\n/, slurp($ref_path);

# first cell of a table row (not the header separator)
sub first_cell {
	my ($line) = @_;
	return undef unless $line =~ /^\|([^|]*)\|/ && $line !~ /^\|\s*-+/;
	return $1;
}

my (%entry, %setting_row, %view_cols, $section_view, $heading_level, $in_settings);
for my $line (@ref) {
	if ($line =~ /^(#+)\s+(.*)$/) {
		my ($level, $text) = (length $1, $2);
		$entry{$_} = 1 for $text =~ /\bflownode\.(\w+)/g;
		# a view's columns are the rows under its heading, until a heading as high
		if (defined $section_view && $level <= $heading_level) { undef $section_view }
		if ($text =~ /^`?flownode\.(\w+)`?/ && $views{$1}) { ($section_view, $heading_level) = ($1, $level) }
		$in_settings = $text =~ /^Settings\b/ ? $level : ($in_settings && $level > $in_settings ? $in_settings : 0);
		next;
	}
	my $cell = first_cell($line);
	next unless defined $cell;
	my @named = $cell =~ /`([^`]+)`/g;
	for my $n (@named) {
		if ($n =~ /^flownode\.(\w+)/) {
			$entry{$1} = 1;
			$setting_row{$1} = 1 if $in_settings;
		}
		elsif (defined $section_view && $n =~ /^(\w+)$/) {
			$view_cols{$section_view}{$1} = 1;
		}
	}
}

for my $f (sort keys %functions) {
	fail_with("$ref_path: function flownode.$f ($script) has no heading or table row") unless $entry{$f};
}
for my $v (sort keys %views) {
	fail_with("$ref_path: view flownode.$v ($script) has no heading") unless $entry{$v};
	my %has = map { $_ => 1 } @{ $views{$v} };
	for my $col (@{ $views{$v} }) {
		fail_with("$ref_path: column $col of view flownode.$v has no row under the view's heading")
		  unless $view_cols{$v}{$col};
	}
	for my $col (sort keys %{ $view_cols{$v} || {} }) {
		fail_with("$ref_path: view flownode.$v has no column $col") unless $has{$col};
	}
}
for my $s (sort keys %settings) {
	fail_with("$ref_path: setting flownode.$s (src/flownode.c) has no row in the settings table")
	  unless $setting_row{$s};
}
for my $s (sort keys %setting_row) {
	fail_with("$ref_path: the settings table names flownode.$s, which src/flownode.c does not define")
	  unless $settings{$s};
}

# --- every flownode.NAME the documents name exists --------------------------
my %known = (%functions, %tables, %indexes, %views, %settings);
my @docs = ('README.md', glob('docs/*.md'));
my %anchors;
for my $doc (@docs) {
	my $text = slurp($doc);
	my $code = 0;
	for my $line (split /\n/, $text) {
		$code = !$code if $line =~ /^\s*```/;
		if (!$code && $line =~ /^#+\s+(.*)$/) { $anchors{$doc}{ anchor($1) } = 1 }
	}
	# flownode.NAME outside the names of files (flownode.control, flownode.so, ...)
	while ($text =~ /(?<![\w\/.-])flownode\.([a-z_]\w*)(?![\w.]*\.(?:c|h|sql|so|control|conf|md|pl)\b)/g) {
		my $name = $1;
		next if $name =~ /^(?:control|so|conf|h|c)$/;
		# a serial column's sequence (flow_flow_id_seq)
		next if $name =~ /^(\w+?)_\w+_seq$/ && $tables{$1};
		fail_with("$doc: names flownode.$name, which is no function, view, table, index or setting")
		  unless $known{$name};
	}
}

# GitHub's anchor of a heading: lower case, punctuation but - and _ removed, spaces
# become hyphens.
sub anchor {
	my ($h) = @_;
	$h = lc $h;
	$h =~ s/[^\w\- ]//g;
	$h =~ s/ /-/g;
	return $h;
}

# --- links to the documents ----------------------------------------------------
for my $doc (@docs) {
	my $dir = $doc =~ m{^docs/} ? 'docs/' : '';
	my $text = slurp($doc);
	while ($text =~ /\]\(([^)\s]*)\)/g) {
		my $link = $1;
		next if $link =~ m{^[a-z]+:}i;
		my ($file, $frag) = $link =~ /^([^#]*)(?:#(.*))?$/;
		my $target = $file eq '' ? $doc : $dir . $file;
		1 while $target =~ s{[^/]+/\.\./}{};
		next unless $target =~ /\.md$/;
		if (!-e $target) { fail_with("$doc: link ($link) to a missing file"); next }
		next unless defined $frag && $target =~ m{^(?:docs/[^/]+|README)\.md$};
		fail_with("$doc: link ($link) to a missing anchor of $target")
		  unless $anchors{$target}{$frag};
	}
}

if (@errors) {
	print "$_\n" for @errors;
	printf "docs-check: %d problem(s)\n", scalar @errors;
	exit 1;
}
printf "docs-check: %d functions, %d views (%d columns), %d settings documented in %s; links resolve\n",
  scalar(keys %functions), scalar(keys %views), scalar(map { @$_ } values %views), scalar(keys %settings),
  $ref_path;
