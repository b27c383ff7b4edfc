# shellcheck shell=bash
# The callgrind mechanism shared by bench/callgrind.sh (a single-user backend) and
# bench/flow_servers_cg.sh (a whole server, so that a walsender can stream): a
# program under valgrind's callgrind that counts only inside the given functions,
# and the total it counted. Sourced; needs test/common.sh.

# cg_require: valgrind, installed if missing
cg_require() {
  command -v valgrind >/dev/null || {
    fn_log "installing: valgrind"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends valgrind >/dev/null
  }
}

# cg_cmd OUTFILE TOGGLE...: sets CG_CMD, the valgrind prefix counting only inside
# the TOGGLE functions (and what they call). OUTFILE may hold %p (a file per
# process: a postmaster's children are forked, not exec'ed, so they stay under it).
cg_cmd() {
  local out=$1 f
  shift
  CG_CMD=(valgrind --tool=callgrind --collect-atstart=no)
  for f in "$@"; do CG_CMD+=("--toggle-collect=$f"); done
  CG_CMD+=("--callgrind-out-file=$out")
}

# cg_total FILE: the instructions a profile counted
cg_total() { awk '/^(summary|totals):/ {print $2; exit}' "$1"; }
