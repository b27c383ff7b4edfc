# Helpers shared by flownode's TAP tests (test/tap/*.pl). run_all.sh runs prove
# with -I test/tap, so `use FlownodeTAP;` finds this file.
package FlownodeTAP;

use strict;
use warnings;
use Exporter 'import';
use File::Basename qw(dirname basename);
use File::Copy qw(copy);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep time);

our @EXPORT = qw(fn_node fn_try fn_poll fn_worker_pid fn_wait_worker
  fn_sink_diff fn_wait_reinit fn_flow_field fn_wait_log fn_extension_catalog fn_release_install);

# A started node. TEMP_CONFIG (test/flownode.conf) already preloads flownode;
# @conf lines are appended after it, so they win. PostgreSQL::Test::Cluster turns
# restart_after_crash off; the crash tests need the server's default (on).
sub fn_node
{
	my ($name, @conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	$node->append_conf('postgresql.conf',
		join("\n", 'restart_after_crash = on', @conf, ''));
	$node->start;
	return $node;
}

# Runs $sql, never dies: returns its output, or undef when psql failed (the
# server may be restarting).
sub fn_try
{
	my ($node, $db, $sql) = @_;
	my ($out, $err) = ('', '');
	my $rc = $node->psql($db, $sql, stdout => \$out, stderr => \$err);
	return $rc == 0 ? $out : undef;
}

# Polls $sql until it prints $expected (default 't'), at most $secs seconds
# (default 60). Returns 1 on success, 0 (with a diag) on timeout.
sub fn_poll
{
	my ($node, $db, $sql, $expected, $secs) = @_;
	$expected //= 't';
	$secs //= 60;
	my $deadline = time() + $secs;
	my $last;
	while (1)
	{
		$last = fn_try($node, $db, $sql);
		return 1 if defined $last && $last eq $expected;
		last if time() > $deadline;
		usleep(200_000);
	}
	diag("gave up after ${secs}s polling: $sql\nexpected: $expected\nlast: "
		  . ($last // '(error)'));
	return 0;
}

# pid of the pool worker serving the flow in $db ('' if none), as the flows view
# shows it: a worker may serve several flows (docs/internals.md §6).
sub fn_worker_pid
{
	my ($node, $db, $flow) = @_;
	return fn_try($node, $db,
		"SELECT f.worker_pid FROM flownode.flows f JOIN pg_stat_activity a ON a.pid = f.worker_pid "
		  . "WHERE f.flow_name = '$flow' AND a.backend_type = 'flownode flow'") // '';
}

# Waits until a running worker serves $flow in $db, with a pid other than
# $old_pid (if given). Returns the new pid, or '' on timeout.
sub fn_wait_worker
{
	my ($node, $db, $flow, $old_pid, $secs) = @_;
	$old_pid = 0 unless $old_pid && $old_pid =~ /^\d+$/;
	my $ok = fn_poll($node, $db,
		"SELECT count(*) = 1 AND bool_and(f.worker_pid <> $old_pid) FROM flownode.flows f "
		  . "JOIN pg_stat_activity a ON a.pid = f.worker_pid "
		  . "WHERE f.flow_name = '$flow' AND a.backend_type = 'flownode flow'", 't', $secs // 60);
	return $ok ? fn_worker_pid($node, $db, $flow) : '';
}

# Rows in the sink but not in the query, plus rows in the query but not in the
# sink (EXCEPT ALL both ways): 0 when the sink is exactly the query's result.
sub fn_sink_diff
{
	my ($node, $db, $sink, $query) = @_;
	return $node->safe_psql($db,
		"SELECT (SELECT count(*) FROM (TABLE $sink EXCEPT ALL ($query)) a)"
		  . " + (SELECT count(*) FROM (($query) EXCEPT ALL TABLE $sink) b)");
}

# One column of flownode.flows for $flow.
sub fn_flow_field
{
	my ($node, $db, $flow, $col) = @_;
	return $node->safe_psql($db,
		"SELECT $col FROM flownode.flows WHERE flow_name = '$flow'");
}

# After a backend was SIGKILLed: waits for the postmaster to reinitialize
# shared memory (log after $offset) and to accept connections again.
sub fn_wait_reinit
{
	my ($node, $offset) = @_;
	return 0
	  unless fn_wait_log($node,
		qr/all server processes terminated; reinitializing/, $offset, 60);
	return fn_poll($node, 'postgres', 'SELECT 1', '1', 60);
}

# Waits at most $secs seconds (default 30) for the server log after $offset to
# match $re. Returns 1 or 0.
sub fn_wait_log
{
	my ($node, $re, $offset, $secs) = @_;
	my $deadline = time() + ($secs // 30);
	while (1)
	{
		return 1 if $node->log_contains($re, $offset);
		return 0 if time() > $deadline;
		usleep(200_000);
	}
}


# The extension's objects in database $db, one line each, in an order that does not
# depend on how they came to be: members, configuration tables, functions (with
# their privileges and comments), relations, columns, constraints, indexes,
# triggers, the view, the sequence, the privileges the extension recorded as its own
# (pg_init_privs) and the schema. The update tests compare an updated database with
# a fresh install by it.
sub fn_extension_catalog
{
	my ($node, $db) = @_;
	return $node->safe_psql($db, q{
WITH ext AS (SELECT oid FROM pg_extension WHERE extname = 'flownode'),
rels AS (SELECT oid FROM pg_class WHERE relnamespace = 'flownode'::regnamespace)
SELECT 'member ' || pg_describe_object(classid, objid, objsubid) FROM pg_depend, ext
 WHERE refclassid = 'pg_extension'::regclass AND refobjid = ext.oid AND deptype = 'e'
UNION ALL
SELECT 'config ' || u.c::regclass || ' ' || u.cond
  FROM pg_extension e, unnest(e.extconfig, e.extcondition) AS u(c, cond) WHERE e.extname = 'flownode'
UNION ALL
SELECT 'function ' || pg_get_functiondef(p.oid) || ' acl=' || coalesce(p.proacl::text, '-')
       || ' comment=' || coalesce(obj_description(p.oid, 'pg_proc'), '-')
  FROM pg_proc p WHERE pronamespace = 'flownode'::regnamespace AND p.prokind <> 'a'
UNION ALL
SELECT 'aggregate ' || p.oid::regprocedure || ' ' || a.aggtransfn::regprocedure || ' '
       || a.aggfinalfn::regprocedure || ' ' || a.aggfinalextra::text || ' ' || a.aggcombinefn::regproc::text
       || ' ' || a.aggtranstype::regtype || ' parallel=' || p.proparallel::text || ' volatile='
       || p.provolatile::text || ' acl=' || coalesce(p.proacl::text, '-')
       || ' comment=' || coalesce(obj_description(p.oid, 'pg_proc'), '-')
  FROM pg_proc p JOIN pg_aggregate a ON a.aggfnoid = p.oid WHERE p.pronamespace = 'flownode'::regnamespace
UNION ALL
SELECT 'relation ' || c.oid::regclass || ' kind=' || c.relkind::text || ' acl=' || coalesce(c.relacl::text, '-')
       || ' options=' || coalesce(c.reloptions::text, '-') || ' comment=' || coalesce(obj_description(c.oid, 'pg_class'), '-')
  FROM pg_class c WHERE c.oid IN (SELECT oid FROM rels)
UNION ALL
SELECT 'column ' || a.attrelid::regclass || ' ' || a.attnum || ' ' || a.attname || ' '
       || format_type(a.atttypid, a.atttypmod) || ' notnull=' || a.attnotnull
       || ' default=' || coalesce(pg_get_expr(d.adbin, d.adrelid), '-') || ' identity=' || a.attidentity::text
       || ' storage=' || a.attstorage::text || ' compression=' || a.attcompression::text
       || ' collation=' || a.attcollation::regcollation
  FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE a.attrelid IN (SELECT oid FROM rels) AND a.attnum > 0 AND NOT a.attisdropped
UNION ALL
SELECT 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
  FROM pg_constraint WHERE connamespace = 'flownode'::regnamespace
UNION ALL
SELECT 'index ' || pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid IN (SELECT oid FROM rels)
UNION ALL
SELECT 'trigger ' || pg_get_triggerdef(oid) || ' enabled=' || tgenabled::text
  FROM pg_trigger WHERE tgrelid IN (SELECT oid FROM rels) AND NOT tgisinternal
UNION ALL
SELECT 'view ' || c.oid::regclass || ' ' || pg_get_viewdef(c.oid)
  FROM pg_class c WHERE c.oid IN (SELECT oid FROM rels) AND c.relkind = 'v'
UNION ALL
SELECT 'sequence ' || seqrelid::regclass || ' ' || seqtypid::regtype || ' ' || seqstart || ' '
       || seqincrement || ' ' || seqmax || ' ' || seqmin || ' ' || seqcache || ' ' || seqcycle
  FROM pg_sequence WHERE seqrelid IN (SELECT oid FROM rels)
UNION ALL
SELECT 'init_privs ' || pg_describe_object(i.classoid, i.objoid, i.objsubid) || ' ' || i.privtype::text || ' ' || i.initprivs::text
  FROM pg_init_privs i, pg_depend dep, ext
 WHERE dep.refclassid = 'pg_extension'::regclass AND dep.refobjid = ext.oid AND dep.deptype = 'e'
   AND i.classoid = dep.classid AND i.objoid = dep.objid
UNION ALL
SELECT 'schema ' || nspname || ' acl=' || coalesce(nspacl::text, '-') FROM pg_namespace WHERE nspname = 'flownode'
ORDER BY 1});
}


# An earlier release of flownode beside the installation under test: its source
# ($src, a tree of the git history) is built against that installation and put,
# with its control file and its install script of version $version only, into a
# copy of the installation under $tmp. PostgreSQL finds its lib and share
# directories relative to its binaries, so the copy runs where it lands. Returns the
# copy's install path (for PostgreSQL::Test::Cluster's install_path) and its
# extension directory, where the update tests install the current scripts later.
sub fn_release_install
{
	my ($src, $version, $tmp) = @_;
	my $build = "$tmp/src-$version";
	system_or_bail('cp', '-a', $src, $build);
	system_or_bail('make', '-s', '-C', $build, '-j2', 'with_llvm=no');
	my $bindir = `pg_config --bindir`;
	my $sharedir = `pg_config --sharedir`;
	chomp($bindir, $sharedir);
	my $old = "$tmp/old/usr/lib/postgresql/" . basename(dirname($bindir));
	my $oldshare = "$tmp/old/usr/share/postgresql/" . basename($sharedir);
	system_or_bail('mkdir', '-p', dirname($old), dirname($oldshare));
	system_or_bail('cp', '-a', dirname($bindir), $old);
	system_or_bail('cp', '-a', $sharedir, $oldshare);
	my $old_ext = `$old/bin/pg_config --sharedir`;
	chomp $old_ext;
	BAIL_OUT("the installation is not relocatable: $old_ext") unless $old_ext eq $oldshare;
	$old_ext .= '/extension';
	unlink glob("$old_ext/flownode*");
	copy("$build/$_", $old_ext) or BAIL_OUT("copy $_: $!")
	  for ('flownode.control', "sql/flownode--$version.sql");
	copy("$build/flownode.so", "$old/lib/flownode.so") or BAIL_OUT("copy flownode.so: $!");
	return ($old, $old_ext);
}

1;
