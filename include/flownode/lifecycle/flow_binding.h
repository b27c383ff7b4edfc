/*
 * flow_binding.h: flows a restore brought back, bound to this database's tables
 * (docs/internals.md §9): their time column found again, their triggers created,
 * their worker started at commit.
 */
#ifndef FLOWNODE_FLOW_BINDING_H
#define FLOWNODE_FLOW_BINDING_H

#include "postgres.h"

#include "registry/flow_registry.h"

/*
 * Binds a restored flow in the current transaction: ERROR, naming the problem,
 * when its query no longer reads its source or its sink does not fit it (checked
 * with the current user's privileges). The source is locked against writes to the
 * end of the transaction; the worker starts at commit and reloads the flow's
 * pending windows. Nothing is recomputed: a restore's sink and record are those of
 * one snapshot, in which every window not in the record was exact; except a flow of
 * one row, whose one window is recorded as pending (the restore may load its sink
 * and source before or after the binding), and a sink found empty over a source with
 * rows (its rows were left out of the dump), whose windows are.
 */
extern void fn_bind_flow(TaskConfig *cfg);

/*
 * The flow's dimensions (FlowDimension list, query/flow_joins.h) recorded in place of
 * those it had, and the triggers of both kept to what the flows need: at a binding
 * (a dump keeps no row of flownode.flow_dimension, its attribute numbers being the
 * old database's, and pg_upgrade keeps none of the triggers), at create_flow, and
 * after CREATE OR REPLACE VIEW of a view the flow joins (utility_hook.c).
 */
extern void fn_rebind_dimensions(int64 flow_id, List *dimensions);

/* How fn_try_bind_flow binds: flags. */
#define FN_BIND_NOWAIT 0x01 /* takes each lock only if it is free now */
#define FN_BIND_UPGRADED                                                                                     \
	0x02                        /* a flow pg_upgrade brought over: binds it only while it is                 \
	                             * one, records nothing, checks as the flow's owner */
#define FN_BIND_AWAITS_KEY 0x04 /* a failure for a key a restore builds later is DEBUG1 */

typedef enum FnBindResult {
	FN_BIND_DONE,   /* bound, or nothing to bind (bound already, gone) */
	FN_BIND_BUSY,   /* FN_BIND_NOWAIT: a lock was not free; nothing done */
	FN_BIND_FAILED, /* an error, reported as a WARNING (or DEBUG1); nothing done */
	FN_BIND_UNBOUND /* FN_BIND_UPGRADED: a subscription writes its tables, so it was
	                 * unbound for good (a WARNING said why): refresh_flow binds it */
} FnBindResult;

/* fn_bind_flow inside a subtransaction: never fails the caller's command. */
extern FnBindResult fn_try_bind_flow(TaskConfig *cfg, int flags);

/*
 * The restored flows that do not fit their tables yet and whose sink or source is
 * relid or a table above it: called before a command that builds an index on relid or
 * makes one valid (the post-data section of a restore builds the keys after every
 * table's rows): the sink's unique key, or the source's primary key that a flow
 * without aggregation is keyed by (over a partitioned source, valid once the last
 * partition's index is attached). fn_bind_restored_flows, after the command, binds
 * those that the command made fit. Never fails the command: a flow that still waits
 * for a key is left for a later command, anything else is a WARNING and the flow
 * stays 'restored' until refresh_flow binds it. A flow that fitted before (a
 * data-only restore into a schema-only one) is never bound this way: its source may
 * have been written since, unmarked, and refresh_flow repairs that.
 */
extern List *fn_restored_flows_awaiting_key(Oid relid);
extern void fn_bind_restored_flows(List *flows);

/*
 * After a COPY FROM into relid (how pg_restore and a plain dump load every table's
 * rows, the catalog's among them): a COPY into flownode.flow binds its restored
 * flows of one row, whose sinks have no key for the restore to build (not with
 * --disable-triggers: the sources' rows may then come unmarked); a COPY into the
 * sink of a bound flow of one row marks its window. Never fails the COPY over a
 * flow: a flow that cannot be bound is a WARNING and stays 'restored'.
 */
extern void fn_after_copy_from(Oid relid);

/* After ALTER EXTENSION flownode UPDATE: the sources of the bound flows get the
 * triggers of the updated version (as a fresh install's flows have them: the key
 * triggers, with flownode.key_marks_per_window above 0 in the updating session),
 * and the bound flows without a worker get one at commit (a library newer than the
 * database's objects started none). */
extern void fn_after_extension_update(void);

#endif
