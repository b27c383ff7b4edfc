/*
 * key_refresh.h: the refresh of a flow's key marks (docs/internals.md §6,
 * *Refreshing key marks*).
 */
#ifndef FLOWNODE_KEY_REFRESH_H
#define FLOWNODE_KEY_REFRESH_H

#include "postgres.h"

#include "executor/spi.h"
#include "utils/snapshot.h"

#include "core/time_range.h"
#include "query/flow_query.h"
#include "refresh/refresh_sql.h"
#include "registry/flow_registry.h"

/* What a refresh of key marks counts: the windows it read, and those of them outside
 * `done` (a flush's: the windows it refreshed whole already; flush_flow returns
 * each window it refreshed once). */
typedef struct FnKeyCount {
	const FnTimeRange *done; /* sorted, disjoint; NULL: none */
	uint32 ndone;
	int64 read;
	int64 fresh;
	FnTimeRange hull; /* from the first window read to the end of the last */
} FnKeyCount;

/*
 * In the refresh's transaction and snapshot (the source locked, the settings pinned,
 * as the flow's owner: refresh_exec.c): the key marks the snapshot sees (those of
 * windows before expired_before dropped unread), their groups recomputed (upserted,
 * or deleted when they vanished) and the marks deleted. `shape` says how each side
 * reads the windows. Returns the sink rows written; *count gets the windows read.
 * The statement's plan is kept in *kept (built for *kept_shape; another shape
 * replaces it): a late row's refresh of one group costs no parse and plan.
 */
extern int64 fn_key_refresh(TaskConfig *cfg, FlowQuery *fq, const char *sink, FnRefreshShape shape,
                            Snapshot snap, int64 expired_before, FnKeyCount *count, SPIPlanPtr *kept,
                            FnRefreshShape *kept_shape);

#endif
