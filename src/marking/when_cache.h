/*
 * when_cache.h: the marking triggers' WHEN clauses, parsed and planned once per
 * backend and handed to the executor at statement start (an ExecutorStart hook).
 */
#ifndef FLOWNODE_WHEN_CACHE_H
#define FLOWNODE_WHEN_CACHE_H

#include "postgres.h"

extern void fn_when_cache_init(void);

#endif
