/*
 * pool_policy.h: how the pool's workers share the flows (docs/internals.md §6):
 * which flows a worker adopts, when it asks for another worker of its database,
 * and when it leaves the pool so that another database gets a worker.
 */
#ifndef FLOWNODE_POOL_POLICY_H
#define FLOWNODE_POOL_POLICY_H

#include "postgres.h"

#include "datatype/timestamp.h"

/* flows a worker adopts in one turn, before it serves the others again */
#define FN_ADOPT_PER_TURN 32
/* a worker in one flow's turn longer than this is stuck: its other flows that are
 * due are handed to another worker. An ordinary refresh takes less (the adaptive
 * row budget halves after a refresh slower than a second: core/task_state.hpp). */
#define FN_TURN_STUCK_USEC (1 * USECS_PER_SEC)
/* after a flow could not be adopted (not bound yet, an ERROR), the next try */
#define FN_ADOPT_RETRY_USEC (10 * USECS_PER_SEC)

typedef struct FnPoolPlan {
	bool leave; /* hand every flow back and exit */
	int limit;  /* adopt flows of the database while holding fewer than this */
	int shed;   /* flows to hand back now, to a worker just registered */
} FnPoolPlan;

/* The plan of the worker of pool entry `index`, which holds `held` flows; it may
 * register another worker of its database first (fn_pool_grow). */
extern FnPoolPlan fn_pool_plan(int index, int held);

#endif
