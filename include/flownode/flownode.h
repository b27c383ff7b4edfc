/*
 * flownode.h: what is global to the whole extension: its settings (GUCs, defined in
 * flownode.c) and the names of its schema and catalog. Every module has its own
 * header for the rest (docs/internals.md §1 maps them).
 */
#ifndef FLOWNODE_H
#define FLOWNODE_H

#include "postgres.h"

#include "compat/pg_compat.h"

#define FLOWNODE_SCHEMA "flownode"
#define FLOWNODE_CATALOG "flow"
/* the flows bound to this database's tables (their triggers exist here); not dumped */
#define FLOWNODE_BINDING "flow_binding"

/* The version of the extension's SQL objects this library is built for (the control
 * file's default_version): the library checks it against the database's
 * (registry/flow_registry.c, fn_catalog_relid). */
#define FLOWNODE_VERSION "0.4"
/* The versions before it whose catalog is this one's: their objects differ in
 * privileges (0.3 revoked the right to create flows from PUBLIC), in flow_status's
 * columns (the library keeps their function, api/flow_status.c) and the run history
 * and time_bucket (0.4; no run history is written without its table,
 * record/run_history.c, and the catalog refuses time_bucket windows until the update). The library uses
 * them as its own until ALTER EXTENSION flownode UPDATE. */
#define FLOWNODE_PREVIOUS_VERSION "0.3"
#define FLOWNODE_PREVIOUS2_VERSION "0.2"
/* The one older version whose catalog the library still reads (docs/operations.md, "Backup and restore") */
#define FLOWNODE_OLD_VERSION "0.1"

/* ---- GUCs (flownode.c) ---- */
extern int fn_max_flows;
extern int fn_max_workers;
extern int fn_dirty_ranges_per_flow;
extern int fn_dirty_ranges_memory_kb;
extern int fn_local_ranges_per_flow;
extern int fn_key_marks_per_window;
extern int fn_max_rows_per_refresh;
extern int fn_min_refresh_interval_ms;
extern int fn_max_backoff_ms;
extern int fn_statement_timeout_ms;
extern int fn_backfill_chunk_rows;
extern int fn_run_history_per_flow;
extern bool fn_launcher_enabled;
extern bool fn_fold_open_window;
extern bool fn_verify_folds;
/* flows a database, and a role in a database, may hold (-1: no cap); checked by
 * every call that creates a flow (api/flow_caps.c) */
extern int fn_max_flows_per_database;
extern int fn_max_flows_per_role;

/* This process is a flow worker (set by flownode_flow_main): the sink rows its
 * refreshes write are an upstream flow's output, so the commit that marks them
 * wakes the flows downstream (commit_marks.c). */
extern bool fn_is_flow_worker;

/* Defines them (from _PG_init); those read at server start only when preloaded. */
extern void fn_define_settings(bool preloaded);

#endif
