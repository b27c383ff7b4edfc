/*
 * ts_execute.h: TimescaleDB's continuous-aggregate statements run by flownode.execute
 * (greptime/gt_execute.c dispatches to them): CREATE MATERIALIZED VIEW ... WITH
 * (timescaledb.continuous) and DROP MATERIALIZED VIEW (ts_execute.c), CALL
 * refresh_continuous_aggregate and SELECT add_/remove_continuous_aggregate_policy
 * (ts_calls.c). docs/reference.md, "Coming from TimescaleDB", says what maps to what.
 */
#ifndef FLOWNODE_TS_EXECUTE_H
#define FLOWNODE_TS_EXECUTE_H

#include "postgres.h"

/* Whether the statement is TimescaleDB's, by its first words: CREATE MATERIALIZED
 * VIEW, DROP or ALTER MATERIALIZED VIEW, CALL or SELECT (GreptimeDB's statements start
 * otherwise). */
extern bool fn_ts_statement(const char *statement);

/* Runs it. Errors with an errposition are positions in `statement`: the caller shows
 * them in it. */
extern void fn_ts_execute(const char *statement);

#endif
