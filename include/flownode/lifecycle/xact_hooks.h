/*
 * xact_hooks.h: what happens when a transaction ends: marks recorded at PRE_COMMIT
 * and published at COMMIT (commit_marks.h), and the workers of flows created or
 * dropped in it started or stopped only once it has committed.
 */
#ifndef FLOWNODE_XACT_HOOKS_H
#define FLOWNODE_XACT_HOOKS_H

#include "postgres.h"

extern void fn_xact_hooks_init(void);

/* At commit: start the flow's worker (create_flow); an abort frees the slot the
 * flow reserved. */
extern void fn_on_commit_start_worker(int64 flow_id, Oid owner);
/* At commit: start the worker of a flow that had one before (its slot, which may
 * hold marks, stays on abort). */
extern void fn_on_commit_restart_worker(int64 flow_id, Oid owner);
/* At commit: stop the flow's worker and free its slot (drop_flow). */
extern void fn_on_commit_drop_flow(int64 flow_id);
/* At commit: stop every flow of the database's catalog (DROP EXTENSION). */
extern void fn_on_commit_stop_all(Oid catalog_relid);
/* At commit: every flow of the catalog with a slot reloads its durable record (rows
 * a restore put there after its worker started). */
extern void fn_on_commit_reload_records(Oid catalog_relid);
/* At commit: the flow's settings changed (alter_flow, pause_flow, resume_flow), and
 * `paused` is its pause state now: its worker reads them again. */
extern void fn_on_commit_config_changed(int64 flow_id, bool paused);
/* Whether the current transaction created the flow, or changed its settings (and
 * has not rolled that back). */
extern bool fn_flow_created_here(int64 flow_id);
extern bool fn_flow_changed_here(int64 flow_id);
/* At PRE_COMMIT: remove the source's triggers if no flow reads it any more. */
extern void fn_on_pre_commit_cleanup_triggers(Oid source_relid);
/* At PRE_COMMIT: mark every window the flows over the table may hold, if it is still
 * there (a partition of it was dropped without its rows being read). */
extern void fn_on_pre_commit_mark_all(Oid relid);

#endif
