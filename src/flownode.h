/*
 * flownode.h: what is global to the whole extension: its settings (GUCs, defined in
 * flownode.c) and the names of its schema and catalog. Every module has its own
 * header for the rest (docs/internals.md §1 maps them).
 */
#ifndef FLOWNODE_H
#define FLOWNODE_H

#include "postgres.h"

#define FLOWNODE_SCHEMA "flownode"
#define FLOWNODE_CATALOG "flow"

/* ---- GUCs (flownode.c) ---- */
extern int fn_max_flows;
extern int fn_dirty_ranges_per_flow;
extern int fn_local_ranges_per_flow;
extern int fn_max_rows_per_refresh;
extern int fn_min_refresh_interval_ms;
extern int fn_max_backoff_ms;
extern int fn_statement_timeout_ms;
extern int fn_backfill_chunk_rows;
extern bool fn_launcher_enabled;

/* Defines them (from _PG_init); those read at server start only when preloaded. */
extern void fn_define_settings(bool preloaded);

#endif
