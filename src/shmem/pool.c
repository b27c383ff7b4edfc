/*
 * pool.c: the pool of flow workers in shared memory (pool.h): one entry per
 * worker, running or registered and not started yet, with its database and load.
 * There are max_worker_processes entries (no pool can be larger), of which
 * flownode.max_workers may be in use: the setting can change with a reload.
 */
#include "flownode.h"

#include "shmem/pool.h"

#include <signal.h>

#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "replication/logicallauncher.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#define FN_POOL_TRANCHE "flownode pool"

/* a registered worker that has not entered after this is taken as never started
 * (the postmaster could not fork it, or it failed before entering) */
#define FN_POOL_START_GRACE_USEC (10 * USECS_PER_SEC)

typedef struct PoolWorker {
	Oid dboid;         /* InvalidOid: the entry is free */
	pid_t pid;         /* 0: registered, not started yet */
	Latch *latch;      /* set to make it look for flows to adopt */
	bool wakeup;       /* a request asked it to look */
	TimestampTz since; /* registered at (pid 0), else started at */
	int nflows;
	TimestampTz busy_since; /* in one flow's turn since (0: between turns) */
} PoolWorker;

typedef struct FnPool {
	Oid dropping; /* DROP DATABASE in progress there: no worker starts for it */
	TimestampTz dropping_until;
	int n;
	PoolWorker w[FLEXIBLE_ARRAY_MEMBER];
} FnPool;

static FnPool *pool = NULL;
static LWLock *pool_lock = NULL;

static Size shmem_size(void) {
	return add_size(offsetof(FnPool, w), mul_size(sizeof(PoolWorker), max_worker_processes));
}

void fn_pool_shmem_request(void) {
	RequestAddinShmemSpace(shmem_size());
	RequestNamedLWLockTranche(FN_POOL_TRANCHE, 1);
}

void fn_pool_shmem_startup(void) {
	bool found;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	pool = ShmemInitStruct("flownode pool", shmem_size(), &found);
	pool_lock = &GetNamedLWLockTranche(FN_POOL_TRANCHE)->lock;
	if (!found) {
		pool->n = max_worker_processes;
		memset(pool->w, 0, sizeof(PoolWorker) * pool->n);
	}
	LWLockRelease(AddinShmemInitLock);
}

int fn_pool_reserved_for_others(void) {
	int replication = max_logical_replication_workers > 0 ? 1 + 1 : 0;

	return Min(max_parallel_workers, 2) + replication;
}

int fn_pool_size(void) {
	int room = max_worker_processes - FN_POOL_HELPERS - fn_pool_reserved_for_others();

	return Max(1, Min(fn_max_workers, room));
}

/* The pool's size now (fn_pool_size), within the entries there are. */
static int pool_cap(void) {
	return Min(fn_pool_size(), pool->n);
}

/* Entries in use; a registration that never entered is freed first. Pool lock held
 * exclusively. */
static int in_use_locked(TimestampTz now) {
	int used = 0;

	for (int i = 0; i < pool->n; i++) {
		PoolWorker *w = &pool->w[i];

		if (OidIsValid(w->dboid) && w->pid == 0 && now - w->since > FN_POOL_START_GRACE_USEC)
			w->dboid = InvalidOid;
		if (OidIsValid(w->dboid))
			used++;
	}
	return used;
}

/* A free entry claimed for a worker of the database, -1 if none or while the
 * database is being dropped (a worker would hold the drop up). Lock held. */
static int claim_locked(Oid dboid, TimestampTz now) {
	if (dboid == pool->dropping && now < pool->dropping_until)
		return -1;
	for (int i = 0; i < pool->n; i++) {
		PoolWorker *w = &pool->w[i];

		if (!OidIsValid(w->dboid)) {
			memset(w, 0, sizeof(*w));
			w->dboid = dboid;
			w->since = now;
			return i;
		}
	}
	return -1;
}

FnPoolAnswer fn_pool_claim(Oid dboid, bool own, int *index) {
	TimestampTz now = GetCurrentTimestamp();
	Latch *latches[8];
	int nlatches = 0;
	bool served = false;
	int used;

	*index = -1;
	LWLockAcquire(pool_lock, LW_EXCLUSIVE);
	used = in_use_locked(now);
	/* while the pool has room the flow gets a worker of its own, started at once as
	 * it always was (the database's workers may be busy refreshing); when another
	 * database waits for a worker, the last free entry is kept for it */
	if (used < pool_cap() - (own ? 0 : 1))
		*index = claim_locked(dboid, now);
	for (int i = 0; i < pool->n && *index < 0; i++) {
		PoolWorker *w = &pool->w[i];

		if (w->dboid != dboid)
			continue;
		served = true;
		w->wakeup = true;
		if (w->latch != NULL && nlatches < (int)lengthof(latches))
			latches[nlatches++] = w->latch;
	}
	if (!served && *index < 0 && used < pool_cap())
		*index = claim_locked(dboid, now);
	LWLockRelease(pool_lock);
	/* workers beyond the first eight look at their next round (a second at most) */
	for (int i = 0; i < nlatches; i++)
		SetLatch(latches[i]);
	return *index >= 0 ? FN_POOL_CLAIMED : (served ? FN_POOL_SERVED : FN_POOL_FULL);
}

int fn_pool_claim_another(Oid dboid, int wanted) {
	TimestampTz now = GetCurrentTimestamp();
	int of_db = 0;
	int index = -1;

	LWLockAcquire(pool_lock, LW_EXCLUSIVE);
	for (int i = 0; i < pool->n; i++)
		of_db += pool->w[i].dboid == dboid;
	if (of_db < wanted && in_use_locked(now) < pool_cap())
		index = claim_locked(dboid, now);
	LWLockRelease(pool_lock);
	return index;
}

void fn_pool_unclaim(int index) {
	LWLockAcquire(pool_lock, LW_EXCLUSIVE);
	if (pool->w[index].pid == 0)
		pool->w[index].dboid = InvalidOid;
	LWLockRelease(pool_lock);
}

int fn_pool_enter(int index, Oid dboid) {
	TimestampTz now = GetCurrentTimestamp();
	int used;

	LWLockAcquire(pool_lock, LW_EXCLUSIVE);
	used = in_use_locked(now);
	/* registered for us and not given away after the grace: ours; else a free one */
	if (index < 0 || index >= pool->n || pool->w[index].dboid != dboid || pool->w[index].pid != 0 ||
	    (dboid == pool->dropping && now < pool->dropping_until))
		index = used < pool_cap() ? claim_locked(dboid, now) : -1;
	if (index >= 0) {
		pool->w[index].pid = MyProcPid;
		pool->w[index].latch = MyLatch;
		pool->w[index].since = now;
		pool->w[index].wakeup = true;
	}
	LWLockRelease(pool_lock);
	return index;
}

void fn_pool_leave(int index) {
	Latch *latches[8];
	int nlatches = 0;
	Oid dboid;

	LWLockAcquire(pool_lock, LW_EXCLUSIVE);
	dboid = pool->w[index].dboid;
	memset(&pool->w[index], 0, sizeof(PoolWorker));
	for (int i = 0; i < pool->n; i++) {
		PoolWorker *w = &pool->w[i];

		if (OidIsValid(dboid) && w->dboid == dboid) {
			w->wakeup = true;
			if (w->latch != NULL && nlatches < (int)lengthof(latches))
				latches[nlatches++] = w->latch;
		}
	}
	LWLockRelease(pool_lock);
	for (int i = 0; i < nlatches; i++)
		SetLatch(latches[i]);
}

void fn_pool_note_load(int index, int nflows) {
	LWLockAcquire(pool_lock, LW_EXCLUSIVE);
	pool->w[index].nflows = nflows;
	LWLockRelease(pool_lock);
}

bool fn_pool_take_wakeup(int index) {
	bool wakeup;

	LWLockAcquire(pool_lock, LW_EXCLUSIVE);
	wakeup = pool->w[index].wakeup;
	pool->w[index].wakeup = false;
	LWLockRelease(pool_lock);
	return wakeup;
}

void fn_pool_census(int index, FnPoolCensus *out) {
	PoolWorker *me = &pool->w[index];

	memset(out, 0, sizeof(*out));
	out->least_of_db = true;
	LWLockAcquire(pool_lock, LW_SHARED);
	out->since = me->since;
	for (int i = 0; i < pool->n; i++) {
		PoolWorker *w = &pool->w[i];

		if (!OidIsValid(w->dboid))
			continue;
		out->total++;
		out->last = i == index;
		if (w->dboid != me->dboid)
			continue;
		out->of_db++;
		/* a starting worker holds nothing yet: it does not count as less loaded */
		if (i != index && w->pid != 0 && (w->nflows < me->nflows || (w->nflows == me->nflows && i > index)))
			out->least_of_db = false;
	}
	LWLockRelease(pool_lock);
}

int fn_pool_workers_of(Oid dboid) {
	int n = 0;

	LWLockAcquire(pool_lock, LW_SHARED);
	for (int i = 0; i < pool->n; i++)
		n += pool->w[i].dboid == dboid;
	LWLockRelease(pool_lock);
	return n;
}

void fn_pool_stop_database(Oid dboid, TimestampTz until) {
	LWLockAcquire(pool_lock, LW_EXCLUSIVE);
	pool->dropping = dboid;
	pool->dropping_until = until;
	for (int i = 0; i < pool->n; i++) {
		PoolWorker *w = &pool->w[i];

		if (w->dboid != dboid)
			continue;
		if (w->pid != 0)
			(void)kill(w->pid, SIGTERM);
		else
			w->dboid = InvalidOid; /* not started: it finds no entry and exits */
	}
	LWLockRelease(pool_lock);
}

void fn_pool_note_busy(int index, TimestampTz since) {
	LWLockAcquire(pool_lock, LW_EXCLUSIVE);
	pool->w[index].busy_since = since;
	LWLockRelease(pool_lock);
}

/* A running worker in one flow's turn since before `before`. Pool lock held. */
static bool stuck_locked(const PoolWorker *w, TimestampTz before) {
	return w->pid != 0 && w->busy_since != 0 && w->busy_since < before;
}

int fn_pool_stuck(Oid dboid, TimestampTz before, pid_t *pids, int max) {
	int n = 0;

	LWLockAcquire(pool_lock, LW_SHARED);
	for (int i = 0; i < pool->n && n < max; i++)
		if (pool->w[i].dboid == dboid && pool->w[i].pid != MyProcPid && stuck_locked(&pool->w[i], before))
			pids[n++] = pool->w[i].pid;
	LWLockRelease(pool_lock);
	return n;
}

/* Whether every worker of the database (the one at `first` among them) is stuck.
 * Pool lock held. */
static bool all_stuck_locked(int first, TimestampTz before) {
	Oid dboid = pool->w[first].dboid;

	for (int j = 0; j < pool->n; j++)
		if (pool->w[j].dboid == dboid && (j < first || !stuck_locked(&pool->w[j], before)))
			return false; /* a worker of it free, or the database counted at j already */
	return true;
}

int fn_pool_stranded(TimestampTz before, Oid *dbs, int max) {
	int used = 0;
	int n = 0;

	LWLockAcquire(pool_lock, LW_SHARED);
	for (int i = 0; i < pool->n; i++)
		used += OidIsValid(pool->w[i].dboid);
	for (int i = 0; i < pool->n && n < max && used < pool_cap(); i++)
		if (OidIsValid(pool->w[i].dboid) && all_stuck_locked(i, before))
			dbs[n++] = pool->w[i].dboid;
	LWLockRelease(pool_lock);
	return n;
}
