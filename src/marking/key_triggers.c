/*
 * key_triggers.c: the row triggers of flows whose marks carry keys (docs/internals.md
 * §3, *Key marks*). Per such flow, on every table that holds its rows (its source,
 * or each partition under a partitioned source, present or attached later):
 *   AFTER INSERT ROW WHEN (flownode.mark_keys(named, flow, '{time,k1,...}', NEW))
 *   AFTER UPDATE ROW WHEN (flownode.mark_keys(named, flow, '{time,k1,...}', OLD, NEW))
 *   AFTER DELETE ROW WHEN (flownode.mark_keys(named, flow, '{time,k1,...}', OLD, OLD))
 * (each clause led by flownode.mark_keys_open(named, flow, <the rows' times>) AND,
 * which marks the rows of open windows and lets mark_keys see only late ones: see
 * install) with the trigger function flownode.mark_keyed, which never runs (the
 * clause is always false). `named` is the table's marking source, as its row triggers name it
 * (source_triggers.c); the columns are numbered as the table itself numbers them,
 * since the row passed is its own (a partition attached with dropped columns numbers
 * them otherwise). Their presence is what makes the flow's rows marked with keys: the
 * source cache reads it (a flow with them on every partition is left out of the
 * time-only row marking, mark_row), so the two can never disagree. The clause
 * passes the whole row: a WHEN clause naming a column would forbid ALTER COLUMN
 * TYPE of it, which flownode handles by marking the windows of the rows instead.
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
#include "catalog/pg_extension.h"
#include "catalog/pg_index.h"
#include "catalog/pg_trigger.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parse_func.h"
#include "utils/builtins.h"
#include "storage/proc.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "compat/pg_compat.h"

PG_FUNCTION_INFO_V1(flownode_mark_keyed);

/* One key trigger, as it is told apart: its event, its flow, its columns. */
typedef struct KeyTrigger {
	int16 event;
	int64 flow_id;
	AttrNumber time_attnum; /* as the table numbers it */
	char *columns;          /* "time,k1,k2", as the table numbers them */
	Oid named;              /* the table's marking source, which the clause names */
	bool exists;
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

/* A flow whose marks carry keys, found once per sync (fn_key_flows). */
typedef struct KeyFlow {
	TaskConfig *cfg;
	List *cols; /* time first, then the keys, as the flow's source numbers them */
} KeyFlow;

/* The flow's key columns, time first, or NIL when its marks carry no keys. */
static List *flow_key_columns(TaskConfig *cfg) {
	FlowQuery *fq;
	List *keys;

	if (cfg->waiting || !cfg->bound || cfg->window.kind == FN_WINDOW_NONE)
		return NIL;
	fq = fn_analyze_flow_query(cfg->query, cfg->timezone);
	keys = fn_key_mark_columns(fq, cfg->sink_relid);
	return keys == NIL ? NIL : lcons_int(cfg->time_attnum, keys);
}

/* The columns as relid numbers them: a partition has its source's columns by name. */
static List *columns_in(Oid relid, const TaskConfig *cfg, List *cols) {
	List *mine = NIL;
	ListCell *lc;

	if (relid == cfg->source_relid)
		return cols;
	foreach (lc, cols) {
		AttrNumber a = get_attnum(relid, get_attname(cfg->source_relid, lfirst_int(lc), false));

		if (a == InvalidAttrNumber)
			elog(ERROR, "flownode: partition \"%s\" lacks a key column of flow \"%s\"", get_rel_name(relid),
			     cfg->flow_name);
		mine = lappend_int(mine, a);
	}
	return mine;
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

/* The ids of the flows that have key triggers on some table (int64 *), from
 * pg_trigger: a flow keeps its key triggers, and a partition attached or created
 * later gets them, whatever the setting of the session doing it. */
static List *keyed_flow_ids(Oid fn) {
	Relation tgrel = table_open(TriggerRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple tup;
	List *ids = NIL;

	ScanKeyInit(&key, Anum_pg_trigger_tgfoid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(fn));
	scan = systable_beginscan(tgrel, InvalidOid, false, NULL, 1, &key);
	while (HeapTupleIsValid(tup = systable_getnext(scan))) {
		bool isnull;
		Datum args = heap_getattr(tup, Anum_pg_trigger_tgargs, RelationGetDescr(tgrel), &isnull);
		bytea *b;
		int64 *id;

		if (isnull || ((Form_pg_trigger)GETSTRUCT(tup))->tgnargs < 1)
			continue;
		b = DatumGetByteaPP(args);
		id = palloc(sizeof(int64));
		/* the first argument, NUL-terminated: the flow's id */
		*id = strtoll(pnstrdup(VARDATA_ANY(b), VARSIZE_ANY_EXHDR(b)), NULL, 10);
		ids = lappend(ids, id);
	}
	systable_endscan(scan);
	table_close(tgrel, AccessShareLock);
	return ids;
}

static bool id_member(List *ids, int64 id) {
	ListCell *lc;

	foreach (lc, ids)
		if (*(int64 *)lfirst(lc) == id)
			return true;
	return false;
}

/* A flow gets its key triggers while flownode.key_marks_per_window is above 0 (its
 * default: in the session that creates it, binds it after a restore, updates the
 * extension, or syncs its tables' triggers later) and keeps them; whether a write
 * marks keys follows the writer's setting (0: whole windows). */
List *fn_key_flows(List *flows) {
	Oid fn = LookupFuncName(list_make2(makeString(FLOWNODE_SCHEMA), makeString("mark_keyed")), 0, NULL, true);
	List *ids, *keyed = NIL;
	ListCell *lc;

	if (!OidIsValid(fn) || flows == NIL) /* a catalog older than the library: no key marks */
		return NIL;
	ids = fn_key_marks_per_window == 0 ? keyed_flow_ids(fn) : NIL;
	foreach (lc, flows) {
		TaskConfig *cfg = lfirst(lc);
		KeyFlow *kf;
		List *cols;

		if (fn_key_marks_per_window == 0 && !id_member(ids, cfg->flow_id))
			continue;
		cols = flow_key_columns(cfg);
		if (cols == NIL)
			continue;
		kf = palloc(sizeof(KeyFlow));
		kf->cfg = cfg;
		kf->cols = cols;
		keyed = lappend(keyed, kf);
	}
	return keyed;
}

static KeyFlow *key_flow_of(List *key_flows, int64 flow_id) {
	ListCell *lc;

	foreach (lc, key_flows)
		if (((KeyFlow *)lfirst(lc))->cfg->flow_id == flow_id)
			return lfirst(lc);
	return NULL;
}

/* The key triggers of a table that holds rows: three per keyed flow that reads them. */
static List *needed_key_triggers(Relation rel, Oid named, List *mine, List *key_flows) {
	List *needed = NIL;
	ListCell *lc;

	foreach (lc, mine) {
		KeyFlow *kf = key_flow_of(key_flows, ((TaskConfig *)lfirst(lc))->flow_id);
		List *cols;

		if (kf == NULL)
			continue;
		cols = columns_in(RelationGetRelid(rel), kf->cfg, kf->cols);
		for (int e = 0; e < 3; e++) {
			KeyTrigger *kt = palloc0(sizeof(KeyTrigger));

			kt->event = key_events[e];
			kt->flow_id = kf->cfg->flow_id;
			kt->time_attnum = linitial_int(cols);
			kt->columns = columns_text(cols);
			kt->named = named;
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
	List *args = list_make2(makeString(psprintf(INT64_FORMAT, kt->flow_id)), makeString(kt->columns));

	/* a partition's names its marking source, as its row triggers do (told apart by it) */
	if (kt->named != relid)
		args = lappend(args, makeString(psprintf("%u", kt->named)));
	fn_create_marking_trigger(
	    relid, FLOWNODE_KEYS_TRIGGER_NAME, "mark_keyed", args, (int16)(kt->event | TRIGGER_TYPE_ROW),
	    psprintf("flownode.mark_keys_open('%u'::pg_catalog.oid, '" INT64_FORMAT "'::pg_catalog.int8, %s) AND "
	             "flownode.mark_keys('%u'::pg_catalog.oid, '" INT64_FORMAT
	             "'::pg_catalog.int8, '{%s}'::pg_catalog.int2[], %s)",
	             kt->named, kt->flow_id, times, kt->named, kt->flow_id, kt->columns, rows));
}

/* Whether a trigger of the table is the one kt describes. */
static bool same_key_trigger(const Trigger *t, Oid relid, const KeyTrigger *kt) {
	int nargs = kt->named == relid ? 2 : 3;

	return t->tgnargs == nargs && (t->tgtype & kt->event) != 0 &&
	       strcmp(t->tgargs[0], psprintf(INT64_FORMAT, kt->flow_id)) == 0 &&
	       strcmp(t->tgargs[1], kt->columns) == 0 &&
	       (nargs == 2 || strcmp(t->tgargs[2], psprintf("%u", kt->named)) == 0);
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

			if (!kt->exists && same_key_trigger(t, RelationGetRelid(rel), kt))
				wanted = kt->exists = true;
		}
		if (!wanted)
			doomed = lappend_oid(doomed, t->tgoid);
	}
	return doomed;
}

/* The flows whose index NOTICE this transaction gave (int64 ids as pointers), and
 * the transaction: a table's triggers are synced again by each flow created on it,
 * and each flow is to name its index once. */
static List *noticed_flows = NIL;
static LocalTransactionId noticed_lxid = InvalidLocalTransactionId;

/* The NOTICE of the index that serves a keyed flow's refreshes, on its source, once
 * per flow and transaction (the one that creates the flow: notice_index). */
static void notice_indexes(Relation rel, List *mine, List *key_flows) {
	ListCell *lc;

	if (noticed_lxid != fn_my_lxid()) {
		noticed_flows = NIL; /* its list went with the transaction's memory */
		noticed_lxid = fn_my_lxid();
	}
	foreach (lc, mine) {
		KeyFlow *kf = key_flow_of(key_flows, ((TaskConfig *)lfirst(lc))->flow_id);
		MemoryContext old;

		if (kf == NULL || kf->cfg->source_relid != RelationGetRelid(rel) ||
		    list_member_ptr(noticed_flows, (void *)(intptr_t)kf->cfg->flow_id))
			continue;
		notice_index(rel, kf->cfg, kf->cols);
		old = MemoryContextSwitchTo(TopTransactionContext);
		noticed_flows = lappend(noticed_flows, (void *)(intptr_t)kf->cfg->flow_id);
		MemoryContextSwitchTo(old);
	}
}

void fn_sync_key_triggers(Oid relid, List *mine, Oid named, List *key_flows) {
	Oid fn = LookupFuncName(list_make2(makeString(FLOWNODE_SCHEMA), makeString("mark_keyed")), 0, NULL, true);
	Relation rel;
	List *needed = NIL, *doomed;
	ListCell *lc;

	if (!OidIsValid(fn)) /* a catalog older than the library: no key marks */
		return;
	rel = table_open(relid, AccessShareLock);
	/* row triggers go on tables that hold rows: a partitioned table's never fire */
	if (rel->rd_rel->relkind == RELKIND_RELATION && OidIsValid(named))
		needed = needed_key_triggers(rel, named, mine, key_flows);
	notice_indexes(rel, mine, key_flows);
	doomed = unneeded(rel, fn, needed);
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
static List *index_oids(Oid relid) {
	Relation rel = table_open(relid, AccessShareLock);
	List *oids = RelationGetIndexList(rel);

	table_close(rel, AccessShareLock);
	return oids;
}

/* The index just made (not in `before`) goes with the extension: an automatic
 * dependency, so that DROP EXTENSION flownode drops it instead of refusing (its
 * normal dependency on flownode.key_hash would). The user's own indexes on
 * key_hash keep PostgreSQL's rule: DROP EXTENSION ... CASCADE. */
static void goes_with_extension(Oid sink_relid, List *before) {
	ObjectAddress ext;
	ListCell *lc;

	ObjectAddressSet(ext, ExtensionRelationId, get_extension_oid("flownode", false));
	foreach (lc, index_oids(sink_relid)) {
		ObjectAddress idx;

		if (list_member_oid(before, lfirst_oid(lc)))
			continue;
		ObjectAddressSet(idx, RelationRelationId, lfirst_oid(lc));
		recordDependencyOn(&idx, &ext, DEPENDENCY_AUTO);
	}
}

void fn_key_sink_index(int64 flow_id, Oid sink_relid, const FlowQuery *fq) {
	Oid fn = LookupFuncName(list_make2(makeString(FLOWNODE_SCHEMA), makeString("mark_keyed")), 0, NULL, true);
	StringInfoData s;
	ListCell *lc;
	bool first = true;
	List *before;

	CommandCounterIncrement(); /* the key triggers just installed (on the source or its leaves) */
	if (!OidIsValid(fn) || !id_member(keyed_flow_ids(fn), flow_id))
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
	before = index_oids(sink_relid);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "flownode: SPI_connect failed");
	if (SPI_execute(s.data, false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "flownode: creating the sink's index of key hashes failed");
	SPI_finish();
	CommandCounterIncrement();
	goes_with_extension(sink_relid, before);
	CommandCounterIncrement();
}

/* The trigger's own function never runs: its WHEN clause is always false. */
Datum flownode_mark_keyed(PG_FUNCTION_ARGS) {
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
		                errmsg("flownode.mark_keyed() must be called as an AFTER ROW trigger")));
	return PointerGetDatum(NULL);
}
