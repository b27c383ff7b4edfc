/*
 * source_cache.c: the per-backend cache of each source table's flows and their
 * groups of nesting windows (docs/internals.md §3). Filled from the catalog on a
 * miss, invalidated by relcache callbacks: creating or dropping a flow invalidates
 * the source's relcache entry.
 */
#include "flownode.h"

#include "marking/source_cache.h"

#include "core/time_range.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "registry/flow_registry.h"
#include "parser/parse_func.h"
#include "utils/hsearch.h"
#include "utils/rel.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

static HTAB *source_cache = NULL;
static Oid cached_catalog_relid = InvalidOid;

static void invalidate_source(Datum arg pg_attribute_unused(), Oid relid) {
	HASH_SEQ_STATUS status;
	SourceEntry *e;

	if (source_cache == NULL)
		return;
	if (OidIsValid(relid) && relid != cached_catalog_relid) {
		e = hash_search(source_cache, &relid, HASH_FIND, NULL);
		if (e)
			e->valid = false;
		return;
	}
	hash_seq_init(&status, source_cache);
	while ((e = hash_seq_search(&status)) != NULL)
		e->valid = false;
	cached_catalog_relid = InvalidOid;
}

/* A fixed stride's grid, copied from the core once; -1 for calendar windows. */
static void learn_stride(FlowMarker *m) {
	int known;

	m->stride = -1;
	if (m->window == NULL)
		return;
	known = fn_window_stride(m->window, &m->stride_anchor, &m->stride);
	if (known == 0) {
		(void)fn_window_of(m->window, 0); /* the anchor is a window PostgreSQL computed */
		known = fn_window_stride(m->window, &m->stride_anchor, &m->stride);
	}
	if (known != 1)
		m->stride = -1;
}

static bool same_spec(const FnWindowSpec *a, const FnWindowSpec *b) {
	return a->kind == b->kind && a->with_time_zone == b->with_time_zone && a->stride_time == b->stride_time &&
	       a->stride_day == b->stride_day && a->origin == b->origin &&
	       strncmp(a->unit, b->unit, FN_UNIT_LEN) == 0 && strncmp(a->zone, b->zone, FN_ZONE_LEN) == 0;
}

/* Whether every window of f is a union of the leader's windows. */
static bool nests_in(const FlowMarker *f, const FlowMarker *leader) {
	if (f->time_attnum != leader->time_attnum || !fn_time_input_equal(&f->input, &leader->input))
		return false;
	if (f->window == NULL || leader->window == NULL)
		return f->window == NULL && leader->window == NULL;
	if (f->stride > 0 && leader->stride > 0)
		return fn_stride_nests(f->stride_anchor, f->stride, leader->stride_anchor, leader->stride);
	return f->stride < 0 && leader->stride < 0 && same_spec(&f->spec, &leader->spec);
}

/* Finest fixed strides first (they lead), then calendar windows, then window-less. */
static int flow_order(const void *a, const void *b) {
	const FlowMarker *x = *(FlowMarker *const *)a, *y = *(FlowMarker *const *)b;
	int64 kx = x->window == NULL ? PG_INT64_MAX : x->stride > 0 ? x->stride : PG_INT64_MAX - 1;
	int64 ky = y->window == NULL ? PG_INT64_MAX : y->stride > 0 ? y->stride : PG_INT64_MAX - 1;

	if (kx != ky)
		return kx < ky ? -1 : 1;
	return x->flow_id < y->flow_id ? -1 : x->flow_id > y->flow_id ? 1 : 0;
}

static void build_groups(SourceEntry *e) {
	FlowMarker **order = palloc(sizeof(FlowMarker *) * Max(1, e->nflows));

	e->groups = MemoryContextAllocZero(e->cxt, sizeof(MarkGroup) * Max(1, e->nflows));
	for (int i = 0; i < e->nflows; i++)
		order[i] = &e->flows[i];
	qsort(order, e->nflows, sizeof(FlowMarker *), flow_order);
	for (int i = 0; i < e->nflows; i++) {
		FlowMarker *f = order[i];
		MarkGroup *g = NULL;

		/* a keyed flow's rows are marked apart from the others': a group of its own */
		for (int k = 0; k < e->ngroups && g == NULL && !f->keyed; k++)
			if (!e->groups[k].keyed && nests_in(f, e->groups[k].leader))
				g = &e->groups[k];
		if (g == NULL) {
			g = &e->groups[e->ngroups++];
			g->leader = f;
			g->keyed = f->keyed;
			g->member_ids = MemoryContextAlloc(e->cxt, sizeof(int64) * e->nflows);
		}
		g->member_ids[g->nmembers++] = f->flow_id;
	}
	pfree(order);
}

SourceEntry *fn_source_last = NULL;

/* Counts, per flow of the entry, whether the table has its key triggers (their first
 * argument is the flow's id); whether it has any. */
static bool count_keyed(SourceEntry *e, Oid relid, Oid fn, int *tables) {
	Relation rel = RelationIdGetRelation(relid);
	bool *seen, any = false;

	if (!RelationIsValid(rel))
		return false;
	seen = palloc0(sizeof(bool) * Max(1, e->nflows));
	for (int i = 0; rel->trigdesc && i < rel->trigdesc->numtriggers; i++) {
		const Trigger *t = &rel->trigdesc->triggers[i];
		int64 id;

		if (t->tgfoid != fn || t->tgnargs < 1)
			continue;
		id = strtoll(t->tgargs[0], NULL, 10);
		for (int k = 0; k < e->nflows; k++)
			if (e->flows[k].flow_id == id && !seen[k]) {
				seen[k] = any = true;
				tables[k]++;
			}
	}
	RelationClose(rel);
	pfree(seen);
	return any;
}

/*
 * The flows whose key triggers are on the table (key_triggers.c) or, for a
 * partitioned table, on every partition that holds rows under it: a flow is marked
 * by keys only where every row that reaches this entry passes a key trigger of it
 * (a partition without them, its rows marked by mark_row alone, would lose them).
 * The triggers go on and off by fn_sync_marking_triggers, which invalidates the
 * entries of the tree and of the tables above it.
 */
static void find_keyed(SourceEntry *e) {
	Oid fn = LookupFuncName(list_make2(makeString(FLOWNODE_SCHEMA), makeString("mark_keyed")), 0, NULL, true);
	List *leaves = list_make1_oid(e->relid);
	int *tables, nleaves = 0;
	ListCell *lc;

	if (!OidIsValid(fn) || e->nflows == 0)
		return;
	if (get_rel_relkind(e->relid) == RELKIND_PARTITIONED_TABLE)
		leaves = find_all_inheritors(e->relid, NoLock, NULL);
	tables = palloc0(sizeof(int) * e->nflows);
	foreach (lc, leaves) {
		if (get_rel_relkind(lfirst_oid(lc)) != RELKIND_RELATION)
			continue;
		/* a first table without any: no flow is keyed, the rest need not be read */
		if (!count_keyed(e, lfirst_oid(lc), fn, tables) && nleaves == 0)
			break;
		nleaves++;
	}
	for (int k = 0; k < e->nflows && nleaves > 0; k++)
		e->flows[k].keyed = tables[k] == nleaves;
	pfree(tables);
}

/*
 * The flow's time column as the table numbers its columns: a partition of the
 * flow's source has the same columns by name, not always at the same positions
 * (columns dropped before it was attached). 0: window-less.
 */
AttrNumber fn_time_attnum_in(Oid relid, const TaskConfig *cfg) {
	char *name;
	AttrNumber attnum;

	if (cfg->time_attnum == 0 || cfg->source_relid == relid)
		return cfg->time_attnum;
	name = get_attname(cfg->source_relid, cfg->time_attnum, false);
	attnum = get_attnum(relid, name);
	if (attnum == InvalidAttrNumber)
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_COLUMN),
		                errmsg("table \"%s\" has no column \"%s\", the time column of flow \"%s\"",
		                       get_rel_name(relid), name, cfg->flow_name)));
	return attnum;
}

SourceEntry *fn_source_entry_lookup(Oid relid) {
	SourceEntry *e;
	bool found;
	List *configs;
	ListCell *lc;
	int i = 0;

	if (source_cache == NULL) {
		HASHCTL ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(SourceEntry);
		ctl.hcxt = CacheMemoryContext;
		source_cache = hash_create("flownode sources", 32, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	e = hash_search(source_cache, &relid, HASH_ENTER, &found);
	if (found && e->valid) {
		fn_source_last = e;
		return e;
	}
	if (!found)
		e->cxt = NULL;
	if (e->cxt)
		MemoryContextDelete(e->cxt);
	e->cxt = NULL;
	e->valid = false;
	e->nflows = 0;
	e->flows = NULL;
	e->ngroups = 0;
	e->groups = NULL;
	e->writer_checked = InvalidOid;

	cached_catalog_relid = fn_catalog_relid(false);
	/* the table's own flows and, for a partition, those of the tables above it */
	configs = fn_load_flows_over(relid);
	e->cxt = AllocSetContextCreate(CacheMemoryContext, "flownode source", ALLOCSET_SMALL_SIZES);
	e->flows = MemoryContextAllocZero(e->cxt, sizeof(FlowMarker) * Max(1, list_length(configs)));
	foreach (lc, configs) {
		TaskConfig *cfg = lfirst(lc);
		FlowMarker *m = &e->flows[i++];
		AttrNumber attnum = fn_time_attnum_in(relid, cfg);
		MemoryContext old = MemoryContextSwitchTo(e->cxt);

		m->flow_id = cfg->flow_id;
		m->owner = cfg->owner;
		m->source_relid = cfg->source_relid;
		m->sink_relid = cfg->sink_relid;
		m->time_attnum = attnum;
		m->spec = cfg->window;
		m->input = cfg->input;
		m->window = (cfg->window.kind == FN_WINDOW_NONE) ? NULL : fn_window_create(&cfg->window);
		if (cfg->expire_after != NULL) {
			m->expire_after = palloc(sizeof(Interval));
			*m->expire_after = *cfg->expire_after;
		}
		m->timezone = pstrdup(cfg->timezone);
		MemoryContextSwitchTo(old);
		learn_stride(m);
	}
	e->nflows = i;
	find_keyed(e);
	build_groups(e);
	e->valid = true;
	fn_source_last = e;
	return e;
}

FlowMarker *fn_find_flow(SourceEntry *e, int64 flow_id) {
	for (int i = 0; i < e->nflows; i++)
		if (e->flows[i].flow_id == flow_id)
			return &e->flows[i];
	return NULL;
}

/* The window of ts in the flow's own windows (a time past the largest timestamp: the last). */
FnTimeRange fn_flow_window_at(const FlowMarker *m, int64 ts) {
	if (m->stride > 0)
		return fn_stride_window(m->stride_anchor, m->stride, ts);
	return fn_window_of(m->window, ts);
}

void fn_source_cache_init(void) {
	CacheRegisterRelcacheCallback(invalidate_source, (Datum)0);
}
