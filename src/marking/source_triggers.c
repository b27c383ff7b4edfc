/*
 * source_triggers.c: the triggers create_flow puts on a source table, and their
 * removal once no flow needs them.
 *
 * Per time column a flow reads (attnum 0: window-less flows, which any row dirties):
 *   AFTER INSERT ROW  WHEN (flownode.mark_row(source, attnum, NEW.ts))
 *   AFTER UPDATE ROW  WHEN (flownode.mark_row_removed(source, attnum, OLD.ts, NEW.ts))
 *   AFTER DELETE ROW  WHEN (flownode.mark_row_removed(source, attnum, OLD.ts, OLD.ts))
 * and one AFTER TRUNCATE statement trigger per source. The WHEN clause does the
 * marking and is always false, so no after-trigger event is ever queued (see
 * mark_triggers.c). The triggers are internal: hidden from \d and pg_dump, left
 * alone by DISABLE TRIGGER USER. PostgreSQL suffixes internal trigger names, so
 * they are found by function, events and the attnum kept as their argument.
 */
#include "flownode.h"

#include "marking/source_triggers.h"

#include "registry/flow_registry.h"

#include "catalog/dependency.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_trigger.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "access/table.h"
#include "nodes/makefuncs.h"
#include "parser/parser.h"
#include "parser/parse_func.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#define ROW_EVENTS (TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE | TRIGGER_TYPE_DELETE | TRIGGER_TYPE_TRUNCATE)
#define NO_ATTNUM (-1) /* the TRUNCATE trigger marks no column */

static Oid marking_function(const char *name) {
	return LookupFuncName(list_make2(makeString(FLOWNODE_SCHEMA), makeString((char *)name)), 0, NULL, false);
}

static int trigger_attnum(const Trigger *t) {
	return t->tgnargs == 1 ? atoi(t->tgargs[0]) : NO_ATTNUM;
}

static Oid find_trigger(Oid source_relid, const char *func, int16 events, int attnum) {
	Oid funcoid = marking_function(func);
	Relation rel = table_open(source_relid, AccessShareLock);
	Oid found = InvalidOid;

	for (int i = 0; rel->trigdesc && i < rel->trigdesc->numtriggers; i++) {
		const Trigger *t = &rel->trigdesc->triggers[i];

		if (t->tgfoid == funcoid && (t->tgtype & ROW_EVENTS) == events && trigger_attnum(t) == attnum)
			found = t->tgoid;
	}
	table_close(rel, AccessShareLock);
	return found;
}

/* The WHEN clause's raw parse tree, from its text: the column name is quoted by
 * quote_identifier and the rest is ours. */
static Node *when_clause(const char *sql) {
	List *raw = raw_parser(psprintf("SELECT %s", sql), RAW_PARSE_DEFAULT);
	SelectStmt *select = (SelectStmt *)linitial_node(RawStmt, raw)->stmt;

	return ((ResTarget *)linitial(select->targetList))->val;
}

static void install_trigger(Oid source_relid, const char *name, const char *func, int16 events, bool row,
                            int attnum, const char *when) {
	CreateTrigStmt *stmt;
	ObjectAddress trig, ext;

	if (OidIsValid(find_trigger(source_relid, func, events, attnum)))
		return;
	stmt = makeNode(CreateTrigStmt);
	stmt->replace = false;
	stmt->isconstraint = false;
	stmt->trigname = (char *)name;
	stmt->relation =
	    makeRangeVar(get_namespace_name(get_rel_namespace(source_relid)), get_rel_name(source_relid), -1);
	stmt->funcname = list_make2(makeString(FLOWNODE_SCHEMA), makeString((char *)func));
	stmt->args = attnum == NO_ATTNUM ? NIL : list_make1(makeString(psprintf("%d", attnum)));
	stmt->row = row;
	stmt->timing = TRIGGER_TYPE_AFTER;
	stmt->events = events;
	stmt->columns = NIL;
	stmt->whenClause = when ? when_clause(when) : NULL;
	stmt->transitionRels = NIL;
	stmt->deferrable = false;
	stmt->initdeferred = false;
	stmt->constrrel = NULL;
	/* fired in every replication role from the start (fn_keep_marking_always) */
	trig = CreateTriggerFiringOn(stmt, NULL, source_relid, InvalidOid, InvalidOid, InvalidOid, InvalidOid,
	                             InvalidOid, NULL, true, false, TRIGGER_FIRES_ALWAYS);
	/* DROP EXTENSION takes the triggers with it */
	ObjectAddressSet(ext, ExtensionRelationId, get_extension_oid("flownode", false));
	recordDependencyOn(&trig, &ext, DEPENDENCY_AUTO);
	CommandCounterIncrement();
}

static bool is_marking_trigger(const Trigger *t) {
	return t->tgfoid == marking_function("mark_insert") || t->tgfoid == marking_function("mark_dirty") ||
	       t->tgfoid == marking_function("mark_truncate");
}

/*
 * Marking changes no data, so the triggers fire in every replication role
 * (ENABLE ALWAYS): a logical replication apply, session_replication_role = replica
 * and pg_restore --disable-triggers' ENABLE TRIGGER ALL all keep marking. A trigger
 * someone disabled stays disabled (flows.marking_enabled shows it; refresh_flow
 * repairs what it missed). Changing an internal trigger takes a superuser, as does
 * the ENABLE TRIGGER ALL that made it fire on origin only (new triggers are created
 * firing always).
 */
void fn_keep_marking_always(Oid source_relid) {
	Relation rel;
	List *names = NIL;
	ListCell *lc;

	if (!superuser())
		return;
	rel = table_open(source_relid, ShareRowExclusiveLock);

	for (int i = 0; rel->trigdesc && i < rel->trigdesc->numtriggers; i++) {
		const Trigger *t = &rel->trigdesc->triggers[i];

		if (is_marking_trigger(t) && t->tgenabled != TRIGGER_FIRES_ALWAYS && t->tgenabled != TRIGGER_DISABLED)
			names = lappend(names, pstrdup(t->tgname));
	}
	foreach (lc, names)
		EnableDisableTrigger(rel, lfirst(lc), TRIGGER_FIRES_ALWAYS, false, ShareRowExclusiveLock);
	table_close(rel, NoLock);
	if (names != NIL)
		CommandCounterIncrement();
}

bool fn_marking_enabled(Oid source_relid) {
	Relation rel = table_open(source_relid, AccessShareLock);
	bool any = false, all = true;

	for (int i = 0; rel->trigdesc && i < rel->trigdesc->numtriggers; i++) {
		const Trigger *t = &rel->trigdesc->triggers[i];

		if (!is_marking_trigger(t))
			continue;
		any = true;
		all &= t->tgenabled == TRIGGER_FIRES_ALWAYS;
	}
	table_close(rel, AccessShareLock);
	return any && all;
}

void fn_install_source_triggers(Oid source_relid, AttrNumber time_attnum) {
	Oid relid = source_relid;
	int a = time_attnum;
	char *col_new, *col_old;

	if (time_attnum > 0) {
		const char *col = quote_identifier(get_attname(source_relid, time_attnum, false));

		col_new = psprintf("NEW.%s", col);
		col_old = psprintf("OLD.%s", col);
	} else /* window-less: the row's values do not matter */
		col_new = col_old = "NULL::pg_catalog.timestamptz";

	install_trigger(
	    source_relid, FLOWNODE_INSERT_TRIGGER_NAME, "mark_insert", TRIGGER_TYPE_INSERT, true, a,
	    psprintf("flownode.mark_row('%u'::pg_catalog.oid, '%d'::pg_catalog.int2, %s)", relid, a, col_new));
	install_trigger(source_relid, FLOWNODE_UPDATE_TRIGGER_NAME, "mark_dirty", TRIGGER_TYPE_UPDATE, true, a,
	                psprintf("flownode.mark_row_removed('%u'::pg_catalog.oid, '%d'::pg_catalog.int2, %s, %s)",
	                         relid, a, col_old, col_new));
	install_trigger(source_relid, FLOWNODE_DELETE_TRIGGER_NAME, "mark_dirty", TRIGGER_TYPE_DELETE, true, a,
	                psprintf("flownode.mark_row_removed('%u'::pg_catalog.oid, '%d'::pg_catalog.int2, %s, %s)",
	                         relid, a, col_old, col_old));
	install_trigger(source_relid, FLOWNODE_TRUNCATE_TRIGGER_NAME, "mark_truncate", TRIGGER_TYPE_TRUNCATE,
	                false, NO_ATTNUM, NULL);
	fn_keep_marking_always(source_relid);
	CacheInvalidateRelcacheByRelid(source_relid);
}

/*
 * Removes the source's triggers that no flow needs any more: the row triggers of a
 * time column no flow reads, and all of them when no flow reads the source.
 */
void fn_remove_triggers_if_unused(Oid source_relid) {
	List *flows;
	List *doomed = NIL;
	Oid insert_fn, dirty_fn, truncate_fn;
	Relation rel;
	ListCell *lc;

	if (!OidIsValid(get_rel_namespace(source_relid)))
		return; /* the source itself is gone */
	flows = fn_load_flows_of_source(source_relid);
	insert_fn = marking_function("mark_insert");
	dirty_fn = marking_function("mark_dirty");
	truncate_fn = marking_function("mark_truncate");
	rel = table_open(source_relid, AccessShareLock);
	for (int i = 0; rel->trigdesc && i < rel->trigdesc->numtriggers; i++) {
		const Trigger *t = &rel->trigdesc->triggers[i];
		bool used = false;

		if (t->tgfoid != insert_fn && t->tgfoid != dirty_fn && t->tgfoid != truncate_fn)
			continue;
		foreach (lc, flows) {
			TaskConfig *cfg = lfirst(lc);

			used |= t->tgfoid == truncate_fn || trigger_attnum(t) == cfg->time_attnum;
		}
		if (!used)
			doomed = lappend_oid(doomed, t->tgoid);
	}
	table_close(rel, AccessShareLock);
	foreach (lc, doomed) {
		ObjectAddress addr;

		ObjectAddressSet(addr, TriggerRelationId, lfirst_oid(lc));
		performDeletion(&addr, DROP_RESTRICT, PERFORM_DELETION_INTERNAL);
	}
	if (doomed != NIL)
		CacheInvalidateRelcacheByRelid(source_relid);
}
