# Runs the steps of a case on a node, in a database of its own, and records
# the first failure and the SQL that ran (for the reproduction script).
#
# What counts as a failure (the rest of an ERROR is a refusal, recorded):
#   - a write (INSERT, COPY, ..., COMMIT) refused by flownode: an ERROR raised
#     in flownode's code (its LOCATION is one of flownode's source files) or an
#     internal error (XX000), since a write is never flownode's to refuse;
#   - an internal error (XX000) from any statement;
#   - a failed checkpoint (Oracle::Check), a hang, a failed restore or a flow
#     that a restore and the repair call of docs/operations.md leave unbound;
#   - on a promotion: a failed check on the standby, a write committed on the
#     primary missing after it.
#
# A promotion changes the case's node: the case goes on on the promoted node
# (the old primary stays stopped) until its end; then the nodes the case made
# are stopped and removed, the main node is started again and its databases of
# the case dropped. The server log of every node the case ran on is checked.
package Oracle::Exec;

use strict;
use warnings;
use IPC::Run;
use Time::HiRes ();
use File::Basename qw(basename);
use File::Path qw(rmtree);
use PostgreSQL::Test::Utils;
use PostgreSQL::Test::Cluster;
use Oracle::Check;

# nodes made by the run's promotions (names unique in the run: their data
# directories and logs are under TESTDATADIR, their ports from
# PostgreSQL::Test::Cluster's reservations)
my $standby_seq = 0;

# background_psql notes every query and its output on the TAP stream: hundreds
# of lines per case. The oracle prints what matters itself.
{
	no warnings 'redefine';
	*PostgreSQL::Test::BackgroundPsql::note = sub { };
}

sub new
{
	my ($class, %a) = @_;
	my $self = bless {
		node => $a{node},
		case => $a{case},
		db => $a{db},
		src_files => $a{src_files},
		tmp => $a{tmp},
		verbose => $a{verbose},
		names => { map { $_ => $_ } qw(src t host v dim dimv) },
		live => [],
		expiring => {},
		sess => {},
		script => [],
		refusals => [],
		failure => undef,
		dbs => [],
		restores => 0,
		main => $a{node},
		main_dbs => [],
		standby => undef,
		made => [],
		logs => [],
	}, $class;
	return $self;
}

# ---- sessions and statements ----

sub open_session
{
	my ($self) = @_;
	my $s = $self->{node}->background_psql($self->{db}, on_error_stop => 0, timeout => 90);
	$s->query("\\set VERBOSITY verbose");
	$s->query("SET client_min_messages = warning");
	$s->query("SET timezone = '$self->{case}{tz}'");
	return $s;
}

sub session
{
	my ($self, $name) = @_;
	return $self->{sess}{$name} //= $self->open_session;
}

sub close_sessions
{
	my ($self) = @_;
	for my $name (sort keys %{ $self->{sess} })
	{
		my $s = delete $self->{sess}{$name};
		eval { $s->quit; 1 } or eval { $s->{run}->kill_kill; 1 };
	}
}

# ERRORs in psql's verbose stderr: [ { code, text, file } ].
sub parse_errors
{
	my ($err) = @_;
	my (@errors, $cur);
	for my $line (split /\n/, $err)
	{
		if ($line =~ /(?:ERROR|FATAL):\s+([0-9A-Z]{5}): (.*)/)
		{
			$cur = { code => $1, text => $2 };
			push @errors, $cur;
		}
		elsif ($line =~ /connection to server .*lost|server closed the connection/)
		{
			push @errors, { code => 'LOST', text => $line };
		}
		elsif ($cur && $line =~ /^LOCATION:\s+[^,]+, ([^:]+):\d+/)
		{
			$cur->{file} = $1;
		}
	}
	return \@errors;
}

# Runs $sql (a template) in session $sess; records it for the script.
sub q
{
	my ($self, $sess, $sql, $label) = @_;
	$sql = $self->subst($sql);
	push @{ $self->{script} }, script_line($sess, $sql, $label);
	$sql = $self->copy_from_file($sql);
	my $s = $self->session($sess);
	$s->{stderr} = '';
	my $out = eval { $s->query($sql) };
	if (!defined $out)
	{
		my $why = $@ || 'psql died';
		delete $self->{sess}{$sess};
		eval { $s->{run}->kill_kill };
		return { out => '', errors => [ { code => 'HANG', text => "no answer: $why" } ] };
	}
	my $errors = parse_errors($s->{stderr});
	print "# [$sess] $sql\n# => $out $s->{stderr}\n" if $self->{verbose};
	return { out => $out, errors => $errors };
}

# The single value $sql returns in the main session (undef on an error).
sub value
{
	my ($self, $sql) = @_;
	my $s = $self->session('M');
	$s->{stderr} = '';
	my $out = eval { $s->query($sql) };
	print "# value: $sql\n# => " . ($out // 'undef') . " $s->{stderr}\n" if $self->{verbose};
	return undef if !defined $out || $s->{stderr} =~ /ERROR/;
	return $out;
}

# psql reading its script from a pipe (background_psql) does not find the end
# of COPY FROM STDIN's data: the rows go to a file, read by \copy (the same
# COPY FROM STDIN on the server). The script keeps the inline form.
sub copy_from_file
{
	my ($self, $sql) = @_;
	while ($sql =~ /^COPY (\S+ \([^)]*\)) FROM STDIN;\n(.*?\n)\\\.$/ms)
	{
		my ($target, $data, $whole) = ($1, $2, $&);
		my $file = "$self->{tmp}/copy_" . ++$self->{copies} . '.tsv';
		open my $fh, '>', $file or die "cannot write $file: $!";
		print $fh $data;
		close $fh;
		$sql =~ s/\Q$whole\E/\\copy $target FROM '$file'/;
	}
	return $sql;
}

sub subst
{
	my ($self, $sql) = @_;
	$sql =~ s/\{\{(\w+)\}\}/$self->{names}{$1}/g;
	return $sql;
}

# The line of the reproduction script for one statement. Statements of the
# second and third session become dblink calls, so that the script keeps the
# interleaving of the open transactions.
sub script_line
{
	my ($sess, $sql, $label) = @_;
	my $head = $label ? "-- $label\n" : '';
	return "$head$sql\n" if $sess eq 'M';
	return "${head}SELECT dblink_exec('$sess', \$dbl\$$sql\$dbl\$);\n";
}

sub flow_query
{
	my ($self, $name) = @_;
	my ($f) = grep { $_->{name} eq $name } @{ $self->{case}{flows} };
	return $self->subst($f->{query});
}

sub live_flows { return @{ $_[0]{live} } }

# ---- outcomes ----

sub fail
{
	my ($self, $kind, $flow, $detail) = @_;
	$self->{failure} //= { kind => $kind, flow => $flow, detail => $detail,
		step => $self->{at}, what => $self->{what} };
	push @{ $self->{script} }, "-- FAILED ($kind" . ($flow ? ", $flow" : '') . "):\n"
	  . join('', map { "--   $_\n" } split /\n/, $detail);
	return 0;
}

sub refused
{
	my ($self, $what, $text) = @_;
	push @{ $self->{refusals} }, "$what: $text";
	return 1;
}

sub from_flownode
{
	my ($self, $e) = @_;
	return $e->{file} && $self->{src_files}{ basename($e->{file}) };
}

# Sorts the ERRORs of a step into refusals and failures.
sub judge
{
	my ($self, $kind, $res) = @_;
	for my $e (@{ $res->{errors} })
	{
		next if $e->{code} eq '25P02';    # the rest of an aborted transaction
		return $self->fail('hang', undef, $e->{text}) if $e->{code} eq 'HANG';
		return $self->fail('connection_lost', undef, $e->{text}) if $e->{code} eq 'LOST';
		return $self->fail('internal_error', undef, "$e->{code}: $e->{text}")
		  if $e->{code} eq 'XX000';
		return $self->fail('write_refused', undef,
			"a write was refused by flownode ($e->{file}): $e->{code}: $e->{text}")
		  if $kind eq 'write' && $self->from_flownode($e);
		$self->refused($self->{what}, "$e->{code}: $e->{text}");
	}
	return 1;
}

# ---- steps ----

sub run_steps
{
	my ($self, $steps) = @_;
	$self->create_db($self->{db});
	$self->watch_log($self->{node}, -s $self->{node}->logfile);
	for my $i (0 .. $#$steps)
	{
		@$self{qw(at what)} = ($i, $steps->[$i]{what});
		$self->run_step($steps->[$i]);
		last if $self->{failure};
	}
	$self->close_sessions;
	$self->back_to_main;
	for my $l (@{ $self->{logs} })
	{
		last if $self->{failure};
		Oracle::Check::check_log($self, $l->{node}, $l->{from}, $l->{skip});
	}
	$self->drop_dbs;
	return $self->{failure};
}

# The server log of $node is checked from $from at the end of the case.
sub watch_log
{
	my ($self, $node, $from) = @_;
	push @{ $self->{logs} }, { node => $node, from => $from, skip => [] };
}

sub log_of
{
	my ($self, $node) = @_;
	my ($l) = grep { $_->{node} == $node } @{ $self->{logs} };
	return $l;
}

# The end of a case that made nodes: they are stopped and removed, the main
# node starts again (if a promotion stopped it) and the case's databases there
# are dropped with the rest.
sub back_to_main
{
	my ($self) = @_;
	my $main = $self->{main};
	return unless @{ $self->{made} };
	for my $node (@{ $self->{made} })
	{
		$node->stop('fast', fail_ok => 1);
		$node->clean_node;
	}
	$self->{made} = [];
	$self->{standby} = undef;
	$self->{node} = $main;
	if ($self->{main_stopped})
	{
		my $l = $self->log_of($main);
		$main->start;
		# the stop of the promotion and this start
		push @{ $l->{skip} }, [ $l->{stopped_at}, -s $main->logfile ];
		$self->{main_stopped} = 0;
		my %seen;
		$self->{dbs} = [ grep { !$seen{$_}++ } @{ $self->{main_dbs} }, @{ $self->{dbs} } ];
	}
}

sub run_step
{
	my ($self, $step) = @_;
	my $k = $step->{kind};
	push @{ $self->{script} }, "\n-- [$self->{at}] $step->{what}\n";
	return $self->run_setup($step) if $k eq 'setup';
	return $self->run_sql($step) if $k eq 'sql';
	return $self->judge('write', $self->q('M', $step->{sql})) if $k eq 'write';
	return Oracle::Check::check_read($self) if $k eq 'check';
	return Oracle::Check::check_flush($self) if $k eq 'flush_check';
	return $self->run_block($step) if $k eq 'block';
	return $self->run_restart if $k eq 'restart';
	return $self->run_dump($step) if $k eq 'dump';
	return $self->run_standby if $k eq 'standby';
	return $self->run_promote($step) if $k eq 'promote';
	return $self->run_upgrade if $k eq 'upgrade';
	return $self->run_final if $k eq 'final';
	die "unknown step kind $k";
}

sub run_setup
{
	my ($self, $step) = @_;
	my $res = $self->q('M', $step->{sql});
	return 1 unless @{ $res->{errors} };
	return $self->fail('setup_error', undef, $res->{errors}[0]{text});
}

sub run_sql
{
	my ($self, $step) = @_;
	my $res = $self->q('M', $step->{sql});
	if (@{ $res->{errors} })
	{
		return $self->judge('op', $res);
	}
	if (my $name = $step->{creates})
	{
		push @{ $self->{live} }, $name unless grep { $_ eq $name } @{ $self->{live} };
	}
	$self->{expiring}{ $step->{expires} } = 1 if $step->{expires};
	$self->{names}{ $step->{rename}[0] } = $step->{rename}[1] if $step->{rename};
	return 1;
}

sub run_block
{
	my ($self, $step) = @_;
	push @{ $self->{script} },
	  "CREATE EXTENSION IF NOT EXISTS dblink;\n"
	  . "SELECT dblink_connect('$_', 'dbname=' || current_database() || ' port=' || current_setting('port')"
	  . " || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));\n"
	  for qw(A B);
	my $ok = 1;
	for my $sub (@{ $step->{subs} })
	{
		my ($sess, $sql) = @$sub;
		if ($sql eq '__CHECK__')
		{
			$ok = Oracle::Check::check_read($self);
		}
		else
		{
			$ok = $self->judge($sess eq 'M' ? 'op' : 'write', $self->q($sess, $sql));
		}
		last unless $ok;
	}
	# the sessions end their transactions whatever happened (a no-op after COMMIT)
	for my $sess (qw(A B))
	{
		next unless $self->{sess}{$sess};
		$self->{sess}{$sess}->query('ROLLBACK') if $ok;
	}
	push @{ $self->{script} }, "SELECT dblink_disconnect('$_');\n" for qw(A B);
	return $ok;
}

sub run_restart
{
	my ($self) = @_;
	my $node = $self->{node};
	push @{ $self->{script} },
	  "\\! pg_ctl -D \"\$PGDATA\" -m immediate -w stop && pg_ctl -D \"\$PGDATA\" -l \"\$PGDATA/server.log\" -w start\n\\c\n";
	$self->close_sessions;
	my $from = -s $node->logfile;
	$node->stop('immediate');
	$node->start;
	push @{ $self->log_of($node)->{skip} }, [ $from, -s $node->logfile ];
	return 1;
}

# ---- standby and promotion (docs/operations.md "Standby and promotion") ----

# A base backup of the case's node and a streaming hot standby from it. The
# script makes it on the primary's port + 1, in "$PGDATA.standby".
sub run_standby
{
	my ($self) = @_;
	return 1 if $self->{standby};    # a shrunk case: the promotion between two dropped
	my $primary = $self->{node};
	push @{ $self->{script} },
	    "SELECT current_setting('port')::int + 1 AS standby_port,"
	  . " current_setting('data_directory') || '.standby' AS standby_data \\gset\n"
	  . "\\setenv PRIMARY_HOST :HOST\n\\setenv PRIMARY_PORT :PORT\n"
	  . "\\setenv STANDBY_PORT :standby_port\n\\setenv STANDBY_DATA :standby_data\n"
	  . "\\! rm -rf \"\$STANDBY_DATA\" && pg_basebackup -h \"\$PRIMARY_HOST\" -p \"\$PRIMARY_PORT\""
	  . " -D \"\$STANDBY_DATA\" -R -X stream -c fast"
	  . " && echo \"port = \$STANDBY_PORT\" >> \"\$STANDBY_DATA/postgresql.auto.conf\""
	  . " && pg_ctl -D \"\$STANDBY_DATA\" -l \"\$STANDBY_DATA/server.log\" -w start\n";
	my $name = 'standby' . ++$standby_seq;
	my $backup = $primary->backup_dir . "/$name";
	my ($ok, $out) = $self->run_cmd('pg_basebackup', '-D', $backup, '-h', $primary->host,
		'-p', $primary->port, '-c', 'fast', '--no-sync', '-X', 'stream');
	return $self->fail('standby_failed', undef, "pg_basebackup: $out") unless $ok;
	my $standby = PostgreSQL::Test::Cluster->new($name);
	$standby->init_from_backup($primary, $name, has_streaming => 1);
	rmtree($backup);
	push @{ $self->{made} }, $standby;
	$self->watch_log($standby, 0);
	return $self->fail('standby_failed', undef, 'the standby did not start')
	  unless $standby->start(fail_ok => 1);
	$self->{standby} = $standby;
	return 1;
}

# count and a hash of the rows of the case's tables written by the writes (not
# the sinks): the same on the promoted node as on the primary before its stop
sub fingerprint
{
	my ($self, $node) = @_;
	my @tables = ('{{src}}');
	push @tables, '{{dim}}' if $self->{case}{dim};
	my $sql = join(" || ' ' || ",
		map { $self->subst("(SELECT count(*) || ':' || coalesce(sum(hashtext(x::text)::bigint), 0) FROM $_ x)") }
		  @tables);
	my ($out, $err) = ('', '');
	$node->psql($self->{db}, "SET timezone = 'UTC'; SELECT $sql", stdout => \$out, stderr => \$err);
	return $err =~ /ERROR/ ? "error: $err" : $out;
}

# The failover. The standby catches up (replay LSN), is checked as a hot
# standby, then the primary stops (immediate: a crash; fast: a switchover) and
# the standby is promoted; the case goes on there, checked at once (read_flow
# while the workers start) and at its later checkpoints.
sub run_promote
{
	my ($self, $step) = @_;
	return 0 unless $self->{standby} || $self->run_standby;
	my ($primary, $standby) = ($self->{node}, $self->{standby});
	my $failing = $self->value("SELECT string_agg(flow_name, ' ') FROM flownode.flows WHERE state = 'failing'");
	$self->{was_failing} = { map { $_ => 1 } split / /, $failing // '' };
	$self->close_sessions;
	push @{ $self->{script} },
	    "SELECT pg_current_wal_lsn() AS primary_lsn \\gset\n"
	  . "\\c - - - :standby_port\nSET timezone = '$self->{case}{tz}';\n"
	  . "SELECT set_config('oracle.replay_target', :'primary_lsn', false);\n"
	  . "-- wait for the standby's replay\n"
	  . "DO \$\$BEGIN WHILE pg_last_wal_replay_lsn() < current_setting('oracle.replay_target')::pg_lsn"
	  . " LOOP PERFORM pg_sleep(0.1); END LOOP; END\$\$;\n";
	my $before = $self->fingerprint($primary);
	my $caught = eval {
		local $PostgreSQL::Test::Utils::timeout_default = 60;
		$primary->wait_for_catchup($standby, 'replay', $primary->lsn('write'));
		1;
	};
	return $self->fail('standby_catchup', undef, "the standby did not catch up in 60 s: $@")
	  unless $caught;

	$self->{node} = $standby;
	if (!Oracle::Check::check_standby($self, $step->{call_flow}))
	{
		$self->close_sessions;
		$self->{node} = $primary;
		return 0;
	}

	my $l = $self->log_of($primary);
	$l->{stopped_at} = -s $primary->logfile;
	push @{ $self->{script} }, "\\! pg_ctl -D \"\$PGDATA\" -m $step->{stop} -w stop\n";
	push @{ $self->{script} }, "\\! pg_ctl -D \"\$STANDBY_DATA\" -w promote\n"
	  if $step->{how} eq 'pg_ctl';
	$self->close_sessions if $step->{how} eq 'pg_ctl';
	$primary->stop($step->{stop}, fail_ok => 1);
	if ($primary == $self->{main})
	{
		$self->{main_stopped} = 1;
		$self->{main_dbs} = [ @{ $self->{dbs} } ];
	}
	else
	{
		# a node an earlier promotion made: its log up to here, no more
		push @{ $l->{skip} }, [ $l->{stopped_at}, 1e15 ];
	}
	if ($step->{how} eq 'pg_ctl')
	{
		my ($ok, $out) = $self->run_cmd('pg_ctl', '-D', $standby->data_dir, '-w', 'promote');
		return $self->fail('promote_failed', undef, $out) unless $ok;
	}
	else
	{
		my $res = $self->q('M', 'SELECT pg_promote();');
		return $self->fail('promote_failed', undef, $res->{errors}[0]{text})
		  if @{ $res->{errors} };
		return $self->fail('promote_failed', undef, "pg_promote() returned $res->{out}")
		  unless $res->{out} eq 't';
		$self->close_sessions;
	}
	$self->{standby} = undef;
	push @{ $self->{script} },
	  "\\setenv PGDATA :standby_data\n\\setenv PGPORT :standby_port\n\\c\nSET timezone = '$self->{case}{tz}';\n";
	my $rec = $self->value('SELECT pg_is_in_recovery()');
	return $self->fail('promote_failed', undef, 'the promoted node is still in recovery')
	  unless defined $rec && $rec eq 'f';
	my $after = $self->fingerprint($standby);
	return $self->fail('promotion_lost_writes', undef,
		"the tables written differ after the promotion (count:hash per table):\n"
		  . "primary before: $before\npromoted: $after")
	  unless $after eq $before;
	return Oracle::Check::check_read($self);
}

# ---- pg_upgrade (docs/internals.md §9) ----

# The case's node stopped (fast: pg_upgrade needs a clean shutdown) and upgraded
# with pg_upgrade, to the same version, into a new cluster where the case goes on:
# the flows come back bound (the database's starter binds them without a
# recompute) and are checked at once. The old node stays stopped, as after a
# promotion (the main node starts again at the end of the case).
sub run_upgrade
{
	my ($self) = @_;
	return 1 if $self->{standby};    # a shrunk case: the standby's promotion was dropped
	my $old = $self->{node};
	my $bindir = $old->config_data('--bindir');
	$self->close_sessions;
	my $new = PostgreSQL::Test::Cluster->new('upgraded' . ++$standby_seq);
	$new->init;
	$new->append_conf('postgresql.conf',
		"max_worker_processes = 64\nlog_min_messages = log\nlog_checkpoints = off\n"
		  . "wal_level = replica\nmax_wal_senders = 10\n");
	push @{ $self->{made} }, $new;
	push @{ $self->{script} },
	    "\\! pg_ctl -D \"\$PGDATA\" -m fast -w stop\n"
	  . "\\! initdb -D \"\$PGDATA.upgraded\" && pg_upgrade -d \"\$PGDATA\" -D \"\$PGDATA.upgraded\" -b $bindir -B $bindir\n"
	  . "\\! pg_ctl -D \"\$PGDATA.upgraded\" -l \"\$PGDATA.upgraded/server.log\" -w start\n\\c\n";
	my $l = $self->log_of($old);
	$l->{stopped_at} = -s $old->logfile;
	$old->stop('fast');
	if ($old == $self->{main})
	{
		$self->{main_stopped} = 1;
		$self->{main_dbs} = [ @{ $self->{dbs} } ];
	}
	else
	{
		push @{ $l->{skip} }, [ $l->{stopped_at}, 1e15 ];
	}
	my ($ok, $out) = $self->run_cmd("$bindir/pg_upgrade", '--no-sync', '-d', $old->data_dir,
		'-D', $new->data_dir, '-b', $bindir, '-B', $bindir, '-s', $new->host,
		'-p', $old->port, '-P', $new->port);
	return $self->fail('upgrade_failed', undef, $out) unless $ok;
	$self->watch_log($new, 0);
	return $self->fail('upgrade_failed', undef, 'the upgraded cluster did not start')
	  unless $new->start(fail_ok => 1);
	$self->{node} = $new;
	return 0 unless $self->wait_upgraded_bound;
	return Oracle::Check::check_read($self);
}

# The starter binds the flows pg_upgrade brought over within seconds: until then a
# write that finds it binding a flow of its table fails (55P03, to be retried),
# which this waits out. A flow it could not bind says so in the log (a WARNING the
# case's log check reports).
sub wait_upgraded_bound
{
	my ($self) = @_;
	my $sql = "SELECT NOT EXISTS (SELECT FROM flownode.flow_binding b, pg_control_system() c"
	  . " WHERE b.system_identifier <> c.system_identifier)";
	for (1 .. 300)
	{
		my $v = $self->value($sql);
		return 1 if defined $v && $v eq 't';
		Time::HiRes::usleep(100_000);
	}
	return $self->fail('upgrade_unbound', undef,
		'30 s after the start of the upgraded cluster, flows of pg_upgrade\'s are still unbound');
}

sub run_cmd
{
	my ($self, @cmd) = @_;
	my ($out, $err) = ('', '');
	my $ok = IPC::Run::run(\@cmd, '>', \$out, '2>', \$err);
	print "# \$ @cmd\n# $out$err\n" if $self->{verbose};
	return ($ok, $out . $err);
}

sub conn_args
{
	my ($self) = @_;
	return ('-h', $self->{node}->host, '-p', $self->{node}->port);
}

# pg_dump of the case's database and a restore into a new one, where the case
# goes on; then what docs/operations.md asks of a user: flows still 'restored' are
# bound with refresh_flow, resumed first ("a restored flow that is paused must be
# resumed before refresh_flow binds it"; the view shows it 'restored').
sub run_dump
{
	my ($self, $step) = @_;
	my $n = ++$self->{restores};
	my $old = $self->{db};
	my $new = "${old}_r$n";
	my $file = "$self->{tmp}/$old.dump";
	my @fmt = $step->{format} eq 'custom' ? ('-Fc') : ('-Fp');
	my @excl = $step->{exclude_sinks}
	  ? map { ('--exclude-table-data', "public.${_}_sink") } $self->live_flows
	  : ();
	my @dump = ('pg_dump', $self->conn_args, @fmt, @excl, '-f', $file, '-d', $old);
	my @restore = $step->{format} eq 'custom'
	  ? ('pg_restore', $self->conn_args, '-j', $step->{jobs}, '-d', $new, $file)
	  : ('psql', $self->conn_args, '-X', '-q', '-d', $new, '-f', $file);
	push @{ $self->{script} }, "\\! @dump\n\\! createdb $new\n\\! @restore\n\\c $new\n";
	$self->close_sessions;
	my ($ok, $out) = $self->run_cmd(@dump);
	return $self->fail('dump_failed', undef, $out) unless $ok;
	$self->create_db($new);
	$self->{db} = $new;
	($ok, $out) = $self->run_cmd(@restore);
	return $self->fail('restore_failed', undef, $out)
	  unless $ok && $out !~ /ERROR|error:/;
	$self->drop_db($old);
	return 0 unless $self->check_restored_view;
	return $self->bind_restored;
}

# Before any repair: a flow the restore did not bind must not say active.
sub check_restored_view
{
	my ($self) = @_;
	for my $name ($self->live_flows)
	{
		my $v = Oracle::Check::view_row($self, $name);
		return 0 unless Oracle::Check::check_unbound($self, $name, $v);
	}
	return 1;
}

sub bind_restored
{
	my ($self) = @_;
	my $res = $self->q('M',
		"SELECT flownode.resume_flow(flow_name) FROM flownode.flows WHERE state IN ('paused', 'restored') AND NOT marking_enabled;\n"
		  # a restored flow that is paused is resumed first, and paused again (§11)
		  . "CREATE TEMP TABLE fn_paused AS SELECT v.flow_name FROM flownode.flows v JOIN flownode.flow f USING (flow_id) WHERE v.state = 'restored' AND f.paused;\n"
		  . "SELECT flownode.resume_flow(flow_name) FROM fn_paused;\n"
		  . "SELECT flow_name, flownode.refresh_flow(flow_name) FROM flownode.flows WHERE state = 'restored' ORDER BY flow_id;\n"
		  . "SELECT flownode.pause_flow(flow_name) FROM fn_paused;\nDROP TABLE fn_paused;",
		'bind the flows the restore left restored (docs/operations.md)');
	return $self->fail('restore_bind', undef, $res->{errors}[0]{text}) if @{ $res->{errors} };
	return 1;
}

# The end of every case: every flow resumed, flushed and checked.
sub run_final
{
	my ($self) = @_;
	for my $name ($self->live_flows)
	{
		my $v = Oracle::Check::view_row($self, $name);
		$self->q('M', "SELECT flownode.resume_flow('$name');") if $v && $v->{state} eq 'paused';
	}
	# how many flows mark groups by their keys (key triggers: docs/internals.md §3,
	# *Key marks*), for the case's line
	$self->{keyed} = $self->value("SELECT count(DISTINCT substring(encode(tgargs, 'escape') FROM '^[0-9]+'))"
		  . " FROM pg_trigger WHERE tgname LIKE 'flownode_mark_keys%'");
	return Oracle::Check::check_flush($self) && Oracle::Check::check_read($self);
}

# ---- databases ----

sub admin
{
	my ($self, $sql) = @_;
	# (on the node the case runs on now)
	my ($out, $err) = ('', '');
	$self->{node}->psql('postgres', $sql, stdout => \$out, stderr => \$err);
	return $err;
}

sub create_db
{
	my ($self, $db) = @_;
	$self->admin("DROP DATABASE IF EXISTS $db WITH (FORCE)");
	my $err = $self->admin("CREATE DATABASE $db");
	die "cannot create database $db: $err" if $err =~ /ERROR/;
	push @{ $self->{dbs} }, $db;
}

sub drop_db
{
	my ($self, $db) = @_;
	$self->admin("DROP DATABASE IF EXISTS $db WITH (FORCE)");
	$self->{dbs} = [ grep { $_ ne $db } @{ $self->{dbs} } ];
}

sub drop_dbs
{
	my ($self) = @_;
	$self->drop_db($_) for @{ $self->{dbs} };
}

1;
