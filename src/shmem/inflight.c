/*
 * inflight.c: committing writers in flight (docs/internals.md §5). A transaction
 * becomes visible to others slightly before its XACT_EVENT_COMMIT callback publishes
 * its marks, so each committing writer registers here at PRE_COMMIT (a sequence
 * number in its PGPROC's entry) and unregisters once published; a waiter snapshots
 * the entries and waits until each one it saw has changed.
 */
#include "flownode.h"

#include "shmem/flow_slots.h"
#include "shmem/inflight.h"

#include "miscadmin.h"
#include "access/twophase.h"
#include "storage/ipc.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"

typedef struct FnInflight {
	int n;
	slock_t mutex;
	uint64 seq;
	uint64 entries[FLEXIBLE_ARRAY_MEMBER]; /* by pgprocno; 0: not in flight */
} FnInflight;

static FnInflight *fn_inflight = NULL;

static int inflight_count(void) {
	return MaxBackends + NUM_AUXILIARY_PROCS + max_prepared_xacts;
}

static Size shmem_size(void) {
	return add_size(offsetof(FnInflight, entries), mul_size(sizeof(uint64), inflight_count()));
}

void fn_inflight_shmem_request(void) {
	RequestAddinShmemSpace(shmem_size());
}

void fn_inflight_shmem_startup(void) {
	bool found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	fn_inflight = ShmemInitStruct("flownode inflight", shmem_size(), &found);
	if (!found) {
		fn_inflight->n = inflight_count();
		SpinLockInit(&fn_inflight->mutex);
		fn_inflight->seq = 0;
		memset(fn_inflight->entries, 0, sizeof(uint64) * fn_inflight->n);
	}
	LWLockRelease(AddinShmemInitLock);
}

static bool inflight_registered = false;

static void inflight_exit(int code pg_attribute_unused(), Datum arg pg_attribute_unused()) {
	fn_inflight_end();
}

void fn_inflight_begin(void) {
	uint64 seq;

	fn_check_preloaded();
	if (!inflight_registered) {
		before_shmem_exit(inflight_exit, 0);
		inflight_registered = true;
	}
	SpinLockAcquire(&fn_inflight->mutex);
	seq = ++fn_inflight->seq;
	SpinLockRelease(&fn_inflight->mutex);
	fn_inflight->entries[fn_my_procno()] = seq;
	pg_memory_barrier();
}

void fn_inflight_end(void) {
	if (fn_inflight == NULL || MyProc == NULL)
		return;
	pg_memory_barrier();
	fn_inflight->entries[fn_my_procno()] = 0;
}

/*
 * Waits until every writer that was between PRE_COMMIT and publishing when we were
 * called has published: a transaction visible as committed to the caller may not
 * have published its marks yet, and flush_flow must include them.
 */
void fn_inflight_wait_all(void) {
	int n = fn_inflight->n;
	uint64 *seen = palloc(sizeof(uint64) * n);

	pg_memory_barrier();
	for (int i = 0; i < n; i++)
		seen[i] = fn_inflight->entries[i];
	for (int i = 0; i < n; i++) {
		if (i == fn_my_procno())
			continue;
		while (seen[i] != 0 && fn_inflight->entries[i] == seen[i]) {
			CHECK_FOR_INTERRUPTS();
			pg_usleep(200L);
			pg_memory_barrier();
		}
	}
	pfree(seen);
}
