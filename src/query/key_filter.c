/*
 * key_filter.c: the refresh of key marks reads only the rows of the marked groups
 * (docs/internals.md §6, *Refreshing key marks*): the flow's query, restricted to
 * the marks' windows as any refresh is (query_rewrite.c), with one more condition on
 * the source, that its keys hash to a marked hash. A group's rows all hash alike
 * (pgutil/key_hash.c), so each group read is read whole, and its aggregates are
 * those of the whole query: any aggregate works.
 */
#include "postgres.h"

#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parse_func.h"
#include "parser/parse_oper.h"
#include "parser/parsetree.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"

#include "flownode.h"
#include "query/key_filter.h"

static Oid key_hash_function(void) {
	Oid any = ANYOID;

	return LookupFuncName(list_make2(makeString(FLOWNODE_SCHEMA), makeString("key_hash")), 1, &any, false);
}

/* `flownode.key_hash(<the columns of rtindex>) = ANY ($paramid)` over relid's columns. */
static Expr *key_condition(Oid relid, Index varno, List *attnums, int paramid) {
	List *args = NIL;
	ScalarArrayOpExpr *sa = makeNode(ScalarArrayOpExpr);
	Param *p = makeNode(Param);
	ListCell *lc;

	foreach (lc, attnums) {
		Oid type, coll;
		int32 typmod;

		get_atttypetypmodcoll(relid, (AttrNumber)lfirst_int(lc), &type, &typmod, &coll);
		args = lappend(args, makeVar(varno, (AttrNumber)lfirst_int(lc), type, typmod, coll, 0));
	}
	p->paramkind = PARAM_EXTERN;
	p->paramid = paramid;
	p->paramtype = INT8ARRAYOID;
	p->paramtypmod = -1;
	p->paramcollid = InvalidOid;
	p->location = -1;
	sa->opno = LookupOperName(NULL, list_make2(makeString("pg_catalog"), makeString("=")), INT8OID, INT8OID,
	                          false, -1);
	sa->opfuncid = F_INT8EQ;
	sa->useOr = true;
	sa->inputcollid = InvalidOid;
	sa->args = list_make2(
	    makeFuncExpr(key_hash_function(), INT8OID, args, InvalidOid, InvalidOid, COERCE_EXPLICIT_CALL), p);
	sa->location = -1;
	return (Expr *)sa;
}

void fn_inject_key_filter(Query *query, int rtindex, List *attnums, int paramid) {
	RangeTblEntry *rte = rt_fetch(rtindex, query->rtable);
	Query *target = query;
	Index varno = (Index)rtindex;
	Oid relid = rte->relid;

	if (rte->rtekind == RTE_SUBQUERY) { /* the source fenced range by range: its only table is 1 */
		target = rte->subquery;
		varno = 1;
		relid = rt_fetch(1, target->rtable)->relid;
	}
	target->jointree->quals =
	    make_and_qual(target->jointree->quals, (Node *)key_condition(relid, varno, attnums, paramid));
}
