# flownode: PGXS build. src/ holds one folder per module (docs/internals.md §1) and
# include/flownode/ their headers in the same folders, included by module path
# ("query/flow_query.h"); a header only its own module includes stays beside its
# sources (src/shmem/flow_slot_fields.h, src/bridge/pg_guard.hpp), found through the
# same path under src/; the pure C++ core (src/core) is compiled by g++ as C++17 and
# also unit-tested without a server (test/unit); the C shims and the one C++ bridge
# (src/bridge) form the PostgreSQL boundary.
PG_CONFIG ?= pg_config

EXTENSION = flownode
MODULE_big = flownode
# every version's script and the update scripts between them
DATA = $(wildcard sql/flownode--*.sql)

C_SRCS = $(sort $(wildcard src/*.c src/*/*.c))
CXX_SRCS = $(sort $(wildcard src/*/*.cpp))
OBJS = $(C_SRCS:.c=.o) $(CXX_SRCS:.cpp=.o)

# the include paths of every compile: g++, gcc, and the bitcode rule below (PGXS
# hands it PG_CPPFLAGS through CPPFLAGS): the modules' headers, then their private ones
PG_CPPFLAGS = -I$(CURDIR)/include/flownode -I$(CURDIR)/src
PG_CXXFLAGS = -std=c++17 -Wno-register -fno-omit-frame-pointer
PG_CFLAGS = -Wno-declaration-after-statement

# `make WERROR=1` (the test command's build): every warning of -Wall -Wextra is an
# error in C and C++. PostgreSQL's own headers are then read as system headers, so
# that only our code is held to it.
ifeq ($(WERROR),1)
PG_CPPFLAGS += -isystem $(shell $(PG_CONFIG) --includedir-server)
PG_CFLAGS += -Wall -Wextra -Werror
PG_CXXFLAGS += -Wall -Wextra -Werror
endif
SHLIB_LINK = -lstdc++

REGRESS = api errors marking groups windows time_limits sink_exact types determinism retention repair ddl follow privileges flow_rights convergence refresh_shapes partitions partman greptime_shapes greptime_now greptime steer pathologies fold restore joins join_shapes chains time_inputs read_flow history time_bucket first_last hidden_keys timescale key_hash key_marks key_defaults
REGRESS_OPTS = --temp-instance=$(CURDIR)/tmp_check --temp-config=$(CURDIR)/test/flownode.conf
ISOLATION = refresh_race create_flow_race drop_during_refresh truncate_during_refresh backfill_row_lock dimension_race dimension_view_replace read_race fold_race cap_race restore_partition_load
ISOLATION_OPTS = --temp-instance=$(CURDIR)/tmp_check_iso --temp-config=$(CURDIR)/test/flownode.conf \
	--inputdir=test/isolation --outputdir=$(CURDIR)/results_iso

EXTRA_CLEAN = tmp_check tmp_check_iso results results_iso regression.* test/unit/flownode_unit

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS tracks no header dependencies: rebuild everything when a header changes
# (shared-memory structs are laid out in them).
HEADERS = $(wildcard include/flownode/*.h include/flownode/*/*.h include/flownode/*/*.hpp src/*/*.h src/*/*.hpp)
$(OBJS): $(HEADERS)

# Debian's PGXS also emits LLVM bitcode for JIT inlining with clang, which sees
# neither PG_CXXFLAGS nor g++'s defaults: PostgreSQL's headers use `register`,
# an error in C++17 unless silenced.
override BITCODE_CXXFLAGS += -std=c++17 -Wno-register

.PHONY: unit unit-sanitize bench format format-check tidy
unit:
	$(MAKE) -C test/unit check

unit-sanitize:
	$(MAKE) -C test/unit sanitize

bench:
	$(MAKE) -C bench run

# fails when docs/reference.md misses a function, view, view column or setting of the
# extension script and src/flownode.c, names one that does not exist, or when a link
# between the documents is broken (test/docs_check.pl)
.PHONY: docs-check
docs-check:
	perl test/docs_check.pl

FORMAT = clang-format-14
FORMAT_FILES = $(HEADERS) $(C_SRCS) $(CXX_SRCS) $(wildcard test/unit/*.cpp bench/*.cpp)
format:
	$(FORMAT) -i $(FORMAT_FILES)

# fails when a file is not as clang-format (.clang-format) would write it
format-check:
	$(FORMAT) --dry-run -Werror $(FORMAT_FILES)

# clang-tidy with .clang-tidy's checks, every finding an error; one file per run,
# two at a time (-w: compiler warnings are the build's business, not tidy's)
TIDY = clang-tidy-14
TIDY_FLAGS = -w -I$(CURDIR)/include/flownode -I$(CURDIR)/src -isystem $(shell $(PG_CONFIG) --includedir-server) -D_GNU_SOURCE
tidy:
	printf '%s\n' $(C_SRCS) | xargs -P2 -I{} $(TIDY) --quiet {} -- $(TIDY_FLAGS)
	printf '%s\n' $(CXX_SRCS) | xargs -P2 -I{} $(TIDY) --quiet {} -- -std=c++17 -Wno-register $(TIDY_FLAGS)
