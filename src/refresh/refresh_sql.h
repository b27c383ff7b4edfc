/*
 * refresh_sql.h: the SQL of a refresh, built from the analysed flow query (a copy of
 * its tree restricted to the windows, deparsed by PostgreSQL) and the sink's name.
 * With nranges > 0 the windows are the parameters $1, $2 (first range) ... $2n-1,
 * $2n; with nranges = 0 the statement covers the whole query. A query that compares
 * its time column with now() takes the evaluation's scheduled time as one more
 * parameter, $2n+1 (a timestamptz).
 */
#ifndef FLOWNODE_REFRESH_SQL_H
#define FLOWNODE_REFRESH_SQL_H

#include "postgres.h"

#include "query/flow_query.h"

/* The upsert of every fresh group (a sink row rewritten only when a value differs)
 * and, unless upsert_only, the DELETE of the windows' groups that vanished; it
 * returns one row: the number of sink rows written. */
extern char *fn_refresh_sql(const FlowQuery *fq, const char *sink, int nranges, bool upsert_only);
/* A plain INSERT of the query into a sink that holds nothing of these windows. */
extern char *fn_plain_insert_sql(const FlowQuery *fq, const char *sink, int nranges);
/* Whether the sink holds any row in the windows. */
extern char *fn_sink_probe_sql(const FlowQuery *fq, const char *sink, int nranges);
/* Whether windows that only gained rows may skip the DELETE (no group can vanish). */
extern bool fn_refresh_can_skip_vanished(const FlowQuery *fq);

#endif
