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
 * query was analysed from: the error points into it. The evaluation's clock (see
 * fn_is_clock_now) passes: flow_query.c accepts it only where the flow gives it a
 * meaning. */
extern void fn_check_deterministic(Query *query, const char *sql);
/* The same for the query of a view a flow joins (flow_joins.c), where the clock is
 * refused too: the view's rows must be a function of its tables' rows alone. */
extern void fn_check_deterministic_view(Query *view_query);

/* now(), transaction_timestamp(), CURRENT_TIMESTAMP or LOCALTIMESTAMP (without a
 * precision): the time of an evaluation, which a flow with eval_interval binds to the
 * evaluation's scheduled time (docs/reference.md, "What a flow query may be"). */
extern bool fn_is_clock_now(Node *node);
/* Its location in the query text, -1 when unknown. */
extern int fn_clock_now_location(Node *node);

#endif
