/*
 * stored_query.h: a flow's stored query analysed again as it is now, and whether a
 * restored flow can be bound now (its query analyses and its sink fits it).
 */
#ifndef FLOWNODE_STORED_QUERY_H
#define FLOWNODE_STORED_QUERY_H

#include "postgres.h"

#include "query/flow_query.h"
#include "registry/flow_registry.h"

/* The flow's stored query, analysed as a refresh would (pinned settings); ERROR if it
 * no longer reads the flow's source. */
extern FlowQuery *fn_analyse_stored(TaskConfig *cfg);
/* The same, in a subtransaction: NULL instead of an ERROR, or (check_sink) when the
 * sink does not fit the query now (fn_check_sink). */
extern FlowQuery *fn_analysed_or_null(TaskConfig *cfg, bool check_sink);
/* A flow other than `except` that reads relid (its source, or a table above or under
 * it), that a restore brought back and has not bound, and that a restore may still
 * bind without a recompute: its sink does not fit its query yet (it awaits the key
 * the restore builds, flow_binding.c). pg_upgrade's flows are not counted (a write
 * binds those, upgrade_binding.c), nor flows that only refresh_flow can bind, which
 * recomputes them. NULL: none. */
extern TaskConfig *fn_unbound_reader_awaiting_key(Oid relid, int64 except);

#endif
