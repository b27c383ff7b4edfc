/*
 * when_cache.c: the marking triggers' WHEN clauses, compiled without being
 * parsed again for every statement.
 *
 * PostgreSQL compiles a trigger's WHEN clause the first time a statement fires the
 * trigger: it parses the stored node string (stringToNode), plans and compiles it.
 * For our one-call clause that is about 27,000 instructions per statement, more than
 * all of flownode's other work for a single-row INSERT. So each backend keeps the
 * parsed and planned tree per trigger (dropped when the table's relcache entry is
 * invalidated, as every trigger change does), and when the executor starts a
 * statement it puts the compiled clause (ExecInitQual of the cached tree) into
 * the result relation's slot that TriggerEnabled() fills on first use
 * (fn_when_cache_prefill, from the ExecutorStart hook: lifecycle/executor_hook.c). TriggerEnabled
 * then finds it there and evaluates exactly what it would have built. Relations
 * the executor opens later (partition routing) and COPY (which runs no executor
 * start) take PostgreSQL's own path: this is a shortcut, never a requirement.
 */
#include "flownode.h"

#include "marking/when_cache.h"

#include "catalog/pg_trigger.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "nodes/makefuncs.h"
#include "optimizer/optimizer.h"
#include "rewrite/rewriteManip.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/rel.h"

typedef struct WhenEntry {
	Oid trigger_oid; /* hash key */
	Oid relid;
	MemoryContext cxt; /* holds qual */
	List *qual;        /* implicit-AND list, planned */
} WhenEntry;

static HTAB *when_cache = NULL;

static bool is_marking_trigger(const Trigger *t) {
	return t->tgisinternal && t->tgqual != NULL && strncmp(t->tgname, "flownode_mark_", 14) == 0;
}

/* As TriggerEnabled() prepares a WHEN clause, up to (not including) compiling it. */
static List *planned_qual(const Trigger *t) {
	Node *qual = stringToNode(t->tgqual);

	ChangeVarNodes(qual, PRS2_OLD_VARNO, INNER_VAR, 0);
	ChangeVarNodes(qual, PRS2_NEW_VARNO, OUTER_VAR, 0);
	return make_ands_implicit(expression_planner((Expr *)qual));
}

static List *cached_qual(Oid relid, const Trigger *t) {
	WhenEntry *e;
	bool found;

	if (when_cache == NULL) {
		HASHCTL ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(WhenEntry);
		ctl.hcxt = CacheMemoryContext;
		when_cache = hash_create("flownode WHEN clauses", 32, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	e = hash_search(when_cache, &t->tgoid, HASH_FIND, NULL);
	if (e == NULL) {
		MemoryContext cxt =
		    AllocSetContextCreate(CacheMemoryContext, "flownode WHEN clause", ALLOCSET_SMALL_SIZES);
		MemoryContext old = MemoryContextSwitchTo(cxt);
		List *qual;

		PG_TRY();
		{ qual = planned_qual(t); }
		PG_CATCH();
		{
			MemoryContextSwitchTo(old);
			MemoryContextDelete(cxt);
			PG_RE_THROW();
		}
		PG_END_TRY();
		MemoryContextSwitchTo(old);
		e = hash_search(when_cache, &t->tgoid, HASH_ENTER, &found);
		e->relid = relid;
		e->cxt = cxt;
		e->qual = qual;
	}
	return e->qual;
}

/* The trigger events a statement fires: only their clauses are compiled, as
 * TriggerEnabled would. (An INSERT's ON CONFLICT DO UPDATE takes the normal path.) */
static int16 events_of(CmdType operation) {
	switch (operation) {
	case CMD_INSERT:
		return TRIGGER_TYPE_INSERT;
	case CMD_UPDATE:
		return TRIGGER_TYPE_UPDATE;
	case CMD_DELETE:
		return TRIGGER_TYPE_DELETE;
	case CMD_MERGE:
		return TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE | TRIGGER_TYPE_DELETE;
	default:
		return 0;
	}
}

static void prefill(EState *estate, int16 events) {
	ListCell *lc;

	foreach (lc, estate->es_opened_result_relations) {
		ResultRelInfo *rri = lfirst(lc);
		TriggerDesc *td = rri->ri_TrigDesc;

		if (td == NULL || rri->ri_TrigWhenExprs == NULL)
			continue;
		for (int i = 0; i < td->numtriggers; i++) {
			MemoryContext old;
			List *qual;

			if (rri->ri_TrigWhenExprs[i] != NULL || (td->triggers[i].tgtype & events) == 0 ||
			    !is_marking_trigger(&td->triggers[i]))
				continue;
			qual = cached_qual(RelationGetRelid(rri->ri_RelationDesc), &td->triggers[i]);
			old = MemoryContextSwitchTo(estate->es_query_cxt);
			/* compiled from the cached tree itself, as the executor runs a cached
			 * plan's: the state points into it (fn_expr), so an invalidated tree is
			 * kept until the transaction ends (retire) */
			rri->ri_TrigWhenExprs[i] = ExecInitQual(qual, NULL);
			MemoryContextSwitchTo(old);
		}
	}
}

void fn_when_cache_prefill(QueryDesc *queryDesc, int eflags) {
	if (queryDesc->estate->es_opened_result_relations != NIL && !(eflags & EXEC_FLAG_EXPLAIN_ONLY))
		prefill(queryDesc->estate, events_of(queryDesc->operation));
}

/* A forgotten entry's tree may still be under a running statement's compiled
 * clause: it lives on until the end of the transaction, which outlives every
 * statement that could have compiled it. */
static void retire(MemoryContext cxt) {
	if (TopTransactionContext != NULL)
		MemoryContextSetParent(cxt, TopTransactionContext);
	else
		MemoryContextDelete(cxt);
}

/* Relcache callback: a table's triggers may have changed. */
static void forget_when_clauses(Datum arg pg_attribute_unused(), Oid relid) {
	HASH_SEQ_STATUS status;
	WhenEntry *e;

	if (when_cache == NULL)
		return;
	hash_seq_init(&status, when_cache);
	while ((e = hash_seq_search(&status)) != NULL) {
		if (OidIsValid(relid) && e->relid != relid)
			continue;
		retire(e->cxt);
		(void)hash_search(when_cache, &e->trigger_oid, HASH_REMOVE, NULL);
	}
}

void fn_when_cache_init(void) {
	CacheRegisterRelcacheCallback(forget_when_clauses, (Datum)0);
}
