/*
 * ts_dialect.h: how the query of TimescaleDB's CREATE MATERIALIZED VIEW is read
 * (ts_dialect.c): time_bucket as written, and the view's column names.
 */
#ifndef FLOWNODE_TS_DIALECT_H
#define FLOWNODE_TS_DIALECT_H

#include "postgres.h"

#include "query/flow_query.h"

/* The reading of a continuous aggregate's query whose outputs the view names
 * `column_names` (List of String, NIL: the query's own names), valid until the next
 * call. */
extern const FlowQueryReading *fn_ts_reading(List *column_names);

#endif
