/*
 * pool.h: the pool of flow workers (docs/internals.md §6). At most
 * flownode.max_workers of them run in the whole server; each is connected to one
 * database and serves one or many of its flows. The entries here say which
 * database each worker serves and how many flows it holds; which flows it holds is
 * in the flows' slots (worker_pid, flow_slots.h).
 *
 * LOCKING: one LWLock (the pool lock) guards every entry (database, pid, latch,
 * wake-up flag, load, busy_since). It is never held with a slot's lock or the
 * registry lock, and nothing under it may fail: a writer's COMMIT asks for a worker
 * (fn_pool_claim). What an entry says of a worker's turn (busy_since) is advice
 * only: whether a flow may change hands is decided under its slot's lock
 * (flow_slots.h, "Who runs a flow").
 */
#ifndef FLOWNODE_POOL_H
#define FLOWNODE_POOL_H

#include "postgres.h"

#include "datatype/timestamp.h"

/* flownode's processes beside the pool: the launcher and one database starter at a
 * time */
#define FN_POOL_HELPERS 2

/* The background worker processes flownode leaves to PostgreSQL's own: a parallel
 * query of two workers (within max_parallel_workers), and logical replication's
 * launcher and one apply worker when max_logical_replication_workers allows them. */
extern int fn_pool_reserved_for_others(void);
/* The pool's size: flownode.max_workers, within what max_worker_processes holds
 * beside FN_POOL_HELPERS and fn_pool_reserved_for_others(), at least one worker
 * (flows must run). Read again at every decision: max_workers and
 * max_parallel_workers are reloadable. */
extern int fn_pool_size(void);

extern void fn_pool_shmem_request(void);
extern void fn_pool_shmem_startup(void);

/* What asking for a worker of a database came to. */
typedef enum FnPoolAnswer {
	FN_POOL_SERVED,  /* a worker of the database runs or starts: it adopts the flow */
	FN_POOL_CLAIMED, /* an entry was claimed for a new worker: the caller registers it */
	FN_POOL_FULL,    /* flownode.max_workers run, none for the database (it waits) */
	FN_POOL_NO_SLOT, /* PostgreSQL had no background worker slot free for a new one */
} FnPoolAnswer;

/* A flow of the database needs a worker: an entry is claimed (*index) for a new one
 * while the pool has room (without `own`, another database waits: its last free
 * entry only when the database has no worker), else the database's workers are
 * told to adopt it. Never fails (COMMIT calls it). */
extern FnPoolAnswer fn_pool_claim(Oid dboid, bool own, int *index);
/* An entry for one more worker of the database, while it has fewer than `wanted`
 * and the pool has room (a worker asks, when its database's flows are more than it
 * should serve alone); -1: none. */
extern int fn_pool_claim_another(Oid dboid, int wanted);
/* The registration of the entry's worker failed: the entry is free again. */
extern void fn_pool_unclaim(int index);

/* ---- the pool worker's own entry ---- */

/* Claims entry `index` registered for the database (or any free one while the pool
 * has room); -1 if the pool is full. */
extern int fn_pool_enter(int index, Oid dboid);
/* Frees the entry; the database's other workers are told to adopt its flows. */
extern void fn_pool_leave(int index);
/* The flows the worker holds now (the others balance against it). */
extern void fn_pool_note_load(int index, int nflows);
/* Whether a request asked the worker to look for flows to adopt (and clears it). */
extern bool fn_pool_take_wakeup(int index);
/* The worker is in one flow's turn since `since` (0: between turns). */
extern void fn_pool_note_busy(int index, TimestampTz since);

/* ---- workers stuck in one flow's turn (a long refresh, a lock wait) ---- */

/* The other running workers of the database in one flow's turn since before
 * `before`, at most `max` of them (their pids). */
extern int fn_pool_stuck(Oid dboid, TimestampTz before, pid_t *pids, int max);
/* The databases (at most `max`) whose every worker is stuck so, while the pool has
 * room for one more worker: the launcher asks for one. */
extern int fn_pool_stranded(TimestampTz before, Oid *dbs, int max);

/* What a worker sees of the pool when it decides to adopt, grow or leave. */
typedef struct FnPoolCensus {
	int total;        /* entries in use (running or starting) */
	int of_db;        /* of them, the worker's database's */
	bool least_of_db; /* the worker holds the fewest flows of its database's (ties: the last) */
	bool last;        /* the worker's entry is the last one in use */
	TimestampTz since;
} FnPoolCensus;

extern void fn_pool_census(int index, FnPoolCensus *out);
/* DROP DATABASE: the database's workers are told to exit (those holding no flow
 * too: they are connected to it), and none starts for it until `until`. */
extern void fn_pool_stop_database(Oid dboid, TimestampTz until);
/* The workers serving the database (running or starting). */
extern int fn_pool_workers_of(Oid dboid);

#endif
