/*
 * A key mark: one group of one window, the group named by the hash of its key
 * values (docs/internals.md §3, *Key marks*). Shared by the C shims and the C++
 * core, like FnTimeRange. The hash stands for the group: a refresh of a key mark
 * recomputes every group of the window whose keys hash to it (a collision only
 * recomputes one more group, never misses one), so it needs no key values stored.
 */
#ifndef FLOWNODE_KEY_MARKS_H
#define FLOWNODE_KEY_MARKS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/time_range.h"

typedef struct FnKeyMark {
	FnTimeRange window; /* one whole window */
	uint64_t hash;      /* fn_key_hash_* of the group's key values */
} FnKeyMark;

/* The hash of a row's keys before its first column. */
#define FN_KEY_HASH_SEED UINT64_C(0x9e3779b97f4a7c15)
/* What a NULL key value contributes: NULLs group together (IS NOT DISTINCT FROM). */
#define FN_KEY_HASH_NULL UINT64_C(0x5bd1e9955bd1e995)

/*
 * Folds one key column's hash into the row's (the column's type hash, extended with
 * seed 0, or FN_KEY_HASH_NULL). Order matters: (a, b) and (b, a) are other groups.
 * Not commutative, mixes every bit (a 64-bit finalizer), so columns of small
 * integers do not collide more than random values.
 */
static inline uint64_t fn_key_hash_add(uint64_t h, uint64_t column_hash) {
	uint64_t x = h ^ (column_hash + UINT64_C(0x9e3779b97f4a7c15) + (h << 6) + (h >> 2));

	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return x;
}

#endif /* FLOWNODE_KEY_MARKS_H */
