/*
 * hidden_keys.c: group keys a flow's query does not output become outputs of the
 * analysed query, after its visible ones, under names of their own (hidden_keys.h).
 * Everything that writes the sink then treats them as any key column; what is stored
 * and shown as the flow's query is the query as written (fq->as_written).
 */
#include "flownode.h"

#include "query/hidden_keys.h"

#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

/* The query as written, kept before the first hidden key changes fq->query. */
static void keep_as_written(FlowQuery *fq) {
	if (fq->as_written == fq->query)
		fq->as_written = copyObject(fq->query);
}

/* The name of hidden key `keyno`; ERROR when the query outputs a column of that name. */
static char *hidden_name(FlowQuery *fq, int keyno) {
	char *name = psprintf(FN_HIDDEN_KEY_FORMAT, keyno);
	ListCell *lc;

	foreach (lc, fq->out_names)
		if (strcmp((const char *)lfirst(lc), name) == 0)
			ereport(
			    ERROR,
			    (errcode(ERRCODE_DUPLICATE_COLUMN),
			     errmsg("invalid flow query: output column name \"%s\" is reserved for a hidden key column",
			            name),
			     errdetail("The sink keeps each group key the query does not output in a column of that "
			               "name."),
			     errhint("Rename the output column with AS.")));
	return name;
}

/* `tle` placed after the visible outputs (and the hidden ones before it), before the
 * junk entries; every entry renumbered. */
static void place_after_outputs(Query *q, TargetEntry *tle) {
	List *list = NIL;
	ListCell *lc;
	AttrNumber resno = 1;

	foreach (lc, q->targetList)
		if (lfirst(lc) != tle && !((TargetEntry *)lfirst(lc))->resjunk)
			list = lappend(list, lfirst(lc));
	list = lappend(list, tle);
	foreach (lc, q->targetList)
		if (lfirst(lc) != tle && ((TargetEntry *)lfirst(lc))->resjunk)
			list = lappend(list, lfirst(lc));
	foreach (lc, list)
		((TargetEntry *)lfirst(lc))->resno = resno++;
	q->targetList = list;
}

/* The hidden output's column, as read_outputs records a visible one's. */
static void add_output(FlowQuery *fq, TargetEntry *tle) {
	Oid type = exprType((Node *)tle->expr);

	if (get_typtype(type) == TYPTYPE_PSEUDO)
		ereport(ERROR,
		        (errcode(ERRCODE_INVALID_TABLE_DEFINITION),
		         errmsg("invalid flow query: a group key the query does not output has pseudo-type %s",
		                format_type_be(type)),
		         errdetail("The sink keeps such a key in a column of its own, and a column cannot hold it."),
		         errhint("Group by a value of a type a table can store, or output the key.")));
	fq->out_names = lappend(fq->out_names, tle->resname);
	fq->out_types = lappend_oid(fq->out_types, type);
	fq->out_typmods = lappend_int(fq->out_typmods, exprTypmod((Node *)tle->expr));
	fq->out_collations = lappend_oid(fq->out_collations, exprCollation((Node *)tle->expr));
}

void fn_hide_group_key(FlowQuery *fq, TargetEntry *tle, int keyno) {
	keep_as_written(fq);
	tle->resname = hidden_name(fq, keyno);
	tle->resjunk = false;
	place_after_outputs(fq->query, tle);
	add_output(fq, tle);
}

TargetEntry *fn_hide_source_column(FlowQuery *fq, AttrNumber attnum, int keyno) {
	Oid type, collation;
	int32 typmod;
	TargetEntry *tle;

	keep_as_written(fq);
	get_atttypetypmodcoll(fq->source_relid, attnum, &type, &typmod, &collation);
	tle = makeTargetEntry((Expr *)makeVar(fq->source_rtindex, attnum, type, typmod, collation, 0), 0,
	                      hidden_name(fq, keyno), false);
	place_after_outputs(fq->query, tle);
	add_output(fq, tle);
	return tle;
}

/* The hidden output at position `pos`: the target entry of fq->query. */
static TargetEntry *output_entry(const FlowQuery *fq, int pos) {
	ListCell *lc;
	int out = 0;

	foreach (lc, fq->query->targetList) {
		TargetEntry *tle = lfirst_node(TargetEntry, lc);

		if (!tle->resjunk && out++ == pos)
			return tle;
	}
	elog(ERROR, "flownode: the flow query has no output %d", pos + 1);
	pg_unreachable();
}

int fn_hidden_key_number(const FlowQuery *fq, int pos) {
	return atoi(output_entry(fq, pos)->resname + strlen(FN_HIDDEN_KEY_PREFIX));
}

const char *fn_hidden_source_column(const FlowQuery *fq, int pos) {
	TargetEntry *tle = output_entry(fq, pos);

	if (fq->shape != FLOW_SHAPE_COPY || !IsA(tle->expr, Var))
		return NULL;
	return get_attname(fq->source_relid, ((Var *)tle->expr)->varattno, false);
}
