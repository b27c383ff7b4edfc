/*
 * stored_query.c: a flow's stored query analysed again, for the bindings of restored
 * flows (lifecycle/flow_binding.c) and for the refreshes that must not write a table
 * such a flow reads before it is bound (refresh/refresh_exec.c).
 */
#include "flownode.h"

#include "registry/stored_query.h"

#include "access/xact.h"
#include "catalog/partition.h"
#include "catalog/pg_inherits.h"
#include "pgutil/pg_util.h"
#include "pgutil/subxact_try.h"
#include "query/query_rewrite.h"
#include "registry/sink_table.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

FlowQuery *fn_analyse_stored(TaskConfig *cfg) {
	int nest = fn_pin_deparse_settings(cfg->timezone);
	FlowQuery *fq = fn_analyze_flow_query(cfg->query, cfg->timezone);

	fn_unpin_settings(nest);
	if (fq->source_relid != cfg->source_relid)
		ereport(ERROR,
		        (errcode(ERRCODE_INVALID_TABLE_DEFINITION),
		         errmsg("the query of flow \"%s\" reads %s, but its source is %s", cfg->flow_name,
		                fn_qualified_relname(fq->source_relid), fn_qualified_relname(cfg->source_relid))));
	return fq;
}

typedef struct AnalyseTry {
	TaskConfig *cfg;
	bool check_sink;
	FlowQuery *fq;
} AnalyseTry;

static bool analyse_work(void *arg) {
	AnalyseTry *t = arg;

	t->fq = fn_analyse_stored(t->cfg);
	if (t->check_sink)
		fn_check_sink(t->cfg->sink_relid, t->fq);
	return true;
}

FlowQuery *fn_analysed_or_null(TaskConfig *cfg, bool check_sink) {
	AnalyseTry t = {cfg, check_sink, NULL};
	ErrorData *edata = fn_try_in_subxact(analyse_work, &t);

	if (edata != NULL) {
		FreeErrorData(edata);
		return NULL;
	}
	return t.fq;
}

TaskConfig *fn_unbound_reader_awaiting_key(Oid relid, int64 except) {
	List *family = list_concat(get_partition_ancestors(relid), find_all_inheritors(relid, NoLock, NULL));
	ListCell *lc, *fc;

	foreach (lc, family)
		foreach (fc, fn_load_unbound_flows_of_table(lfirst_oid(lc))) {
			TaskConfig *cfg = lfirst(fc);

			if (cfg->flow_id != except && !cfg->upgraded && list_member_oid(family, cfg->source_relid) &&
			    fn_analysed_or_null(cfg, true) == NULL)
				return cfg;
		}
	return NULL;
}
