/*
 * slot_ranges.h: where a slot's dirty and durable sets live (slot_ranges.c), for
 * src/shmem/ only: in the slot while small, else in a pool every slot shares. The
 * slot's functions (fn_slot_dirty_set, ...) call these under the slot's lock.
 */
#ifndef FLOWNODE_SLOT_RANGES_H
#define FLOWNODE_SLOT_RANGES_H

#include "postgres.h"

#include "utils/dsa.h"

#include "bridge/core_bridge.h"

/* The ranges a set holds in the slot itself; past them it moves to the shared pool. */
#define FN_SLOT_INLINE_RANGES 16

/*
 * One of a slot's two sets of DirtyTimeWindows (sorted, non-overlapping [start, end)
 * ranges): in the slot while it fits in FN_SLOT_INLINE_RANGES, else in the pool,
 * grown by doubling up to flownode.dirty_ranges_per_flow. Only the functions below
 * touch `pooled` and `capacity`; a view of the ranges is valid until the slot's
 * lock is released.
 */
typedef struct FnSlotRanges {
	uint32 count;
	uint32 capacity;    /* of where the ranges are now */
	dsa_pointer pooled; /* InvalidDsaPointer: in inline_ranges */
	FnTimeRange inline_ranges[FN_SLOT_INLINE_RANGES];
} FnSlotRanges;

/* the pool the sets grow into: its size, and its start with shared memory's */
extern Size fn_ranges_pool_size(void);
extern void fn_ranges_pool_shmem_startup(int tranche_id);

/* The view callers use, with room for `adding` more ranges if the pool has it
 * (the set may move: exclusive lock); 0 only looks. Never fails. */
extern FnDirtySet fn_ranges_view(FnSlotRanges *s, uint32 adding);
/* Emptied, back in the slot (a claim, a free). */
extern void fn_ranges_clear(FnSlotRanges *s);
/* Back in the slot if it fits there, giving the pool its memory back. */
extern void fn_ranges_settle(FnSlotRanges *s);

#endif
