/*
 * hidden_keys.h: group keys a flow's query does not output (docs/reference.md,
 * "Group keys that are not output columns"). The sink keeps each as a key column of
 * its own, after the query's columns, named FN_HIDDEN_KEY_FORMAT: the refresh
 * upserts and deletes by the whole group key. A read view shows the visible columns
 * only; read_flow returns the sink's row type, hidden columns included.
 */
#ifndef FLOWNODE_HIDDEN_KEYS_H
#define FLOWNODE_HIDDEN_KEYS_H

#include "postgres.h"

#include "query/flow_query.h"

/* A hidden key column's name: "flownode hidden key N", N its key's place (from 1) in
 * the GROUP BY, or in the source's primary key for a flow without aggregation. */
#define FN_HIDDEN_KEY_FORMAT "flownode hidden key %d"
#define FN_HIDDEN_KEY_PREFIX "flownode hidden key "

/* Makes `tle`, a GROUP BY key of fq->query that is not an output (resjunk), the
 * hidden output of key `keyno`; fq->as_written keeps the query as it was written. */
extern void fn_hide_group_key(FlowQuery *fq, TargetEntry *tle, int keyno);

/* Adds the source's column `attnum`, a column of its primary key that a flow without
 * aggregation does not output, as the hidden output of key `keyno`; returns it. */
extern TargetEntry *fn_hide_source_column(FlowQuery *fq, AttrNumber attnum, int keyno);

/* Hidden output `pos`: its key's place N (from 1) in the GROUP BY or in the source's
 * primary key, and for a flow without aggregation the source column it holds (else
 * NULL). */
extern int fn_hidden_key_number(const FlowQuery *fq, int pos);
extern const char *fn_hidden_source_column(const FlowQuery *fq, int pos);

/* Whether output column `pos` (0-based) of the analysed query is a hidden key. */
static inline bool fn_output_is_hidden(const FlowQuery *fq, int pos) {
	return pos >= fq->nvisible;
}

#endif
