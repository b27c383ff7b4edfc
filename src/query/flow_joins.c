/*
 * flow_joins.c: the shape of a flow query that joins tables (docs/reference.md, "What a flow query may be",
 * Joins). One *fact* table, whose time column makes the windows, joined by INNER
 * and LEFT joins to *dimensions*: tables, views and subqueries. Why these:
 *
 * - The refresh restricts the fact table to the dirty windows (query_rewrite.c). That
 *   gives every fact row of those windows only if the fact table is never on the
 *   nullable side of a LEFT JOIN (RIGHT and FULL joins are refused: write the fact
 *   table first), and only if the time column is the fact table's own.
 * - A write to a dimension table marks the windows of the fact rows that join the
 *   changed dimension rows (marking/dimension_marks.c). When the table is joined to
 *   the fact table by an equality, they are found as the fact rows whose join column
 *   equals the changed rows' old or new value, which is a superset of the rows whose
 *   result can change only if the equality decides which dimension rows a fact row
 *   meets: it must be a conjunct of the WHERE clause, of an INNER JOIN's condition,
 *   or of the condition of the LEFT JOIN that brings the dimension in (an equality in
 *   another LEFT JOIN's condition filters nothing), and its operator must be an
 *   equality (hash- or merge-joinable) that is strict (a NULL joins nothing).
 * - Any other dimension (joined by OR, <>, a range, only to another dimension, or not
 *   at all), each table under a view it joins (found through the view's query, at
 *   any depth) and each table a subquery of FROM reads (LATERAL or not) is marked
 *   *every write*: a write to it marks every window that is not frozen. That is
 *   exact whatever the condition, only slower; create_flow says so in a NOTICE.
 * - What a write flownode sees cannot mark is refused: a foreign table (written on
 *   another server), a materialized view (REFRESH fires no trigger), a view that
 *   reads the clock or calls a function that is not deterministic
 *   (query/determinism.c).
 * - A table read twice, a view or subquery that reads the fact table, or a dimension
 *   joined by an equality on the fact table's time column is a join between two
 *   fact tables: refused.
 */
#include "flownode.h"

#include "query/flow_joins.h"

#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "access/table.h"
#include "query/determinism.h"
#include "rewrite/rewriteHandler.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parsetree.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

/* An invalid flow query: its message and hint written whole at each use (each a
 * string literal, so that both are translated as they stand). */
#define JOIN_ERROR(msg) ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg(msg)))
#define JOIN_ERROR_HINT(msg, hint)                                                                           \
	ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg(msg), errhint(hint)))

/* The base tables of the FROM clause in join order, and whether any join is there. */
typedef struct FromWalk {
	Query *q;
	List *rtindexes;  /* int: every table or view, in FROM order */
	List *subqueries; /* int: every subquery of FROM (LATERAL or not) */
	Bitmapset *nullable;
	bool joins;
} FromWalk;

static void walk_from(Node *node, bool nullable, FromWalk *w) {
	if (IsA(node, RangeTblRef)) {
		int rtindex = ((RangeTblRef *)node)->rtindex;
		RangeTblEntry *rte = rt_fetch(rtindex, w->q->rtable);

		if (rte->rtekind == RTE_SUBQUERY) {
			w->subqueries = lappend_int(w->subqueries, rtindex);
			w->joins = true;
			return;
		}
		if (rte->rtekind != RTE_RELATION)
			JOIN_ERROR_HINT("invalid flow query: the query must read tables, views or subqueries, not a "
			                "function or VALUES",
			                "A flow reads a fact table and, through joins, dimension tables, views and "
			                "subqueries.");
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
	FromWalk w = {q, NIL, NIL, NULL, false};
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

	if (w.rtindexes == NIL)
		JOIN_ERROR_HINT("invalid flow query: the query must read a table, not a subquery or function",
		                "A flow reads a fact table and, through joins, dimension tables, views and "
		                "subqueries.");
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
	FromWalk w = {q, NIL, NIL, NULL, false};
	Bitmapset *out = NULL;
	ListCell *lc;

	walk_from(node, false, &w);
	foreach (lc, list_concat(w.rtindexes, w.subqueries))
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

/* A dimension must be a plain table whose every write flownode can see (a view is
 * taken apart before: add_view). */
static void check_dimension_table(Oid relid, char relkind, bool inh, Oid fact_relid) {
	const char *name = get_rel_name(relid);

	if (relid == fact_relid)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("invalid flow query: the fact table \"%s\" is joined with itself", name),
		                errdetail("Joins between two fact tables are not supported.")));
	if (relkind == RELKIND_FOREIGN_TABLE)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("invalid flow query: dimension \"%s\" is a foreign table", name),
		                errdetail("Writes to a foreign table happen on another server, where flownode cannot "
		                          "mark them."),
		                errhint("Copy its rows into a local table (CREATE TABLE ... AS SELECT * FROM %s) and "
		                        "join that table; writes to it are then marked.",
		                        quote_identifier(name))));
	if (relkind == RELKIND_MATVIEW)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("invalid flow query: dimension \"%s\" is a materialized view", name),
		                errdetail("REFRESH MATERIALIZED VIEW changes its rows without a write flownode can "
		                          "see."),
		                errhint("Join a plain view with the same query, or the tables it reads.")));
	if (relkind == RELKIND_PARTITIONED_TABLE)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("invalid flow query: dimension table \"%s\" is partitioned", name),
		                errdetail("A dimension table must be a plain table.")));
	if (relkind != RELKIND_RELATION)
		ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
		                errmsg("invalid flow query: dimension \"%s\" is not a table or a view", name),
		                errdetail("It changes without writes flownode can see.")));
	if (get_rel_persistence(relid) == RELPERSISTENCE_TEMP)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("invalid flow query: dimension table \"%s\" is a temporary table", name),
		                errhint("The flow's worker runs in its own session and cannot see it.")));
	if (inh && has_subclass(relid))
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("invalid flow query: dimension table \"%s\" has inheritance children", name),
		                errhint("Use FROM ONLY.")));
}

/* The query's entry for the relation, made when it has none. */
static FlowDimension *dimension_of(List **dims, Oid relid, int rtindex, FlowDimensionKind kind) {
	FlowDimension *d;
	ListCell *lc;

	foreach (lc, *dims) {
		d = lfirst(lc);
		if (d->relid == relid)
			return d;
	}
	d = palloc0(sizeof(FlowDimension));
	d->relid = relid;
	d->rtindex = rtindex;
	d->kind = kind;
	*dims = lappend(*dims, d);
	return d;
}

/* What reads_walker collects: the relations under a view or a subquery of the flow
 * query (at rtindex), every write to which marks every window. */
typedef struct Reads {
	List **dims;
	int rtindex;
	Oid fact_relid;
	Oid view;           /* the view being taken apart: its own OLD and NEW entries (15) are skipped */
	const char *reader; /* the view's name, NULL in a subquery: for the messages */
} Reads;

static bool reads_walker(Node *node, Reads *r);

/* The error context of a view being taken apart. */
static void view_context(void *arg) {
	errcontext("view \"%s\", which the flow query reads", (const char *)arg);
}

/* A view: its query deterministic, each relation it reads collected. */
static void add_view(Reads *r, Oid view) {
	Relation rel = table_open(view, AccessShareLock);
	Query *vq = copyObject(get_view_query(rel));
	Reads inner = *r;
	ErrorContextCallback cb = {error_context_stack, view_context, (void *)get_rel_name(view)};

	table_close(rel, AccessShareLock);
	dimension_of(r->dims, view, r->rtindex, FN_DIM_VIEW);
	error_context_stack = &cb;
	fn_check_deterministic_view(vq);
	inner.view = view;
	inner.reader = get_rel_name(view);
	(void)reads_walker((Node *)vq, &inner);
	error_context_stack = cb.previous;
}

static void add_read_relation(Reads *r, const RangeTblEntry *rte) {
	char relkind = get_rel_relkind(rte->relid); /* a view's stored query may predate a change */
	FlowDimension *d;

	if (rte->relid == r->view)
		return;
	if (rte->relid == r->fact_relid) {
		if (r->reader != NULL)
			ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			                errmsg("invalid flow query: view \"%s\" reads the fact table \"%s\"", r->reader,
			                       get_rel_name(r->fact_relid)),
			                errdetail("Joins between two fact tables are not supported.")));
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("invalid flow query: a subquery in FROM reads the fact table \"%s\"",
		                       get_rel_name(r->fact_relid)),
		                errdetail("Joins between two fact tables are not supported.")));
	}
	if (relkind == RELKIND_VIEW) {
		add_view(r, rte->relid);
		return;
	}
	check_dimension_table(rte->relid, relkind, rte->inh, r->fact_relid);
	d = dimension_of(r->dims, rte->relid, r->rtindex, r->reader ? FN_DIM_VIEW_TABLE : FN_DIM_SUB_TABLE);
	d->every_write = true;
	d->under = bms_add_member(d->under, r->rtindex); /* also when joined directly: the NOTICE */
}

/* Every relation the tree reads, at any depth: subqueries, CTEs, sublinks, views. */
static bool reads_walker(Node *node, Reads *r) {
	ListCell *lc;

	if (node == NULL)
		return false;
	if (!IsA(node, Query))
		return expression_tree_walker(node, reads_walker, (void *)r);
	foreach (lc, ((Query *)node)->rtable) {
		RangeTblEntry *rte = lfirst_node(RangeTblEntry, lc);

		if (rte->rtekind == RTE_RELATION)
			add_read_relation(r, rte);
	}
	return query_tree_walker((Query *)node, reads_walker, (void *)r, 0);
}

/* A table of the FROM clause: its equalities with the fact table, every write
 * marking every window when it has none. */
static void add_table(List **dims, Query *q, List *conjuncts, int fact_rtindex, int rtindex,
                      AttrNumber time_attnum) {
	RangeTblEntry *rte = rt_fetch(rtindex, q->rtable);
	RangeTblEntry *fact = rt_fetch(fact_rtindex, q->rtable);
	const char *name = get_rel_name(rte->relid);
	FlowDimension *d;
	ListCell *lc;

	check_dimension_table(rte->relid, rte->relkind, rte->inh, fact->relid);
	foreach (lc, *dims)
		if (((FlowDimension *)lfirst(lc))->relid == rte->relid)
			ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			                errmsg("invalid flow query: table \"%s\" is read twice", name),
			                errhint("Join each dimension table once.")));
	d = dimension_of(dims, rte->relid, rtindex, FN_DIM_TABLE);
	d->keys = keys_of(conjuncts, fact_rtindex, rtindex);
	d->every_write = d->keys == NIL;
	foreach (lc, d->keys)
		if (time_attnum > 0 && ((FlowJoinKey *)lfirst(lc))->fact_attnum == time_attnum)
			ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			                errmsg("invalid flow query: table \"%s\" is joined on the time column of the "
			                       "fact table \"%s\"",
			                       name, get_rel_name(fact->relid)),
			                errdetail("Joins between two fact tables are not supported.")));
}

List *fn_join_dimensions(Query *q, int fact_rtindex, AttrNumber time_attnum) {
	FromWalk w = walk_query(q);
	Oid fact_relid = rt_fetch(fact_rtindex, q->rtable)->relid;
	List *conjuncts = NIL;
	List *dims = NIL;
	ListCell *lc;

	if (!w.joins)
		return NIL;
	conjuncts = add_conjuncts(NIL, q, q->jointree->quals, true, NULL);
	foreach (lc, q->jointree->fromlist)
		conjuncts = join_conjuncts(q, lfirst(lc), conjuncts);
	/* the tables first: one read twice is refused, one also under a view is kept */
	foreach (lc, w.rtindexes) {
		RangeTblEntry *rte = rt_fetch(lfirst_int(lc), q->rtable);

		if (lfirst_int(lc) != fact_rtindex && rte->relkind != RELKIND_VIEW)
			add_table(&dims, q, conjuncts, fact_rtindex, lfirst_int(lc), time_attnum);
	}
	foreach (lc, list_concat_copy(w.rtindexes, w.subqueries)) {
		RangeTblEntry *rte = rt_fetch(lfirst_int(lc), q->rtable);
		Reads r = {&dims, lfirst_int(lc), fact_relid, InvalidOid, NULL};

		if (rte->rtekind == RTE_SUBQUERY)
			(void)reads_walker((Node *)rte->subquery, &r);
		else if (rte->relkind == RELKIND_VIEW)
			add_view(&r, rte->relid);
	}
	return dims;
}

/* The NOTICE of one entry of the query's range table, named by its alias. */
static void notice_every_write(RangeTblEntry *rte, const char *fact) {
	if (rte->rtekind == RTE_SUBQUERY)
		ereport(NOTICE,
		        (errmsg("a write to a table that subquery \"%s\" reads marks every window of the flow",
		                rte->eref->aliasname),
		         errdetail("The rows a write changes cannot be mapped to the windows they join through an "
		                   "equality, so every window that is not frozen is refreshed: exact, but slower."),
		         errhint("Join the tables directly, each on an equality of a column of \"%s\", to mark only "
		                 "the windows of the rows a write changes.",
		                 fact)));
	else if (rte->relkind == RELKIND_VIEW)
		ereport(
		    NOTICE,
		    (errmsg("a write to a table that view \"%s\" reads marks every window of the flow",
		            get_rel_name(rte->relid)),
		     errdetail("The rows a write changes cannot be mapped to the windows they join through an "
		               "equality, so every window that is not frozen is refreshed: exact, but slower."),
		     errhint("Join the view's tables directly, each on an equality of a column of \"%s\", to mark "
		             "only the windows of the rows a write changes.",
		             fact)));
	else
		ereport(NOTICE,
		        (errmsg("a write to dimension table \"%s\" marks every window of the flow",
		                get_rel_name(rte->relid)),
		         errdetail("It is not joined to the fact table \"%s\" by an equality of a fact column and a "
		                   "dimension column, so every window that is not frozen is refreshed: exact, but "
		                   "slower.",
		                   fact),
		         errhint("Join it on an equality of a source column (fact_column = dimension_column) to mark "
		                 "only the windows of the rows a write changes.")));
}

void fn_notice_every_write(Query *q, int fact_rtindex, List *dimensions) {
	const char *fact = get_rel_name(rt_fetch(fact_rtindex, q->rtable)->relid);
	Bitmapset *entries = NULL; /* the tables without an equality, views and subqueries */
	ListCell *lc;
	int i = -1;

	foreach (lc, dimensions) {
		FlowDimension *d = lfirst(lc);

		if (d->kind == FN_DIM_TABLE && d->keys == NIL)
			entries = bms_add_member(entries, d->rtindex);
		entries = bms_add_members(entries, d->under);
	}
	/* in FROM order: once per entry, a view or subquery that reads no table aside */
	while ((i = bms_next_member(entries, i)) >= 0)
		notice_every_write(rt_fetch(i, q->rtable), fact);
}

List *fn_dimension_relids(List *dimensions) {
	List *out = NIL;
	ListCell *lc;

	foreach (lc, dimensions)
		out = lappend_oid(out, ((FlowDimension *)lfirst(lc))->relid);
	return out;
}
