/*
 * key_columns.c: which flows' marks may carry keys (docs/internals.md §3, *Key
 * marks*). A key mark names a group by the hash of its key values read from the
 * source row; the refresh reads the rows of a window whose keys hash to a marked
 * hash and recomputes their groups whole. That is exact when a group is determined
 * by source columns alone: each key a plain column of the source (not a dimension's,
 * not an expression), compared as GROUP BY compares it (key_hash hashes by the
 * type's default hash opclass), and the sink's key column holding the same type
 * and collation (the refresh hashes the sink's keys to find the groups to delete).
 * The time column may be of any input the flow's windows support (a timestamptz, a
 * timestamp, a date, an integer epoch: query/time_input.h): a row's window is
 * computed as mark_row computes it, and the key refresh filters the source on the
 * time as the window refresh does (refresh/refresh_args.h).
 */
#include "postgres.h"

#include "access/table.h"
#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
#include "utils/rel.h"
#include "utils/typcache.h"

#include "query/key_columns.h"

/* Whether the sink's column `name` has exactly the type and collation of the key. */
static bool sink_column_matches(Relation sink, const char *name, Oid type, int32 typmod, Oid collation) {
	TupleDesc desc = RelationGetDescr(sink);

	for (int i = 0; i < desc->natts; i++) {
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attisdropped && strcmp(NameStr(att->attname), name) == 0)
			return att->atttypid == type && att->attcollation == collation &&
			       (att->atttypmod == typmod || att->atttypmod == -1);
	}
	return false;
}

/* The output at `position` (0-based, junk columns skipped). */
static Var *output_expr(const FlowQuery *fq, int position) {
	ListCell *lc;

	foreach (lc, fq->query->targetList) {
		TargetEntry *te = lfirst(lc);

		if (!te->resjunk && position-- == 0)
			return (Var *)te->expr;
	}
	elog(ERROR, "flownode: output %d of a flow's query is missing", position);
}

/* The source column a key output is, or 0. */
static AttrNumber key_attnum(const FlowQuery *fq, int position) {
	Var *var = output_expr(fq, position);

	if (!IsA(var, Var) || var->varno != fq->source_rtindex || var->varlevelsup != 0 || var->varattno <= 0)
		return 0;
	if (!OidIsValid(lookup_type_cache(var->vartype, TYPECACHE_HASH_EXTENDED_PROC)->hash_extended_proc))
		return 0;
	return var->varattno;
}

static bool flow_may_key(const FlowQuery *fq) {
	return fq->shape == FLOW_SHAPE_GROUPED && fq->window_position >= 0 && fq->time_attnum > 0 &&
	       fq->dimensions == NIL && fq->now_preds == NIL && list_length(fq->key_positions) >= 2 &&
	       list_length(fq->key_positions) <= FN_MAX_KEY_COLUMNS + 1;
}

List *fn_key_mark_columns(const FlowQuery *fq, Oid sink_relid) {
	Relation sink = NULL;
	List *cols = NIL;
	ListCell *lc;

	if (!flow_may_key(fq))
		return NIL;
	if (OidIsValid(sink_relid))
		sink = table_open(sink_relid, AccessShareLock);
	foreach (lc, fq->key_positions) {
		int pos = lfirst_int(lc);
		AttrNumber attnum;
		Var *var;

		if (pos == fq->window_position)
			continue;
		attnum = key_attnum(fq, pos);
		var = output_expr(fq, pos);
		if (attnum == 0 ||
		    (sink != NULL && !sink_column_matches(sink, list_nth(fq->out_names, pos), var->vartype,
		                                          var->vartypmod, var->varcollid))) {
			cols = NIL;
			break;
		}
		cols = lappend_int(cols, attnum);
	}
	if (sink != NULL)
		table_close(sink, AccessShareLock);
	return cols;
}
