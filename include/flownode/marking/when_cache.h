/*
 * when_cache.h: the marking triggers' WHEN clauses, parsed and planned once per
 * backend and handed to the executor at statement start (from the ExecutorStart
 * hook, lifecycle/executor_hook.c).
 */
#ifndef FLOWNODE_WHEN_CACHE_H
#define FLOWNODE_WHEN_CACHE_H

#include "postgres.h"

#include "executor/execdesc.h"

extern void fn_when_cache_init(void);
/* After the executor started a statement: its result relations' marking triggers
 * get their compiled WHEN clauses. */
extern void fn_when_cache_prefill(QueryDesc *queryDesc, int eflags);

#endif
