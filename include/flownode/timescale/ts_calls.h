/*
 * ts_calls.h: TimescaleDB's function calls on a continuous aggregate, mapped onto its
 * flow (ts_calls.c): refresh_continuous_aggregate onto refresh_flow,
 * add_continuous_aggregate_policy and remove_continuous_aggregate_policy onto
 * alter_flow.
 */
#ifndef FLOWNODE_TS_CALLS_H
#define FLOWNODE_TS_CALLS_H

#include "postgres.h"

#include "nodes/parsenodes.h"
#include "registry/flow_registry.h"

/* How often a continuous aggregate without a time window is recomputed when no
 * policy says: such a flow needs an eval_interval, and TimescaleDB refreshes none
 * by itself. */
#define TS_WINDOWLESS_EVAL_INTERVAL "1 minute"

/* Runs the call (CALL's or the one of a SELECT), ERROR for any other function. */
extern void fn_ts_call(const char *statement, FuncCall *fc, bool is_call);

/* The flow whose sink is the relation; ERROR naming `shown` when there is none. */
extern TaskConfig *fn_ts_flow_of(Oid relid, const char *shown);

#endif
