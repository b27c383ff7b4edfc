/*
 * slot_ranges.c: where a slot's dirty and durable sets live. Each starts in the
 * slot itself (FN_SLOT_INLINE_RANGES ranges) and, when a caller is about to add
 * more than fit, moves to a pool shared by every slot, doubling up to
 * flownode.dirty_ranges_per_flow; it moves back into the slot when it fits there
 * again at the end of a take, and is freed with the slot. So the memory fixed at
 * server start is the slots' headers plus the pool (flownode.dirty_ranges_memory),
 * not max_flows times the cap (docs/internals.md §6, "The slot and its locks").
 *
 * The pool is a DSA area made in place in the main shared memory and limited to
 * it: it never creates or maps a DSM segment, so no call of it here can fail but
 * by returning InvalidDsaPointer (DSA_ALLOC_NO_OOM), and writers call it at COMMIT
 * under a slot's lock, where an ERROR would be a PANIC. A set that cannot grow keeps
 * its capacity and coalesces its nearest ranges, as every set did before (the
 * core's DirtyTimeWindows): never a lost range.
 */
#include "flownode.h"

#include "shmem/slot_ranges.h"

#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/memutils.h"

#define FN_POOL_NAME "flownode dirty sets"
/* an automatic pool covers every flow's two sets at their cap, up to this */
#define FN_POOL_AUTO_MAX ((Size)64 * 1024 * 1024)

static dsa_area *pool = NULL; /* NULL: no pool, every set stays in its slot */

static uint32 inline_capacity(void) {
	return (uint32)Min(FN_SLOT_INLINE_RANGES, fn_dirty_ranges_per_flow);
}

/* flownode.dirty_ranges_memory, or (-1) enough for every flow's two sets at the cap
 * with an eighth for the allocator's own pages, up to FN_POOL_AUTO_MAX; 0 when too
 * small for a DSA area. */
Size fn_ranges_pool_size(void) {
	Size size;

	if (fn_dirty_ranges_memory_kb >= 0)
		size = (Size)fn_dirty_ranges_memory_kb * 1024;
	else {
		Size per_flow = 2 * sizeof(FnTimeRange) * (Size)(fn_dirty_ranges_per_flow - (int)inline_capacity());

		size = Min(mul_size(mul_size(per_flow, fn_max_flows), 9) / 8, FN_POOL_AUTO_MAX);
	}
	return size < dsa_minimum_size() ? 0 : size;
}

/*
 * At shared memory's start (the postmaster, or each backend where backends do not
 * inherit it): the area made in place, pinned and held to its place (no DSM
 * segment ever), its locks in flownode's tranche. A forked backend inherits the
 * postmaster's dsa_area (in TopMemoryContext) and the one segment it maps.
 */
void fn_ranges_pool_shmem_startup(int tranche_id) {
	Size size = fn_ranges_pool_size();
	MemoryContext old;
	void *place;
	bool found;

	if (pool != NULL) /* the postmaster's, of the shared memory a crash replaced */
		dsa_detach(pool);
	pool = NULL;
	if (size == 0)
		return;
	place = ShmemInitStruct(FN_POOL_NAME, size, &found);
	old = MemoryContextSwitchTo(TopMemoryContext);
	if (!found) {
		pool = dsa_create_in_place(place, size, tranche_id, NULL);
		dsa_pin(pool);
		dsa_set_size_limit(pool, size);
	} else {
		pool = dsa_attach_in_place(place, NULL);
		on_shmem_exit(dsa_on_shmem_exit_release_in_place, PointerGetDatum(place));
	}
	MemoryContextSwitchTo(old);
}

static FnTimeRange *ranges_of(FnSlotRanges *s) {
	return DsaPointerIsValid(s->pooled) ? dsa_get_address(pool, s->pooled) : s->inline_ranges;
}

/* The set moved to `capacity` ranges (in the slot when they fit there): false,
 * and the set untouched, when the pool has no room. */
static bool move_set(FnSlotRanges *s, uint32 capacity) {
	dsa_pointer to = InvalidDsaPointer;
	FnTimeRange *dest = s->inline_ranges;

	Assert(s->count <= capacity);
	if (capacity > inline_capacity()) {
		if (pool == NULL)
			return false;
		to = dsa_allocate_extended(pool, sizeof(FnTimeRange) * (Size)capacity, DSA_ALLOC_NO_OOM);
		if (!DsaPointerIsValid(to))
			return false;
		dest = dsa_get_address(pool, to);
	} else
		capacity = inline_capacity();
	memmove(dest, ranges_of(s), sizeof(FnTimeRange) * s->count);
	if (DsaPointerIsValid(s->pooled))
		dsa_free(pool, s->pooled);
	s->pooled = to;
	s->capacity = capacity;
	return true;
}

/*
 * Room for `adding` more ranges, if the pool has it: the capacity doubles until
 * they fit, up to flownode.dirty_ranges_per_flow; when the pool cannot give that,
 * just what they need. Without room the set keeps its capacity (the core then
 * coalesces).
 */
static void reserve(FnSlotRanges *s, uint32 adding) {
	uint64 need = (uint64)s->count + adding;
	uint32 most = (uint32)fn_dirty_ranges_per_flow;
	uint32 grown = Max(s->capacity, 1);

	if (need <= s->capacity || s->capacity >= most)
		return;
	while (grown < need && grown < most)
		grown = (uint32)Min((uint64)grown * 2, (uint64)most);
	if (!move_set(s, grown) && need < grown)
		(void)move_set(s, (uint32)need);
}

/*
 * The view callers use (core_bridge.h), valid until the slot's lock is released:
 * a set moves when it grows or settles, so take the view again under each hold.
 * `adding`: ranges about to go in (a subtraction that may split a range counts
 * one).
 */
FnDirtySet fn_ranges_view(FnSlotRanges *s, uint32 adding) {
	FnDirtySet v;

	if (adding > 0)
		reserve(s, adding);
	v.ranges = ranges_of(s);
	v.count = &s->count;
	v.capacity = s->capacity;
	return v;
}

void fn_ranges_clear(FnSlotRanges *s) {
	if (pool != NULL && DsaPointerIsValid(s->pooled))
		dsa_free(pool, s->pooled);
	s->pooled = InvalidDsaPointer;
	s->count = 0;
	s->capacity = inline_capacity();
}

/* At the end of every take, when the worker has just emptied the set or most of it. */
void fn_ranges_settle(FnSlotRanges *s) {
	if (DsaPointerIsValid(s->pooled) && s->count <= inline_capacity())
		(void)move_set(s, inline_capacity());
}
