#!/usr/bin/env bash
# flownode's test command: installs what is missing, builds and installs the
# extension with every warning an error (make WERROR=1), then runs every suite,
# continuing after failures so that everything is reported: checks (clang-format,
# clang-tidy, docs-check), unit (the C++ core, also under AddressSanitizer and
# UndefinedBehaviorSanitizer), regress, isolation, tap, oracle (the randomized
# differential oracle, test/oracle), and the Debian package (test/deb_package.sh).
# Run as root on Debian 12, from any directory:
#   bash test/run_all.sh              PostgreSQL 15, the machine's own
#   bash test/run_all.sh --pg 17      PostgreSQL 17, in a Debian 13 (trixie) chroot
#   bash test/run_all.sh --pg 18      PostgreSQL 18, in a Debian sid chroot
#   bash test/run_all.sh --pg all     15, 17 and 18 (--pg may also be repeated)
# The chroots are made with debootstrap on first use and kept (test/pg_chroot.sh);
# inside one the same script runs the version's suites (build, unit, regress,
# isolation, tap, oracle). For 18 the sid chroot also gets PostgreSQL 15 and 17 with
# this tree's flownode (test/pg_upgrade_env.sh, suite upgrade-env), from which the
# TAP test of pg_upgrade upgrades 15 -> 17 -> 18. The checks and the sanitizer build of the unit tests do not
# depend on PostgreSQL's version: they run once, on the machine itself.
# The last line of output is always
#   flownode: N passed, M failed
# over every version run, after a summary per suite and per version, and the exit
# status is non-zero if anything failed or if no test ran.
# Set FLOWNODE_KEEP_WORKDIR=1 to keep the temporary directories for inspection.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. test/common.sh
. test/pg_chroot.sh
. test/pg_upgrade_env.sh

# The versions to run, in order, from --pg (default: the machine's own, 15).
FN_ALL_VERSIONS=(15 17 18)
VERSIONS=()
while (($#)); do
  case "$1" in
    --pg)
      [[ $# -ge 2 ]] || fn_die "--pg needs a version: 15, 17, 18 or all"
      case "$2" in
        all) VERSIONS+=("${FN_ALL_VERSIONS[@]}") ;;
        15 | 17 | 18) VERSIONS+=("$2") ;;
        *) fn_die "unsupported PostgreSQL version '$2' (15, 17, 18 or all)" ;;
      esac
      shift 2 ;;
    --pg=*) set -- --pg "${1#--pg=}" "${@:2}" ;;
    -h | --help) sed -n '2,23p' "$0"; exit 0 ;;
    *) fn_die "unknown argument '$1' (usage: run_all.sh [--pg 15|17|18|all]...)" ;;
  esac
done
((${#VERSIONS[@]})) || VERSIONS=(15)
# Inside a chroot (FN_IN_CHROOT=1, set by run_in_chroot) the one version asked for
# is the system's own.
if [[ "${FN_IN_CHROOT:-}" == 1 ]]; then
  FN_PG_MAJOR="${VERSIONS[0]}"
fi

TOTAL_PASS=0
TOTAL_FAIL=0
SUMMARY=()
LABEL=""          # the version's prefix on its summary lines ("pg17 ")
VERSION_LINES=()  # one per version: its counts and time

# record SUITE PASSED FAILED [NOTE]: add one suite's counts to the totals.
record() {
  TOTAL_PASS=$((TOTAL_PASS + $2))
  TOTAL_FAIL=$((TOTAL_FAIL + $3))
  SUMMARY+=("$(printf '%-16s %4d passed, %4d failed%s' "$LABEL$1" "$2" "$3" "${4:+  ($4)}")")
}

# skip SUITE REASON: a suite or test not run on this version, in the summary.
skip() {
  SUMMARY+=("$(printf '%-16s skipped (%s)' "$LABEL$1" "$2")")
}

# Sum the numbers captured by a sed expression over a log (0 if none).
sum_matches() {
  sed -nE "$1" "$2" | awk '{ s += $1 } END { print s + 0 }'
}

# Copy the repository, minus build outputs and test leftovers, into DEST and
# hand it to postgres: pg_regress and prove write their results next to the sources.
copy_repo() {
  local dest="$1" name entries=()
  while IFS= read -r -d '' name; do
    case "$name" in
      .git | tmp_check | tmp_check_iso | results | results_iso | output_iso | regression.* | log) ;;
      *) entries+=("$name") ;;
    esac
  done < <(find . -mindepth 1 -maxdepth 1 -printf '%f\0')
  mkdir -p "$dest"
  tar --exclude='*.o' --exclude='*.bc' --exclude='*.so' --exclude=flownode_unit --exclude=flownode_unit_sanitized \
      --exclude=tmp_check -cf - "${entries[@]}" | tar -C "$dest" -xf -
  chown -R postgres: "$dest"
}

# a. The source checks: formatting (clang-format), clang-tidy, and the reference
# against the SQL script and the settings (docs-check), one test each.
run_checks() {
  local pass=0 fail=0 target
  for target in format-check tidy docs-check; do
    fn_log "suite checks: make $target"
    if make -s "$target" >"$WORK/$target.log" 2>&1; then
      pass=$((pass + 1))
    else
      fail=$((fail + 1))
      echo "---- make $target failed (first 100 lines) ----"
      head -n 100 "$WORK/$target.log"
    fi
  done
  record checks "$pass" "$fail"
}

# b. Unit tests of the pure C++ core (GoogleTest), built and run as root: plain
# (make check) and under the sanitizers (make sanitize).
run_unit() {
  local suite="$1" target="$2"
  fn_log "suite $suite: make -C test/unit $target"
  if [[ ! -f test/unit/Makefile ]]; then
    echo "test/unit/Makefile is missing"
    record "$suite" 0 1 "test/unit/Makefile missing"
    return 0
  fi
  local log="$WORK/$suite.log" rc=0 pass fail
  make -C test/unit "$target" 2>&1 | tee "$log" || rc=$?
  pass=$(sum_matches 's/^\[  PASSED  \] ([0-9]+) tests?\..*/\1/p' "$log")
  fail=$(sum_matches 's/^\[  FAILED  \] ([0-9]+) tests?, listed below.*/\1/p' "$log")
  if ((rc != 0 && fail == 0)); then
    record "$suite" "$pass" 1 "make exited with $rc"
  else
    record "$suite" "$pass" "$fail"
  fi
}

# The value of a variable of the Makefile (e.g. REGRESS), read through make itself.
make_var() {
  # shellcheck disable=SC2016  # $($*) is make syntax, not shell
  make -s --no-print-directory --eval='fn-print-%: ; @echo $($*)' "fn-print-$1"
}

# Count pg_regress's per-test lines in LOG for SUITE, whose Makefile list is
# PLANNED; dump DIFFS on failure. PG15 prints e.g.
#   "test api                          ... ok          123 ms"
# (or "     api ... FAILED" inside a parallel group); from 16 on, TAP lines
#   "ok 1         - api                                       123 ms"
#   "not ok 2     - errors                                    456 ms"
# ("+" instead of "-" inside a parallel group). pg_regress aborts on some
# errors (e.g. a missing expected file): the tests it never reached count as failed.
record_pg_regress() {
  local suite="$1" log="$2" rc="$3" diffs="$4" planned="$5" pass fail note=""
  pass=$(grep -cE '^((test )? *[^ ]+ +\.\.\. +ok( |$)|ok [0-9]+ +[-+] )' "$log" || true)
  fail=$(grep -cE '^((test )? *[^ ]+ +\.\.\. +(FAILED|failed)|not ok [0-9]+ +[-+] )' "$log" || true)
  if ((rc != 0 || fail > 0)); then
    if [[ -s "$diffs" ]]; then
      echo "---- $diffs (first 200 lines) ----"
      head -n 200 "$diffs"
    fi
    if ((pass + fail < planned)); then
      note="$((planned - pass - fail)) of $planned not run or aborted"
      fail=$((planned - pass))
    elif ((fail == 0)); then
      note="make exited with $rc"
      fail=1
    fi
  fi
  record "$suite" "$pass" "$fail" "$note"
}

# c. pg_regress and pg_isolation_regress via `make installcheck` as postgres, in a
# copy of the repository. The Makefile's --temp-instance options make each tool
# start its own cluster. The two are run separately (each with the other's list
# emptied on the make command line) because make stops at the first failing
# command and the isolation tests must run even if a regression test fails.
# The regression tests that need an extension of another package, as TEST:EXTENSION
# (Debian's postgresql-NN-hll, -tdigest, -partman): where one is not installed the
# test is left out of the run and the summary says so (a release may lack the package).
FN_REGRESS_NEEDS=(types:hll types:tdigest partman:pg_partman)

run_regress_and_isolation() {
  local src="$WORK/src" log rc planned tests=() t need ext sharedir missing=()
  sharedir="$("$(fn_pg_bindir)/pg_config" --sharedir)"
  for t in $(make_var REGRESS); do
    for need in "${FN_REGRESS_NEEDS[@]}"; do
      ext="${need#*:}"
      if [[ "${need%%:*}" == "$t" && ! -f "$sharedir/extension/$ext.control" ]]; then
        missing+=("$t (no $ext extension for PostgreSQL $FN_PG_MAJOR)")
        continue 2
      fi
    done
    tests+=("$t")
  done
  for t in "${missing[@]}"; do
    fn_log "regress: $t skipped"
    skip "regress:${t%% *}" "${t#* (}"
  done
  fn_log "suite regress: make installcheck (REGRESS)"
  log="$WORK/regress.log"
  rc=0
  (cd "$src" && fn_as_postgres make installcheck ISOLATION= REGRESS="${tests[*]}") 2>&1 | tee "$log" || rc=$?
  planned=${#tests[@]}
  record_pg_regress regress "$log" "$rc" "$src/regression.diffs" "$planned"

  fn_log "suite isolation: make installcheck (ISOLATION)"
  log="$WORK/isolation.log"
  rc=0
  (cd "$src" && fn_as_postgres make installcheck REGRESS=) 2>&1 | tee "$log" || rc=$?
  # The Makefile sends isolation results to results_iso; PGXS's default is output_iso.
  local diffs="$src/results_iso/regression.diffs"
  [[ -s "$diffs" ]] || diffs="$src/output_iso/regression.diffs"
  planned=$(make_var ISOLATION | wc -w) || planned=0
  record_pg_regress isolation "$log" "$rc" "$diffs" "$planned"
}

# d. TAP tests (test/tap/*.pl) with prove and PostgreSQL's Perl test modules, as
# postgres, from the root of the repository copy. Every node they create gets
# test/flownode.conf through TEMP_CONFIG (so flownode is preloaded), and the upgrade
# tests the sources of earlier releases, from the git history: in FLOWNODE_V01_SRC
# the last commit of 0.1 (flownode--0.1.sql as released; the next one made 0.2), in
# FLOWNODE_V02_SRC the last commit of 0.2 (test/tap/026_update_rights.pl).
FN_V01_COMMIT=afe1a13ef19604bb23b4c16683edab6690ee7db2
FN_V02_COMMIT=07054432e38c9ea2b58ae52588edfb3116f74682

# fn_release_src COMMIT DIR: that commit's tree in DIR, owned by postgres; false (and
# nothing in DIR) without the git history.
fn_release_src() {
  git -C "$FN_ROOT" archive "$1" >"$2.tar" 2>/dev/null || return 1
  mkdir -p "$2" && tar -C "$2" -xf "$2.tar" && chown -R postgres: "$2"
}

# The src directory of PGXS (.../lib/pgxs/src), where PostgreSQL's Perl test
# modules (test/perl) and pg_regress are, for the server binaries in $1.
pgxs_src() {
  (cd "$(dirname "$("$1/pg_config" --pgxs)")/.." && pwd)
}

run_tap() {
  local src="$WORK/src" tests=() t
  for t in test/tap/*.pl; do [[ -e "$t" ]] && tests+=("$t"); done
  if ((${#tests[@]} == 0)); then
    fn_log "suite tap: no test/tap/*.pl, skipped"
    SUMMARY+=("$(printf '%-10s skipped (no TAP tests)' tap)")
    return 0
  fi
  fn_log "suite tap: prove ${tests[*]}"
  local bin pgxs log="$WORK/tap.log" rc=0 pass fail v01="$WORK/v0.1" v02="$WORK/v0.2" note="" upgrade=()
  # The test of pg_upgrade (023) upgrades from the older installations that
  # run_in_chroot put in the chroot (test/pg_upgrade_env.sh), oldest first, each to
  # the next and the last to this version; their binaries need the libraries of
  # their compat-lib directories. Without them (the machine, 17) it upgrades a
  # cluster of this version to this version.
  if [[ "${FN_IN_CHROOT:-}" == 1 && -n "${FLOWNODE_UPGRADE_FROM:-}" ]]; then
    upgrade=(FLOWNODE_UPGRADE_FROM="$FLOWNODE_UPGRADE_FROM"
             LD_LIBRARY_PATH="${FLOWNODE_UPGRADE_LIBS:-}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
    fn_log "tap: pg_upgrade from $FLOWNODE_UPGRADE_FROM (LD_LIBRARY_PATH=${FLOWNODE_UPGRADE_LIBS:-})"
  fi
  # the 0.1 release's source, which test/tap/012_upgrade.pl builds and upgrades from.
  # 0.1 was released for PostgreSQL 15 only and does not build against a later
  # version's headers: no cluster of 17 or 18 can hold a 0.1 catalog to update.
  if [[ "$FN_PG_MAJOR" != 15 ]]; then
    note="012_upgrade skipped: the 0.1 release builds against PostgreSQL 15 only"
    fn_log "$note"
    v01=""
  elif ! fn_release_src "$FN_V01_COMMIT" "$v01"; then
    fn_log "no git history here: the upgrade test is skipped"
    v01=""
  fi
  # 0.2 builds against every version: 026_update_rights runs its library, else
  # creates 0.2's objects with this one
  if ! fn_release_src "$FN_V02_COMMIT" "$v02"; then
    fn_log "no git history here: 026_update_rights creates 0.2's objects with this library"
    v02=""
  fi
  bin="$(fn_pg_bindir)"
  pgxs="$(pgxs_src "$bin")"
  (cd "$src" && fn_as_postgres env -u FLOWNODE_UPGRADE_FROM -u FLOWNODE_UPGRADE_LIBS "${upgrade[@]}" \
      PATH="$bin:$PATH" \
      PG_REGRESS="$pgxs/test/regress/pg_regress" \
      TESTDIR="$src/test/tap" TESTDATADIR="$src/test/tap/tmp_check" \
      TEMP_CONFIG="$src/test/flownode.conf" FLOWNODE_V01_SRC="$v01" FLOWNODE_V02_SRC="$v02" \
      prove -v -I "$pgxs/test/perl" -I test/tap "${tests[@]}") 2>&1 | tee "$log" || rc=$?
  # Top-level TAP results of each test file ("ok 3 - ..." / "not ok 4 - ...").
  pass=$(grep -cE '^ok [0-9]+' "$log" || true)
  fail=$(grep -cE '^not ok [0-9]+' "$log" || true)
  if ((rc != 0 && fail == 0)); then
    record tap "$pass" 1 "prove exited with $rc${note:+; $note}"
  else
    record tap "$pass" "$fail" "$note"
  fi
}

# e. The randomized differential oracle (test/oracle/oracle.pl, docs/internals.md
# §8): cases generated from a fresh seed (printed first) for
# FLOWNODE_ORACLE_MINUTES minutes (default 4), as postgres with the environment
# run_tap sets. Each case is one test ("ok N - seed S" / "not ok N - seed S ...");
# a failing case is shrunk and printed as a SQL script (also written under
# test/oracle/found in the work directory). Reproduce one with
#   test/oracle/oracle.pl --seed S --cases 1
run_oracle() {
  local src="$WORK/src" minutes="${FLOWNODE_ORACLE_MINUTES:-4}" bin pgxs log="$WORK/oracle.log" rc=0 pass fail
  if [[ ! -f "$src/test/oracle/oracle.pl" ]]; then
    skip oracle "no test/oracle/oracle.pl"
    return 0
  fi
  fn_log "suite oracle: test/oracle/oracle.pl --minutes $minutes"
  bin="$(fn_pg_bindir)"
  pgxs="$(pgxs_src "$bin")"
  (cd "$src" && fn_as_postgres env \
      PATH="$bin:$PATH" \
      PG_REGRESS="$pgxs/test/regress/pg_regress" \
      TESTDIR="$src/test/oracle" TESTDATADIR="$src/test/oracle/tmp_check" \
      TEMP_CONFIG="$src/test/flownode.conf" \
      perl -I "$pgxs/test/perl" test/oracle/oracle.pl --minutes "$minutes") 2>&1 | tee "$log" || rc=$?
  pass=$(grep -cE '^ok [0-9]+' "$log" || true)
  fail=$(grep -cE '^not ok [0-9]+' "$log" || true)
  if ((rc != 0 && fail == 0)); then
    record oracle "$pass" 1 "oracle.pl exited with $rc"
  else
    record oracle "$pass" "$fail"
  fi
}

# The suites of one version on this system's PostgreSQL (FN_PG_MAJOR): the machine's
# own 15, or a chroot's version when this script runs inside one. Every suite that
# depends on PostgreSQL's version goes here, so that it runs on every version; a
# suite that needs more packages in the chroots adds them to fn_chroot_required
# (test/pg_chroot.sh).
run_version_suites() {
  fn_build_install WERROR=1
  WORK="$(fn_workdir)"
  if [[ "${FLOWNODE_KEEP_WORKDIR:-}" == 1 ]]; then
    fn_log "work directory kept: $WORK"
  else
    CLEANUP+=("rm -rf '$WORK'")
  fi
  copy_repo "$WORK/src"

  run_unit unit check
  if [[ "${FN_IN_CHROOT:-}" == 1 ]]; then
    skip unit-asan "the core has no PostgreSQL header: run once, on the machine itself"
  else
    run_unit unit-asan sanitize
  fi
  run_regress_and_isolation
  run_tap
  run_oracle
}

# run_in_chroot MAJOR: this script with --pg MAJOR inside the version's chroot, on a
# copy of the repository; its summary lines and counts join this run's. Concurrent
# runs of one version wait for each other (the chroot is made once, and its
# PostgreSQL installation holds one flownode). It mounts what the chroot lacks and
# unmounts only that. For a version with older ones to upgrade from
# (fn_upgrade_chain: 15 and 17 for 18), their installations with this tree's
# flownode are staged first (before the lock), then installed into the chroot and
# checked (suite upgrade-env); the run inside gets FLOWNODE_UPGRADE_FROM only if
# that passed.
run_in_chroot() {
  local v="$1" dir run log rc=0 line counts chain staged="" err t0 mounted=() upgrade=()
  chain="$(fn_upgrade_chain "$v")"
  if [[ -n "$chain" ]]; then
    t0=$SECONDS
    err="$(mktemp)"
    fn_log "upgrade-env: staging PostgreSQL $chain with this tree's flownode"
    if staged="$(fn_upgrade_stage_all "$v" 2>"$err")"; then
      cat "$err"
      fn_log "upgrade-env: staged in $((SECONDS - t0))s"
    else
      cat "$err"
      record upgrade-env 0 1 "staging failed: $(grep -v '^==>' "$err" | grep . | tail -n 1)"
      staged=""
    fi
    rm -f "$err"
  fi
  mkdir -p "$FN_CHROOT_CACHE"
  exec {lock}>"$FN_CHROOT_CACHE/.$(fn_chroot_codename "$v").lock"
  flock "$lock"
  dir="$(fn_chroot_ensure "$v")"
  mapfile -t mounted < <(fn_chroot_mount_mine "$dir")
  ((${#mounted[@]} == 0)) || CLEANUP+=("fn_chroot_umount_these ${mounted[*]}")
  if [[ -n "$staged" ]]; then
    t0=$SECONDS
    if fn_upgrade_install_all "$dir" "$v" "$staged"; then
      upgrade=(FLOWNODE_UPGRADE_FROM="$(fn_upgrade_from_paths "$v")" FLOWNODE_UPGRADE_LIBS="$(fn_upgrade_libpath "$v")")
    fi
    record upgrade-env "$FN_UPGRADE_PASS" "$FN_UPGRADE_FAIL" "$FN_UPGRADE_NOTE"
    fn_log "upgrade-env: installed and checked in $((SECONDS - t0))s: $FN_UPGRADE_PASS passed, $FN_UPGRADE_FAIL failed"
  fi
  run="$(mktemp -d "$dir/tmp/flownode-run.XXXXXX")"
  [[ "${FLOWNODE_KEEP_WORKDIR:-}" == 1 ]] || CLEANUP+=("rm -rf --one-file-system '$run'")
  copy_repo_plain "$run/src"
  log="$run/run.log"
  fn_log "PostgreSQL $v: test/run_all.sh --pg $v inside $dir"
  chroot "$dir" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      HOME=/root LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=dumb FN_IN_CHROOT=1 \
      FLOWNODE_KEEP_WORKDIR="${FLOWNODE_KEEP_WORKDIR:-}" FLOWNODE_ORACLE_MINUTES="${FLOWNODE_ORACLE_MINUTES:-}" \
      "${upgrade[@]}" bash "/tmp/$(basename "$run")/src/test/run_all.sh" --pg "$v" 2>&1 | tee "$log" || rc=$?
  fn_chroot_umount_these "${mounted[@]}"
  flock -u "$lock"
  # its summary: the lines between the banner and its last line
  while IFS= read -r line; do
    SUMMARY+=("$line")
  done < <(sed -n '/^==* flownode test summary/,$p' "$log" | sed '1d;$d')
  counts="$(sed -nE 's/^flownode-pg[0-9]+: ([0-9]+) passed, ([0-9]+) failed$/\1 \2/p' "$log" | tail -n 1)"
  if [[ -n "$counts" ]]; then
    TOTAL_PASS=$((TOTAL_PASS + ${counts% *}))
    TOTAL_FAIL=$((TOTAL_FAIL + ${counts#* }))
  else
    record run 0 1 "the run inside the chroot ended (exit $rc) without its summary"
  fi
}

# Copy the repository (without .git and build outputs) to DEST, owned by root: the
# chroot's postgres is another user than the machine's (the run inside copies it
# again, for its own postgres).
copy_repo_plain() {
  local dest="$1" name entries=()
  while IFS= read -r -d '' name; do
    case "$name" in
      .git | tmp_check | tmp_check_iso | results | results_iso | output_iso | regression.* | log) ;;
      *) entries+=("$name") ;;
    esac
  done < <(find . -mindepth 1 -maxdepth 1 -printf '%f\0')
  mkdir -p "$dest"
  tar --exclude='*.o' --exclude='*.bc' --exclude='*.so' --exclude=flownode_unit --exclude=flownode_unit_sanitized \
      --exclude=tmp_check -cf - "${entries[@]}" | tar -C "$dest" -xf -
}

# e. The Debian package of the version (test/deb_package.sh): built with pg_buildext,
# installed into a clean chroot of the version, a flow run, removed. Four tests.
run_package() {
  local v="$1" log rc=0 line counts
  log="$WORK/package-$v.log"
  fn_log "suite package: test/deb_package.sh --pg $v"
  FLOWNODE_CHROOT_CACHE="$FN_CHROOT_CACHE" bash test/deb_package.sh --pg "$v" 2>&1 | tee "$log" || rc=$?
  counts="$(sed -nE 's/^flownode-package: ([0-9]+) passed, ([0-9]+) failed$/\1 \2/p' "$log" | tail -n 1)"
  if [[ -z "$counts" ]]; then
    record package 0 1 "test/deb_package.sh ended (exit $rc) without its counts"
  else
    record package "${counts% *}" "${counts#* }"
  fi
}

CLEANUP=()
cleanup() {
  local c
  for ((c = ${#CLEANUP[@]} - 1; c >= 0; c--)); do eval "${CLEANUP[c]}" || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [[ "${FN_IN_CHROOT:-}" == 1 ]]; then
  # inside a chroot: this version's suites only; run_in_chroot reads the summary
  fn_install_deps
  LABEL="pg$FN_PG_MAJOR "
  run_version_suites
  echo
  echo "==================== flownode test summary ===================="
  printf '%s\n' "${SUMMARY[@]}"
  echo "flownode-pg$FN_PG_MAJOR: $TOTAL_PASS passed, $TOTAL_FAIL failed"
  exit 0
fi

fn_install_deps
WORK="$(fn_workdir)"
CLEANUP+=("rm -rf '$WORK'")
LABEL=""
start=$SECONDS
run_checks
t=$((SECONDS - start))
VERSION_LINES+=("$(printf 'checks (once, on the machine): in %dm%02ds' $((t / 60)) $((t % 60)))")
for v in "${VERSIONS[@]}"; do
  start=$SECONDS
  pass0=$TOTAL_PASS
  fail0=$TOTAL_FAIL
  LABEL="pg$v "
  if [[ "$v" == "$FN_PG_MAJOR" ]]; then
    run_version_suites
  else
    run_in_chroot "$v"
  fi
  run_package "$v"
  t=$((SECONDS - start))
  VERSION_LINES+=("$(printf 'PostgreSQL %s: %d passed, %d failed in %dm%02ds' "$v" \
    $((TOTAL_PASS - pass0)) $((TOTAL_FAIL - fail0)) $((t / 60)) $((t % 60)))")
done

echo
echo "==================== flownode test summary ===================="
printf '%s\n' "${SUMMARY[@]}"
echo "---------------------------------------------------------------"
printf '%s\n' "${VERSION_LINES[@]}"
printf 'all: in %dm%02ds\n' $((SECONDS / 60)) $((SECONDS % 60))
echo "flownode: $TOTAL_PASS passed, $TOTAL_FAIL failed"
((TOTAL_FAIL == 0 && TOTAL_PASS > 0))
