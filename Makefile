# flownode: PGXS build. src/ holds one folder per module (docs/internals.md §1); the
# pure C++ core (src/core) is compiled by g++ as C++17 and also unit-tested without a
# server (test/unit); the C shims and the one C++ bridge (src/bridge) form the
# PostgreSQL boundary.
EXTENSION = flownode
MODULE_big = flownode
DATA = sql/flownode--0.1.sql

C_SRCS = $(sort $(wildcard src/*.c src/*/*.c))
CXX_SRCS = $(sort $(wildcard src/*/*.cpp))
OBJS = $(C_SRCS:.c=.o) $(CXX_SRCS:.cpp=.o)

PG_CPPFLAGS = -I$(CURDIR)/src
PG_CXXFLAGS = -std=c++17 -Wno-register -fno-omit-frame-pointer
PG_CFLAGS = -Wno-declaration-after-statement
SHLIB_LINK = -lstdc++

REGRESS = api errors marking groups windows sink_exact ddl privileges convergence
REGRESS_OPTS = --temp-instance=$(CURDIR)/tmp_check --temp-config=$(CURDIR)/test/flownode.conf
ISOLATION = refresh_race
ISOLATION_OPTS = --temp-instance=$(CURDIR)/tmp_check_iso --temp-config=$(CURDIR)/test/flownode.conf \
	--inputdir=test/isolation --outputdir=$(CURDIR)/results_iso

EXTRA_CLEAN = tmp_check tmp_check_iso results results_iso regression.* test/unit/flownode_unit

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS tracks no header dependencies: rebuild everything when a header changes
# (shared-memory structs are laid out in them).
HEADERS = $(wildcard src/*.h src/*/*.h src/*/*.hpp)
$(OBJS): $(HEADERS)

# Debian's PGXS also emits LLVM bitcode for JIT inlining with clang, which sees
# neither PG_CXXFLAGS nor g++'s defaults: PostgreSQL's headers use `register`,
# an error in C++17 unless silenced.
override BITCODE_CXXFLAGS += -std=c++17 -Wno-register

.PHONY: unit bench format
unit:
	$(MAKE) -C test/unit check

bench:
	$(MAKE) -C bench run

format:
	clang-format -i $(HEADERS) $(C_SRCS) $(CXX_SRCS) test/unit/*.cpp bench/*.cpp
