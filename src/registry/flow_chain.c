/*
 * flow_chain.c: chains of flows (docs/reference.md, "Chains of flows"). A flow
 * reads a table when it is the flow's source or a partition under it; a flow feeds
 * another when its sink is a table the other reads. The graph is read from the
 * catalog, which holds a few flows: no index is needed, and every question here is
 * asked by create_flow or flush_flow, never per row.
 */
#include "flownode.h"

#include "registry/flow_chain.h"

#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "lib/stringinfo.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

/* Whether a flow over source_relid reads the rows of table relid: its source, or a
 * partition under it. */
static bool reads_table(Oid source_relid, Oid relid) {
	if (relid == source_relid)
		return true;
	return get_rel_relispartition(relid) && list_member_oid(get_partition_ancestors(relid), source_relid);
}

static List *upstream_in(List *all, Oid source_relid) {
	List *result = NIL;
	ListCell *lc;

	foreach (lc, all) {
		TaskConfig *f = lfirst(lc);

		if (reads_table(source_relid, f->sink_relid))
			result = lappend(result, f);
	}
	return result;
}

List *fn_upstream_flows(const TaskConfig *cfg) {
	return upstream_in(fn_load_all_flows(), cfg->source_relid);
}

/* Depth first: the flows cfg reads from, then cfg. `seen` keeps a cycle (refused at
 * creation, but the catalog may hold one from before) from looping. */
static void add_bottom_up(List *all, TaskConfig *cfg, List **seen, List **order) {
	ListCell *lc;

	*seen = lappend(*seen, cfg);
	foreach (lc, upstream_in(all, cfg->source_relid)) {
		TaskConfig *up = lfirst(lc);

		if (!fn_flows_contain(*seen, up->flow_id))
			add_bottom_up(all, up, seen, order);
	}
	*order = lappend(*order, cfg);
}

List *fn_flows_to_flush(TaskConfig *cfg) {
	List *seen = NIL;
	List *order = NIL;

	add_bottom_up(fn_load_all_flows(), cfg, &seen, &order);
	return order;
}

/* One step of a search for a cycle: the flow that reads the table reached. */
typedef struct ChainStep {
	TaskConfig *flow;
	int from; /* index of the step whose sink this flow reads; -1: the new flow's sink */
} ChainStep;

/* "new" -> "a" -> "b" -> "new": the flows from the new one's sink back to it. */
static char *cycle_path(const char *flow_name, ChainStep *steps, int last) {
	StringInfoData s;
	int path[1024];
	int n = 0;

	for (int i = last; i >= 0 && n < (int)lengthof(path); i = steps[i].from)
		path[n++] = i;
	initStringInfo(&s);
	appendStringInfoString(&s, quote_identifier(flow_name));
	for (int k = n - 1; k >= 0; k--)
		appendStringInfo(&s, " -> %s", quote_identifier(steps[path[k]].flow->flow_name));
	appendStringInfo(&s, " -> %s", quote_identifier(flow_name));
	return s.data;
}

void fn_check_no_cycle(const char *flow_name, Oid source_relid, Oid sink_relid) {
	List *all;
	ChainStep *steps;
	int nsteps = 0;
	int next = 0;

	/* a concurrent create_flow closing the same cycle from the other end locks its
	 * source (this sink) first: one waits for the other and then sees its flow, or
	 * PostgreSQL's deadlock detector stops one of them */
	LockRelationOid(sink_relid, ShareRowExclusiveLock);
	all = fn_load_all_flows();
	steps = palloc(sizeof(ChainStep) * (list_length(all) + 1));
	/* breadth first from the new sink, along the flows that read each table reached */
	for (int from = -1; from < nsteps; from = next++) {
		Oid table = from < 0 ? sink_relid : steps[from].flow->sink_relid;
		ListCell *lc;

		if (from >= 0 && reads_table(source_relid, table))
			ereport(ERROR,
			        (errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
			         errmsg("flow \"%s\" would form a cycle of flows", flow_name),
			         errdetail("Each flow would read the sink of the one before it: %s.",
			                   cycle_path(flow_name, steps, from)),
			         errhint("A flow cannot read, directly or through other flows, the rows it writes.")));
		foreach (lc, all) {
			TaskConfig *f = lfirst(lc);
			bool known = false;

			for (int i = 0; i < nsteps && !known; i++)
				known = steps[i].flow == f;
			if (!known && reads_table(f->source_relid, table)) {
				steps[nsteps].flow = f;
				steps[nsteps].from = from;
				nsteps++;
			}
		}
	}
}
