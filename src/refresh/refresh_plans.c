/*
 * refresh_plans.c: the statements a worker keeps per flow (refresh_plans.h). A pool
 * worker serves many flows in turn: with one set per process, every turn to another
 * flow freed the last flow's statements and its fold, and the next refresh of it
 * analysed, prepared and planned everything again. The sets are a list in recency
 * order (the most recent last), searched from the end: a worker turns to its flows
 * in a few dozen at most before the cap, and the one just refreshed is found first.
 */
#include "flownode.h"

#include "refresh/refresh_plans.h"

#include "pgutil/pg_util.h"
#include "registry/flow_dimensions.h"
#include "registry/sink_table.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

static RefreshPlans *kept[FN_KEPT_FLOWS];
static int nkept = 0;

/* A relcache invalidation of the source, sink or a dimension table (ALTER TABLE,
 * RENAME), or of every relation, makes the flow's analysed query stale: statements
 * built later analyse it again, as the plan cache re-analyses the prepared ones.
 * The list of dimensions is flagged apart: the take analyses the query again (which
 * clears `stale`) before the refresh reads the list to lock its tables, so a flag
 * shared with the query would leave the list of a replaced view's old tables in use
 * (dimension_view_replace.spec). Only flagged here: a refresh may be using both. */
static void invalidate_plans(Datum arg pg_attribute_unused(), Oid relid) {
	for (int i = 0; i < nkept; i++) {
		RefreshPlans *p = kept[i];

		if (!OidIsValid(relid) || relid == p->source_relid || relid == p->sink_relid ||
		    list_member_oid(p->dimensions, relid)) {
			p->stale = true;
			p->dimensions_known = false;
		}
	}
}

void fn_plans_free_statements(RefreshPlans *p) {
	SPIPlanPtr *all[] = {&p->refresh[PLAN_CUSTOM],
	                     &p->refresh[PLAN_GENERIC],
	                     &p->refresh[PLAN_SORTED],
	                     &p->upsert[PLAN_CUSTOM],
	                     &p->upsert[PLAN_GENERIC],
	                     &p->upsert[PLAN_SORTED],
	                     &p->probe,
	                     &p->fill,
	                     &p->count,
	                     &p->batch,
	                     &p->keys};

	for (size_t i = 0; i < lengthof(all); i++)
		if (*all[i] != NULL) {
			SPI_freeplan(*all[i]);
			*all[i] = NULL;
		}
	p->upsert_refused = false;
	p->time_index = -1;
	p->sink_index = -1;
	fn_fold_forget(p->fold); /* its prefix and statements are of the old analysis */
}

/* The set at kept[i] freed, and taken out of the list. */
static void drop_at(int i) {
	RefreshPlans *p = kept[i];

	fn_plans_free_statements(p);
	fn_fold_free(p->fold);
	list_free(p->dimensions);
	if (p->cxt != NULL)
		MemoryContextDelete(p->cxt);
	pfree(p);
	memmove(&kept[i], &kept[i + 1], sizeof(RefreshPlans *) * (nkept - i - 1));
	nkept--;
}

static int index_of(int64 flow_id) {
	for (int i = nkept - 1; i >= 0; i--)
		if (kept[i]->flow_id == flow_id)
			return i;
	return -1;
}

/* A new, empty set for the flow, last in the list (allocated first: a failure
 * leaves the list as it was). */
static RefreshPlans *new_plans(TaskConfig *cfg) {
	static bool registered = false;
	FnFold *fold = fn_fold_new();
	RefreshPlans *p = MemoryContextAllocZero(TopMemoryContext, sizeof(RefreshPlans));

	p->fold = fold;
	if (!registered) {
		CacheRegisterRelcacheCallback(invalidate_plans, (Datum)0);
		registered = true;
	}
	p->flow_id = cfg->flow_id;
	p->source_relid = cfg->source_relid;
	p->sink_relid = cfg->sink_relid;
	p->time_index = p->sink_index = -1;
	if (nkept == FN_KEPT_FLOWS)
		drop_at(0);
	kept[nkept++] = p;
	return p;
}

RefreshPlans *fn_plans_for(TaskConfig *cfg) {
	int i = index_of(cfg->flow_id);
	RefreshPlans *p;

	if (i < 0)
		return new_plans(cfg);
	p = kept[i];
	if (i < nkept - 1) { /* the most recent from now on */
		memmove(&kept[i], &kept[i + 1], sizeof(RefreshPlans *) * (nkept - i - 1));
		kept[nkept - 1] = p;
	}
	return p;
}

RefreshPlans *fn_plans_find(int64 flow_id) {
	int i = index_of(flow_id);

	return i < 0 ? NULL : kept[i];
}

void fn_plans_forget(int64 flow_id) {
	int i = index_of(flow_id);

	if (i >= 0)
		drop_at(i);
}

int fn_plans_kept(void) {
	return nkept;
}

/*
 * The flow's analysed query and sink name, for statements about to be built; called
 * as the flow's owner, under the pinned settings. After a change to the source or
 * sink (the relcache says so) the query is read from the catalog again (a rename
 * rewrote it there: utility_hook.c), analysed again and checked against the sink as
 * create_flow checked it, so a type that drifted makes the refresh fail naming the
 * column and both types, until the sink or the flow is fixed; and every statement
 * built before is dropped. Until the check passes the query stays stale.
 */
FlowQuery *fn_plans_analysed(TaskConfig *cfg) {
	RefreshPlans *cur = fn_plans_for(cfg);
	TaskConfig *now;
	FlowQuery *fq;
	MemoryContext old;

	if (cur->fq != NULL && !cur->stale)
		return cur->fq;
	if (cur->cxt == NULL)
		cur->cxt = AllocSetContextCreate(TopMemoryContext, "flownode refresh", ALLOCSET_SMALL_SIZES);
	fn_plans_free_statements(cur);
	MemoryContextReset(cur->cxt);
	cur->fq = NULL;
	cur->stale = false; /* an invalidation from here on is seen at the next call */
	old = MemoryContextSwitchTo(cur->cxt);
	now = fn_load_task_config(cfg->flow_id, false);
	fq = fn_analyze_flow_query(now->query, now->timezone);
	fn_check_sink(cfg->sink_relid, fq);
	cur->sink = fn_qualified_relname(cfg->sink_relid);
	cur->fq = fq;
	MemoryContextSwitchTo(old);
	return cur->fq;
}

/*
 * The tables the flow joins (a flow's never change: replacing it makes another flow):
 * locked with the source before the snapshot, so a TRUNCATE of one is wholly before
 * the refresh or after it; a change to one makes the analysed query stale like a
 * change to the source; row-level security on one keeps the DELETE of vanished
 * groups. create_flow's fill reads them from the catalog (nothing is cached for it).
 */
List *fn_plans_dimensions(TaskConfig *cfg) {
	RefreshPlans *cur = fn_plans_for(cfg);
	MemoryContext old;

	/* not known since an invalidation: a CREATE OR REPLACE VIEW of a joined view may
	 * have changed the tables under it (utility_hook.c records them again), and they
	 * are locked before the refresh's snapshot from the list read here */
	if (!cur->dimensions_known) {
		list_free(cur->dimensions);
		cur->dimensions = NIL;
		cur->dimensions_known = false; /* until the catalog is read */
		old = MemoryContextSwitchTo(TopMemoryContext);
		cur->dimensions = fn_load_flow_dimensions(cfg->flow_id);
		MemoryContextSwitchTo(old);
		cur->dimensions_known = true;
	}
	return cur->dimensions;
}

/* Whether an index of the source leads with its time column: the take's probes and
 * the refresh read through it. */
bool fn_plans_time_index(TaskConfig *cfg) {
	RefreshPlans *cur = fn_plans_for(cfg);

	if (cur->time_index < 0)
		cur->time_index = fn_btree_index_leads_with(cfg->source_relid, cfg->time_attnum) ? 1 : 0;
	return cur->time_index == 1;
}

/* Whether an index of the sink leads with the window column: the DELETE of vanished
 * groups reads the refreshed windows through it. */
bool fn_plans_sink_window_index(TaskConfig *cfg, FlowQuery *fq) {
	RefreshPlans *cur = fn_plans_for(cfg);

	if (cur->sink_index < 0) {
		AttrNumber attnum = get_attnum(cfg->sink_relid, list_nth(fq->out_names, fq->window_position));

		cur->sink_index =
		    attnum != InvalidAttrNumber && fn_btree_index_leads_with(cfg->sink_relid, attnum) ? 1 : 0;
	}
	return cur->sink_index == 1;
}
