/*
 * pool_policy.c: how the pool's workers share the flows (pool_policy.h). Each
 * worker decides for itself, once a second or when a request wakes it, from the
 * flows in the slots (shmem/flow_slots.h: fn_slots_census) and the pool's entries
 * (shmem/pool.h):
 *
 * - A database's share of the pool is the pool's size (fn_pool_size: flownode.max_workers
 *   within the room PostgreSQL's own workers keep) split evenly over the databases holding flows (the
 * remainder to the lowest oids), at least one; it wants min(its flows, its share) workers, so that while
 * there are no more flows than workers each flow has a worker of its own.
 * - A worker whose database has flows without a worker, or which holds more than
 *   its part (their number over the workers the database wants, rounded up),
 *   registers more workers of it while the database has fewer than it wants and
 *   the pool has room, and hands what it holds beyond its part to them; each takes
 *   its part of the flows, and when no more workers can come, the ones there take
 *   them all.
 * - When the pool is full and another database has flows without a worker and
 *   fewer workers than its share, the least loaded worker of a database holding
 *   more than its share leaves (its flows go to its database's other workers); with
 *   more databases than workers, a worker that has served a while leaves, so that
 *   the databases take turns.
 * - A worker holding no flow, with none of its database's to adopt, or one beyond a
 *   lowered max_workers, leaves.
 * - A worker stuck in one flow's turn (a long refresh, a wait on a lock: its pool
 *   entry's busy_since) for longer than FN_TURN_STUCK_USEC holds its other flows
 *   past their schedule: another worker of the database lets go of those that are
 *   due (or that a flush waits for) and adopts them, beyond its part, at its next
 *   look (a second at most). When the database has no other worker, the launcher
 *   does it and asks for a new one while the pool has room. With a single worker
 *   (max_workers = 1, or a full pool of other databases' workers) the flows wait
 *   for the slow turn to end: at most the flow's statement timeout.
 */
#include "flownode.h"

#include "worker/pool_policy.h"

#include <limits.h>

#include "miscadmin.h"
#include "shmem/flow_slots.h"
#include "shmem/pool.h"
#include "utils/timestamp.h"
#include "worker/launcher.h"

/* with more databases than workers, a worker serves its database this long at least */
#define FN_TENURE_USEC (60 * USECS_PER_SEC)

/* The database's share of the pool (see the top of the file). */
static int fair_share(const FnDbFlows *dbs, int ndb, Oid dboid) {
	int size = fn_pool_size();
	int rank = 0;

	if (ndb == 0)
		return size;
	for (int i = 0; i < ndb; i++)
		rank += dbs[i].dboid < dboid;
	return Max(1, size / ndb + (rank < size % ndb ? 1 : 0));
}

/* Whether another database has flows without a worker and fewer workers than its
 * share. */
static bool other_waits(const FnDbFlows *dbs, int ndb) {
	for (int i = 0; i < ndb; i++)
		if (dbs[i].dboid != MyDatabaseId && dbs[i].unserved > 0 &&
		    fn_pool_workers_of(dbs[i].dboid) < fair_share(dbs, ndb, dbs[i].dboid))
			return true;
	return false;
}

/* Whether the worker leaves the pool (see the top of the file). */
static bool should_leave(const FnPoolCensus *pc, const FnDbFlows *dbs, int ndb, const FnDbFlows *mine,
                         int held, TimestampTz now) {
	/* nothing to serve: the commit that asked for it noted its flow on the slot
	 * before registering it, so another worker was quicker, or the flow is gone */
	if (held == 0 && mine->unserved == 0)
		return true;
	if (pc->total > fn_pool_size() && pc->last)
		return true;
	if (pc->total < fn_pool_size() || !pc->least_of_db || !other_waits(dbs, ndb))
		return false;
	return pc->of_db > fair_share(dbs, ndb, MyDatabaseId) ||
	       (ndb > fn_pool_size() && now - pc->since > FN_TENURE_USEC);
}

/* The due flows of the database's stuck workers let go of, for this worker to adopt
 * (see the top of the file). How many workers are stuck. */
static int hand_over_stuck(TimestampTz now) {
	pid_t stuck[64];
	int nstuck = fn_pool_stuck(MyDatabaseId, now - FN_TURN_STUCK_USEC, stuck, lengthof(stuck));

	if (nstuck > 0)
		(void)fn_slots_hand_over(MyDatabaseId, stuck, nstuck, now);
	return nstuck;
}

FnPoolPlan fn_pool_plan(int index, int held) {
	FnPoolPlan plan = {false, 0, 0};
	TimestampTz now = GetCurrentTimestamp();
	int nstuck = hand_over_stuck(now);
	int max = Max(fn_slot_count(), 1);
	FnDbFlows *dbs = palloc(sizeof(FnDbFlows) * max);
	int ndb = fn_slots_census(dbs, max, now);
	FnDbFlows mine = {MyDatabaseId, 0, 0};
	FnPoolCensus pc;

	for (int i = 0; i < ndb; i++)
		if (dbs[i].dboid == MyDatabaseId)
			mine = dbs[i];
	fn_pool_census(index, &pc);
	plan.leave = should_leave(&pc, dbs, ndb, &mine, held, now);
	if (!plan.leave && mine.flows > 0) {
		int wanted = Min(mine.flows, fair_share(dbs, ndb, MyDatabaseId));
		int part = (mine.flows + wanted - 1) / wanted;
		int workers = pc.of_db;
		int grew = 0;

		while (workers < wanted && (mine.unserved > 0 || held > part) && fn_pool_grow(MyDatabaseId, wanted)) {
			workers++;
			grew++;
		}
		/* the database has the workers it wants (some starting): each takes its part;
		 * when no more can come, the ones there take every flow */
		plan.limit = workers >= wanted && nstuck == 0 ? part : INT_MAX;
		plan.shed = grew > 0 ? Max(0, held - part) : 0;
	}
	pfree(dbs);
	return plan;
}
