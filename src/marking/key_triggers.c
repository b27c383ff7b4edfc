/*
 * key_triggers.c: the row triggers of flows whose marks carry keys (docs/internals.md
 * §3, *Key marks*). Per such flow, on its source table (a plain one: partitions and
 * partitioned tables keep whole-window marks):
 *   AFTER INSERT ROW WHEN (flownode.mark_keys(source, flow, '{time,k1,...}', NEW))
 *   AFTER UPDATE ROW WHEN (flownode.mark_keys(source, flow, '{time,k1,...}', OLD, NEW))
 *   AFTER DELETE ROW WHEN (flownode.mark_keys(source, flow, '{time,k1,...}', OLD, OLD))
 * (each clause led by flownode.mark_keys_open(source, flow, <the rows' times>) AND,
 * which marks the rows of open windows and lets mark_keys see only late ones: see
 * install) with the trigger function flownode.mark_keyed, which never runs (the
 * clause is always false). Their presence is what makes the flow's rows marked with keys: the
 * source cache reads it (a flow with them is left out of the time-only row marking,
 * mark_row), so the two can never disagree. The clause passes the whole row: a WHEN
 * clause naming a column would forbid ALTER COLUMN TYPE of it, which flownode
 * handles by marking the windows of the rows instead.
 */
#include "flownode.h"

#include "marking/key_triggers.h"

#include "marking/internal_trigger.h"
#include "query/flow_query.h"
#include "query/key_columns.h"
#include "query/key_filter.h"
#include "registry/flow_registry.h"

#include "access/genam.h"
#include "access/table.h"
#include "catalog/pg_am.h"
#include "catalog/dependency.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_trigger.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parse_func.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

PG_FUNCTION_INFO_V1(flownode_mark_keyed);

/* One key trigger, as it is told apart: its event, its flow, its columns. */
typedef struct KeyTrigger {
	int16 event;
	int64 flow_id;
	AttrNumber time_attnum;
	char *columns; /* "time,k1,k2" */
	bool exists;
	TaskConfig *cfg; /* its flow, for the NOTICE of a trigger installed now */
	List *cols;      /* its columns, as attnums */
} KeyTrigger;

static const int16 key_events[3] = {TRIGGER_TYPE_INSERT, TRIGGER_TYPE_UPDATE, TRIGGER_TYPE_DELETE};

static char *columns_text(List *attnums) {
	StringInfoData s;
	ListCell *lc;

	initStringInfo(&s);
	foreach (lc, attnums)
		appendStringInfo(&s, "%s%d", s.len ? "," : "", lfirst_int(lc));
	return s.data;
}

/* The flow's key columns, time first, or NIL when its marks carry no keys. */
static List *flow_key_columns(TaskConfig *cfg, Oid relid) {
	FlowQuery *fq;
	List *keys;

	if (cfg->source_relid != relid || cfg->waiting || !cfg->bound || cfg->window.kind == FN_WINDOW_NONE)
		return NIL;
	fq = fn_analyze_flow_query(cfg->query, cfg->timezone);
	keys = fn_key_mark_columns(fq, cfg->sink_relid);
	return keys == NIL ? NIL : lcons_int(cfg->time_attnum, keys);
}

/* Whether an index of the table leads with flownode.key_hash(<keys>) then the time. */
static bool has_key_index(Relation rel, List *cols) {
	List *indexes = RelationGetIndexList(rel);
	ListCell *lc;

	foreach (lc, indexes) {
		Relation idx = index_open(lfirst_oid(lc), AccessShareLock);
		Form_pg_index form = idx->rd_index;
		List *exprs = RelationGetIndexExpressions(idx);
		bool match = form->indnkeyatts >= 2 && form->indkey.values[0] == 0 && exprs != NIL &&
		             form->indkey.values[1] == linitial_int(cols) && idx->rd_rel->relam == BTREE_AM_OID;

		if (match) {
			FuncExpr *f = linitial(exprs);
			ListCell *a, *c = lnext(cols, list_head(cols));

			match = IsA(f, FuncExpr) && strcmp(get_func_name(f->funcid), "key_hash") == 0 &&
			        list_length(f->args) == list_length(cols) - 1;
			foreach (a, match ? f->args : NIL) {
				match &= IsA(lfirst(a), Var) && ((Var *)lfirst(a))->varattno == lfirst_int(c);
				c = lnext(cols, c);
			}
		}
		index_close(idx, AccessShareLock);
		if (match)
			return true;
	}
	return false;
}

static void notice_index(Relation rel, TaskConfig *cfg, List *cols) {
	StringInfoData s;
	ListCell *lc;

	if (!cfg->created_here || has_key_index(rel, cols))
		return;
	initStringInfo(&s);
	appendStringInfo(&s, "CREATE INDEX ON %s (flownode.key_hash(",
	                 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
	                                            RelationGetRelationName(rel)));
	for_each_from(lc, cols, 1)
	    appendStringInfo(&s, "%s%s", foreach_current_index(lc) > 1 ? ", " : "",
	                     quote_identifier(get_attname(rel->rd_id, lfirst_int(lc), false)));
	appendStringInfo(&s, "), %s)", quote_identifier(get_attname(rel->rd_id, linitial_int(cols), false)));
	ereport(NOTICE,
	        (errmsg("flow \"%s\" refreshes the groups a late row touched by their keys", cfg->flow_name),
	         errdetail("Without an index on the keys' hash and the time column, each such refresh reads "
	                   "whole windows of the source."),
	         errhint("Create one with: %s", s.data)));
}

/* Whether the flow has key triggers on the table already. */
static bool keyed_already(Relation rel, Oid fn, int64 flow_id) {
	for (int i = 0; rel->trigdesc && i < rel->trigdesc->numtriggers; i++) {
		const Trigger *t = &rel->trigdesc->triggers[i];

		if (t->tgfoid == fn && t->tgnargs >= 1 && strtoll(t->tgargs[0], NULL, 10) == flow_id)
			return true;
	}
	return false;
}

/* A flow gets its key triggers while flownode.key_marks_per_window is above 0 (its
 * default: in the session that creates it, binds it after a restore, updates the
 * extension, or syncs its table's triggers later) and keeps them; whether a write
 * marks keys follows the writer's setting (0: whole windows). */
static List *needed_key_triggers(Relation rel, Oid fn, List *flows) {
	List *needed = NIL;
	ListCell *lc;

	foreach (lc, flows) {
		TaskConfig *cfg = lfirst(lc);
		List *cols;

		if (fn_key_marks_per_window == 0 && !keyed_already(rel, fn, cfg->flow_id))
			continue;
		cols = flow_key_columns(cfg, RelationGetRelid(rel));

		if (cols == NIL)
			continue;
		for (int e = 0; e < 3; e++) {
			KeyTrigger *kt = palloc0(sizeof(KeyTrigger));

			kt->event = key_events[e];
			kt->flow_id = cfg->flow_id;
			kt->time_attnum = linitial_int(cols);
			kt->columns = columns_text(cols);
			kt->cfg = cfg;
			kt->cols = cols;
			needed = lappend(needed, kt);
		}
	}
	return needed;
}

/*
 * The clause is two calls, evaluated in order, the second only when the first is
 * true: mark_keys_open marks the rows of open windows whole from their times (the
 * time column is named by the table's time triggers already, so naming it here
 * forbids nothing more), and is true only when a row's window is closed; then
 * mark_keys marks the key from the whole row. Streaming ingest into the open window
 * never builds the whole row (a copy of the tuple per row and trigger: 1,800
 * instructions a row of a COPY, bench/callgrind.sh).
 */
static void install(Oid relid, const KeyTrigger *kt) {
	/* two rows for an UPDATE or a DELETE (OLD twice): rows may leave their groups */
	const char *rows = kt->event == TRIGGER_TYPE_INSERT   ? "NEW"
	                   : kt->event == TRIGGER_TYPE_UPDATE ? "OLD, NEW"
	                                                      : "OLD, OLD";
	const char *t = quote_identifier(get_attname(relid, kt->time_attnum, false));
	const char *times = kt->event == TRIGGER_TYPE_INSERT   ? psprintf("NEW.%s", t)
	                    : kt->event == TRIGGER_TYPE_UPDATE ? psprintf("OLD.%s, NEW.%s", t, t)
	                                                       : psprintf("OLD.%s, OLD.%s", t, t);

	fn_create_marking_trigger(
	    relid, FLOWNODE_KEYS_TRIGGER_NAME, "mark_keyed",
	    list_make2(makeString(psprintf(INT64_FORMAT, kt->flow_id)), makeString(kt->columns)),
	    (int16)(kt->event | TRIGGER_TYPE_ROW),
	    psprintf("flownode.mark_keys_open('%u'::pg_catalog.oid, '" INT64_FORMAT "'::pg_catalog.int8, %s) AND "
	             "flownode.mark_keys('%u'::pg_catalog.oid, '" INT64_FORMAT
	             "'::pg_catalog.int8, '{%s}'::pg_catalog.int2[], %s)",
	             relid, kt->flow_id, times, relid, kt->flow_id, kt->columns, rows));
}

/* The key triggers the table has that `needed` lacks (their OIDs); marks the others found. */
static List *unneeded(Relation rel, Oid fn, List *needed) {
	List *doomed = NIL;

	for (int i = 0; rel->trigdesc && i < rel->trigdesc->numtriggers; i++) {
		const Trigger *t = &rel->trigdesc->triggers[i];
		bool wanted = false;
		ListCell *lc;

		if (t->tgfoid != fn)
			continue;
		foreach (lc, needed) {
			KeyTrigger *kt = lfirst(lc);

			if (!kt->exists && t->tgnargs == 2 && (t->tgtype & kt->event) != 0 &&
			    strcmp(t->tgargs[0], psprintf(INT64_FORMAT, kt->flow_id)) == 0 &&
			    strcmp(t->tgargs[1], kt->columns) == 0)
				wanted = kt->exists = true;
		}
		if (!wanted)
			doomed = lappend_oid(doomed, t->tgoid);
	}
	return doomed;
}

void fn_sync_key_triggers(Oid relid, List *flows) {
	Oid fn = LookupFuncName(list_make2(makeString(FLOWNODE_SCHEMA), makeString("mark_keyed")), 0, NULL, true);
	Relation rel;
	List *needed = NIL, *doomed;
	ListCell *lc;

	if (!OidIsValid(fn)) /* a catalog older than the library: no key marks */
		return;
	rel = table_open(relid, AccessShareLock);
	if (rel->rd_rel->relkind == RELKIND_RELATION && !rel->rd_rel->relispartition)
		needed = needed_key_triggers(rel, fn, flows);
	doomed = unneeded(rel, fn, needed);
	/* the index to create is named once, when the flow's triggers are installed (not
	 * at every later sync of the table in the flow's creating transaction) */
	foreach (lc, needed) {
		KeyTrigger *kt = lfirst(lc);

		if (!kt->exists && kt->event == TRIGGER_TYPE_INSERT)
			notice_index(rel, kt->cfg, kt->cols);
	}
	table_close(rel, AccessShareLock);
	foreach (lc, doomed) {
		ObjectAddress addr;

		ObjectAddressSet(addr, TriggerRelationId, lfirst_oid(lc));
		performDeletion(&addr, DROP_RESTRICT, PERFORM_DELETION_INTERNAL);
	}
	if (doomed != NIL)
		CommandCounterIncrement();
	foreach (lc, needed)
		if (!((KeyTrigger *)lfirst(lc))->exists)
			install(relid, lfirst(lc));
}

/*
 * A key refresh deletes the sink's groups of its windows and marked hashes that it did
 * not recompute, so it reads them first (refresh_sql.c, fn_old): by the window alone,
 * it hashes every group of the windows, as many as there are keys (20,000 devices:
 * longer than the recompute of the group). A sink create_flow made for a keyed flow
 * gets the index that reads exactly those groups.
 */
void fn_key_sink_index(int64 flow_id, Oid source_relid, Oid sink_relid, const FlowQuery *fq) {
	Oid fn = LookupFuncName(list_make2(makeString(FLOWNODE_SCHEMA), makeString("mark_keyed")), 0, NULL, true);
	Relation rel;
	bool keyed;
	StringInfoData s;
	ListCell *lc;
	bool first = true;

	CommandCounterIncrement(); /* the key triggers just installed */
	rel = table_open(source_relid, AccessShareLock);
	keyed = OidIsValid(fn) && keyed_already(rel, fn, flow_id);
	table_close(rel, AccessShareLock);
	if (!keyed)
		return;
	initStringInfo(&s);
	appendStringInfo(&s, "CREATE INDEX ON %s (" FN_KEY_HASH_FUNCTION "(",
	                 quote_qualified_identifier(get_namespace_name(get_rel_namespace(sink_relid)),
	                                            get_rel_name(sink_relid)));
	foreach (lc, fq->key_positions) {
		if (lfirst_int(lc) == fq->window_position)
			continue;
		appendStringInfo(&s, "%s%s", first ? "" : ", ",
		                 quote_identifier(list_nth(fq->out_names, lfirst_int(lc))));
		first = false;
	}
	appendStringInfo(&s, "), %s)", quote_identifier(list_nth(fq->out_names, fq->window_position)));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "flownode: SPI_connect failed");
	if (SPI_execute(s.data, false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "flownode: creating the sink's index of key hashes failed");
	SPI_finish();
	CommandCounterIncrement();
}

/* The trigger's own function never runs: its WHEN clause is always false. */
Datum flownode_mark_keyed(PG_FUNCTION_ARGS) {
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
		                errmsg("flownode.mark_keyed() must be called as an AFTER ROW trigger")));
	return PointerGetDatum(NULL);
}
