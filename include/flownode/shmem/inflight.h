/*
 * inflight.h: committing writers in flight. A writer is registered from PRE_COMMIT
 * until it has published its marks, so that flush_flow (and a refresh that clears
 * windows from the durable set) can wait for commits it must see
 * (docs/internals.md §5).
 */
#ifndef FLOWNODE_INFLIGHT_H
#define FLOWNODE_INFLIGHT_H

#include "postgres.h"

extern void fn_inflight_shmem_request(void);
extern void fn_inflight_shmem_startup(void);

extern void fn_inflight_begin(void);
extern void fn_inflight_end(void);
extern void fn_inflight_wait_all(void);

#endif
