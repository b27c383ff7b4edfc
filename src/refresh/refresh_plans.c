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

#include "utils/inval.h"
#include "utils/memutils.h"

static RefreshPlans *kept[FN_KEPT_FLOWS];
static int nkept = 0;

/* A relcache invalidation of the source, sink or a dimension table (ALTER TABLE,
 * RENAME), or of every relation, makes the flow's analysed query stale: statements
 * built later analyse it again, as the plan cache re-analyses the prepared ones.
 * Only flagged here: a refresh may be using it. */
static void invalidate_plans(Datum arg pg_attribute_unused(), Oid relid) {
	for (int i = 0; i < nkept; i++) {
		RefreshPlans *p = kept[i];

		if (!OidIsValid(relid) || relid == p->source_relid || relid == p->sink_relid ||
		    list_member_oid(p->dimensions, relid))
			p->stale = true;
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
	                     &p->batch};

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
