#!/usr/bin/env bash
# flownode's test command: installs what is missing, builds and installs the
# extension with every warning an error (make WERROR=1), then runs every suite,
# continuing after failures so that everything is reported: checks (clang-format,
# clang-tidy), unit (the C++ core, also under AddressSanitizer and
# UndefinedBehaviorSanitizer), regress, isolation, tap, oracle (the randomized
# differential oracle, test/oracle). Run as root on Debian 12, from
# any directory. The last line of output is always
#   flownode: N passed, M failed
# and the exit status is non-zero if anything failed or if no test ran.
# Set FLOWNODE_KEEP_WORKDIR=1 to keep the temporary directory for inspection.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. test/common.sh

TOTAL_PASS=0
TOTAL_FAIL=0
SUMMARY=()

# record SUITE PASSED FAILED [NOTE]: add one suite's counts to the totals.
record() {
  TOTAL_PASS=$((TOTAL_PASS + $2))
  TOTAL_FAIL=$((TOTAL_FAIL + $3))
  SUMMARY+=("$(printf '%-10s %4d passed, %4d failed%s' "$1" "$2" "$3" "${4:+  ($4)}")")
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

# a. The source checks: formatting (clang-format) and clang-tidy, one test each.
run_checks() {
  local pass=0 fail=0 target
  for target in format-check tidy; do
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
# (or "     api ... FAILED" inside a parallel group). pg_regress aborts on some
# errors (e.g. a missing expected file): the tests it never reached count as failed.
record_pg_regress() {
  local suite="$1" log="$2" rc="$3" diffs="$4" planned="$5" pass fail note=""
  pass=$(grep -cE '^(test )? *[^ ]+ +\.\.\. +ok( |$)' "$log" || true)
  fail=$(grep -cE '^(test )? *[^ ]+ +\.\.\. +(FAILED|failed)' "$log" || true)
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
run_regress_and_isolation() {
  local src="$WORK/src" log rc planned
  fn_log "suite regress: make installcheck (REGRESS)"
  log="$WORK/regress.log"
  rc=0
  (cd "$src" && fn_as_postgres make installcheck ISOLATION=) 2>&1 | tee "$log" || rc=$?
  planned=$(make_var REGRESS | wc -w) || planned=0
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
# test the source of the 0.1 release in FLOWNODE_V01_SRC, from the git history: the
# last commit of 0.1 (flownode--0.1.sql as released; the next one made 0.2).
FN_V01_COMMIT=afe1a13ef19604bb23b4c16683edab6690ee7db2

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
  local bin pgxs log="$WORK/tap.log" rc=0 pass fail v01="$WORK/v0.1"
  # the 0.1 release's source, which test/tap/012_upgrade.pl builds and upgrades from
  if git -C "$FN_ROOT" archive "$FN_V01_COMMIT" >"$WORK/v0.1.tar" 2>/dev/null; then
    mkdir -p "$v01" && tar -C "$v01" -xf "$WORK/v0.1.tar" && chown -R postgres: "$v01"
  else
    fn_log "no git history here: the upgrade test is skipped"
    v01=""
  fi
  bin="$(fn_pg_bindir)"
  pgxs="$(pgxs_src "$bin")"
  (cd "$src" && fn_as_postgres env \
      PATH="$bin:$PATH" \
      PG_REGRESS="$pgxs/test/regress/pg_regress" \
      TESTDIR="$src/test/tap" TESTDATADIR="$src/test/tap/tmp_check" \
      TEMP_CONFIG="$src/test/flownode.conf" FLOWNODE_V01_SRC="$v01" \
      prove -v -I "$pgxs/test/perl" -I test/tap "${tests[@]}") 2>&1 | tee "$log" || rc=$?
  # Top-level TAP results of each test file ("ok 3 - ..." / "not ok 4 - ...").
  pass=$(grep -cE '^ok [0-9]+' "$log" || true)
  fail=$(grep -cE '^not ok [0-9]+' "$log" || true)
  if ((rc != 0 && fail == 0)); then
    record tap "$pass" 1 "prove exited with $rc"
  else
    record tap "$pass" "$fail"
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
    SUMMARY+=("$(printf '%-10s skipped (no test/oracle/oracle.pl)' oracle)")
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

fn_install_deps
fn_build_install WERROR=1

WORK="$(fn_workdir)"
if [[ "${FLOWNODE_KEEP_WORKDIR:-}" == 1 ]]; then
  fn_log "work directory kept: $WORK"
else
  trap 'rm -rf "$WORK"' EXIT
fi
copy_repo "$WORK/src"

run_checks
run_unit unit check
run_unit unit-asan sanitize
run_regress_and_isolation
run_tap
run_oracle

echo
echo "==================== flownode test summary ===================="
printf '%s\n' "${SUMMARY[@]}"
echo "flownode: $TOTAL_PASS passed, $TOTAL_FAIL failed"
((TOTAL_FAIL == 0 && TOTAL_PASS > 0))
