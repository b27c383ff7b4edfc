/*
 * determinism.h: whether a flow query's answer depends only on its source rows (and
 * on the settings every refresh pins), so that refreshing the windows writes marked
 * keeps the sink exact (docs/internals.md §2, invariant 1).
 */
#ifndef FLOWNODE_DETERMINISM_H
#define FLOWNODE_DETERMINISM_H

#include "postgres.h"

#include "nodes/parsenodes.h"

/* ERROR, naming the first function or construct of the analysed `query` whose result
 * can change without a write to the source (the clock, the session, the catalogs,
 * other tables, a setting a flow does not pin), with a hint. `sql` is the text the
 * query was analysed from: the error points into it. */
extern void fn_check_deterministic(Query *query, const char *sql);

#endif
