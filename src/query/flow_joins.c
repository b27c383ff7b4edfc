/*
 * flow_joins.c: the shape of a flow query that joins tables (docs/reference.md, "What a flow query may be",
 * Joins). One *fact* table, whose time column makes the windows, joined by INNER
 * and LEFT joins to *dimension* tables, each by an equality of a fact column and a
 * dimension column. Why so narrow:
 *
 * - The refresh restricts the fact table to the dirty windows (query_rewrite.c). That
 *   gives every fact row of those windows only if the fact table is never on the
 *   nullable side of a LEFT JOIN (RIGHT and FULL joins are refused: write the fact
 *   table first), and only if the time column is the fact table's own.
 * - A write to a dimension table marks the windows of the fact rows that join the
 *   changed dimension rows (marking/dimension_marks.c). They are found as the fact
 *   rows whose join column equals the changed rows' old or new value, which is a
 *   superset of the rows whose result can change only if the equality decides which
 *   dimension rows a fact row meets: it must be a conjunct of the WHERE clause, of an
 *   INNER JOIN's condition, or of the condition of the LEFT JOIN that brings the
 *   dimension in (an equality in another LEFT JOIN's condition filters nothing), and
 *   its operator must be an equality (hash- or merge-joinable) that is strict (a
 *   NULL joins nothing). A dimension joined only to another dimension, or by an
 *   inequality, is refused.
 * - A table read twice, or a dimension joined on the fact table's time column, is a
 *   join between two fact tables: refused.
 */
#include "flownode.h"

#include "query/flow_joins.h"

#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/lsyscache.h"

/* An invalid flow query: its message and hint written whole at each use (each a
 * string literal, so that both are translated as they stand). */
#define JOIN_ERROR(msg) ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg(msg)))
#define JOIN_ERROR_HINT(msg, hint)                                                                           \
	ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg(msg), errhint(hint)))

/* The base tables of the FROM clause in join order, and whether any join is there. */
typedef struct FromWalk {
	Query *q;
	List *rtindexes; /* int: every base table, in FROM order */
	Bitmapset *nullable;
	bool joins;
} FromWalk;

static void walk_from(Node *node, bool nullable, FromWalk *w) {
	if (IsA(node, RangeTblRef)) {
		int rtindex = ((RangeTblRef *)node)->rtindex;
		RangeTblEntry *rte = rt_fetch(rtindex, w->q->rtable);

		if (rte->rtekind != RTE_RELATION)
			JOIN_ERROR_HINT("invalid flow query: the query must read a table, not a subquery or function",
			                "A flow reads a fact table and, through joins, dimension tables.");
		w->rtindexes = lappend_int(w->rtindexes, rtindex);
		if (nullable)
			w->nullable = bms_add_member(w->nullable, rtindex);
	} else if (IsA(node, JoinExpr)) {
		JoinExpr *j = (JoinExpr *)node;

		w->joins = true;
		if (j->jointype == JOIN_RIGHT || j->jointype == JOIN_FULL)
			JOIN_ERROR_HINT("invalid flow query: RIGHT and FULL joins are not supported",
			                "Write the fact table first and LEFT JOIN the dimension tables to it.");
		if (j->jointype != JOIN_INNER && j->jointype != JOIN_LEFT)
			JOIN_ERROR("invalid flow query: only INNER and LEFT joins are supported");
		walk_from(j->larg, nullable, w);
		walk_from(j->rarg, nullable || j->jointype == JOIN_LEFT, w);
	} else if (IsA(node, FromExpr)) {
		ListCell *lc;

		foreach (lc, ((FromExpr *)node)->fromlist)
			walk_from(lfirst(lc), nullable, w);
	} else
		elog(ERROR, "flownode: unexpected node %d in a flow query's FROM clause", (int)nodeTag(node));
}

static FromWalk walk_query(Query *q) {
	FromWalk w = {q, NIL, NULL, false};
	ListCell *lc;

	if (q->jointree->fromlist == NIL)
		JOIN_ERROR_HINT("invalid flow query: the query must read a table",
		                "Write SELECT ... FROM source GROUP BY ...");
	foreach (lc, q->jointree->fromlist)
		walk_from(lfirst(lc), false, &w);
	w.joins |= list_length(w.rtindexes) > 1;
	return w;
}

int fn_join_fact_rtindex(Query *q, int window_varno) {
	FromWalk w = walk_query(q);
	int fact;

	if (!w.joins)
		return linitial_int(w.rtindexes);
	if (window_varno > 0 && rt_fetch(window_varno, q->rtable)->rtekind == RTE_JOIN)
		ereport(ERROR,
		        (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		         errmsg("invalid flow query: the time window reads a column merged by JOIN ... USING"),
		         errdetail("Joins between two fact tables on their time columns are not supported."),
		         errhint("Window a column of the fact table itself: date_bin(..., fact_table.ts, ...).")));
	fact = window_varno > 0 ? window_varno : linitial_int(w.rtindexes);
	if (bms_is_member(fact, w.nullable))
		ereport(ERROR,
		        (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		         errmsg("invalid flow query: the fact table \"%s\" is on the nullable side of a LEFT JOIN",
		                get_rel_name(rt_fetch(fact, q->rtable)->relid)),
		         errdetail("The fact table is the table whose time column makes the windows; every one of "
		                   "its rows must reach the query."),
		         errhint("Write FROM fact_table LEFT JOIN dimension_table ON ...")));
	return fact;
}

/* ---- dimensions ---- */

/* A conjunct of a join condition or of WHERE, and the dimensions it may join: every
 * table (NULL), or those a LEFT JOIN brings in. */
typedef struct Conjunct {
	Expr *expr; /* join alias Vars flattened to the tables' own */
	Bitmapset *serves;
	bool all;
} Conjunct;

static Bitmapset *base_rels_of(Query *q, Node *node) {
	FromWalk w = {q, NIL, NULL, false};
	Bitmapset *out = NULL;
	ListCell *lc;

	walk_from(node, false, &w);
	foreach (lc, w.rtindexes)
		out = bms_add_member(out, lfirst_int(lc));
	return out;
}

static List *add_conjuncts(List *out, Query *q, Node *quals, bool all, Bitmapset *serves) {
	ListCell *lc;

	if (quals == NULL)
		return out;
	foreach (lc, make_ands_implicit((Expr *)fn_flatten_join_alias_vars(q, quals))) {
		Conjunct *c = palloc(sizeof(Conjunct));

		c->expr = lfirst(lc);
		c->all = all;
		c->serves = serves;
		out = lappend(out, c);
	}
	return out;
}

static List *join_conjuncts(Query *q, Node *node, List *out) {
	if (IsA(node, JoinExpr)) {
		JoinExpr *j = (JoinExpr *)node;

		out = join_conjuncts(q, j->larg, out);
		out = join_conjuncts(q, j->rarg, out);
		out = add_conjuncts(out, q, j->quals, j->jointype == JOIN_INNER,
		                    j->jointype == JOIN_LEFT ? base_rels_of(q, j->rarg) : NULL);
	}
	return out;
}

static Var *plain_var(Node *n) {
	while (n != NULL && IsA(n, RelabelType))
		n = (Node *)((RelabelType *)n)->arg;
	if (n == NULL || !IsA(n, Var) || ((Var *)n)->varlevelsup != 0 || ((Var *)n)->varattno <= 0)
		return NULL;
	return (Var *)n;
}

/* `fact.a = dim.b` (either way round) with a strict equality: the key, else NULL. */
static FlowJoinKey *equality_key(Expr *e, int fact, int dim) {
	OpExpr *op;
	Var *l, *r;
	Oid opno;
	FlowJoinKey *k;

	if (!IsA(e, OpExpr) || list_length(((OpExpr *)e)->args) != 2)
		return NULL;
	op = (OpExpr *)e;
	l = plain_var(linitial(op->args));
	r = plain_var(lsecond(op->args));
	if (l == NULL || r == NULL)
		return NULL;
	opno = op->opno;
	if (l->varno == dim && r->varno == fact) {
		Var *t = l;

		l = r;
		r = t;
		opno = get_commutator(opno);
	} else if (!(l->varno == fact && r->varno == dim))
		return NULL;
	if (!OidIsValid(opno) ||
	    !(op_hashjoinable(opno, exprType((Node *)l)) || op_mergejoinable(opno, exprType((Node *)l))) ||
	    !func_strict(get_opcode(opno)))
		return NULL;
	k = palloc(sizeof(FlowJoinKey));
	k->fact_attnum = l->varattno;
	k->dim_attnum = r->varattno;
	k->opno = opno;
	return k;
}

/* The equalities that join dimension `dim` to the fact table. */
static List *keys_of(List *conjuncts, int fact, int dim) {
	List *keys = NIL;
	ListCell *lc, *lc2;

	foreach (lc, conjuncts) {
		Conjunct *c = lfirst(lc);
		FlowJoinKey *k;
		bool known = false;

		if (!c->all && !bms_is_member(dim, c->serves))
			continue;
		k = equality_key(c->expr, fact, dim);
		if (k == NULL)
			continue;
		foreach (lc2, keys) {
			FlowJoinKey *o = lfirst(lc2);

			known |= o->fact_attnum == k->fact_attnum && o->dim_attnum == k->dim_attnum && o->opno == k->opno;
		}
		if (!known)
			keys = lappend(keys, k);
	}
	return keys;
}

/* A dimension must be a plain table whose every write flownode can see. */
static void check_dimension_table(RangeTblEntry *rte, RangeTblEntry *fact) {
	const char *name = get_rel_name(rte->relid);

	if (rte->relid == fact->relid)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("invalid flow query: the fact table \"%s\" is joined with itself", name),
		                errdetail("Joins between two fact tables are not supported.")));
	if (rte->relkind == RELKIND_PARTITIONED_TABLE)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("invalid flow query: dimension table \"%s\" is partitioned", name),
		                errdetail("A dimension table must be a plain table.")));
	if (rte->relkind != RELKIND_RELATION)
		ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
		                errmsg("invalid flow query: dimension \"%s\" is not a table", name),
		                errdetail("Views, materialized views and foreign tables change without writes "
		                          "flownode can see.")));
	if (get_rel_persistence(rte->relid) == RELPERSISTENCE_TEMP)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("invalid flow query: dimension table \"%s\" is a temporary table", name),
		                errhint("The flow's worker runs in its own session and cannot see it.")));
	if (rte->inh && has_subclass(rte->relid))
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("invalid flow query: dimension table \"%s\" has inheritance children", name),
		                errhint("Use FROM ONLY.")));
}

List *fn_join_dimensions(Query *q, int fact_rtindex, AttrNumber time_attnum) {
	FromWalk w = walk_query(q);
	RangeTblEntry *fact = rt_fetch(fact_rtindex, q->rtable);
	List *conjuncts = NIL;
	List *dims = NIL;
	ListCell *lc;

	if (!w.joins)
		return NIL;
	conjuncts = add_conjuncts(NIL, q, q->jointree->quals, true, NULL);
	foreach (lc, q->jointree->fromlist)
		conjuncts = join_conjuncts(q, lfirst(lc), conjuncts);
	foreach (lc, w.rtindexes) {
		int rtindex = lfirst_int(lc);
		RangeTblEntry *rte = rt_fetch(rtindex, q->rtable);
		const char *name = get_rel_name(rte->relid);
		FlowDimension *d;
		ListCell *lc2;

		if (rtindex == fact_rtindex)
			continue;
		check_dimension_table(rte, fact);
		foreach (lc2, dims)
			if (((FlowDimension *)lfirst(lc2))->relid == rte->relid)
				ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				                errmsg("invalid flow query: table \"%s\" is read twice", name),
				                errhint("Join each dimension table once.")));
		d = palloc0(sizeof(FlowDimension));
		d->relid = rte->relid;
		d->rtindex = rtindex;
		d->keys = keys_of(conjuncts, fact_rtindex, rtindex);
		if (d->keys == NIL)
			ereport(
			    ERROR,
			    (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			     errmsg("invalid flow query: dimension table \"%s\" is not joined to the fact table \"%s\" "
			            "by an equality",
			            name, get_rel_name(fact->relid)),
			     errdetail("Each dimension table must be joined to the fact table by fact_column = "
			               "dimension_column (ON or USING) in an INNER JOIN, in the LEFT JOIN that brings it "
			               "in, or in WHERE; a write to it marks the windows of the fact rows with its "
			               "value."),
			     errhint("Join it on a column of the fact table; a dimension joined only to another "
			             "dimension, or by an inequality, is not supported.")));
		foreach (lc2, d->keys)
			if (time_attnum > 0 && ((FlowJoinKey *)lfirst(lc2))->fact_attnum == time_attnum)
				ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				                errmsg("invalid flow query: table \"%s\" is joined on the time column of the "
				                       "fact table \"%s\"",
				                       name, get_rel_name(fact->relid)),
				                errdetail("Joins between two fact tables are not supported.")));
		dims = lappend(dims, d);
	}
	return dims;
}

List *fn_dimension_relids(List *dimensions) {
	List *out = NIL;
	ListCell *lc;

	foreach (lc, dimensions)
		out = lappend_oid(out, ((FlowDimension *)lfirst(lc))->relid);
	return out;
}
