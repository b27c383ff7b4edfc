/*
 * internal_trigger.c: creates one of flownode's internal marking triggers (a
 * source's, a dimension's, a keyed flow's: source_triggers.c, key_triggers.c).
 * Internal triggers are hidden from \d and pg_dump, left alone by DISABLE TRIGGER
 * USER, fire in every replication role, and go with the extension.
 */
#include "flownode.h"

#include "marking/internal_trigger.h"

#include "catalog/dependency.h"
#include "catalog/objectaddress.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_trigger.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "nodes/makefuncs.h"
#include "parser/parser.h"
#include "utils/lsyscache.h"

#define ROW_EVENTS (TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE | TRIGGER_TYPE_DELETE | TRIGGER_TYPE_TRUNCATE)

/* The WHEN clause's raw parse tree, from its text: the column name is quoted by
 * quote_identifier and the rest is ours. */
static Node *when_clause(const char *sql) {
	List *raw = raw_parser(psprintf("SELECT %s", sql), RAW_PARSE_DEFAULT);
	SelectStmt *select = (SelectStmt *)linitial_node(RawStmt, raw)->stmt;

	return ((ResTarget *)linitial(select->targetList))->val;
}

void fn_create_marking_trigger(Oid relid, const char *name, const char *func, List *args, int16 type,
                               const char *when) {
	CreateTrigStmt *stmt = makeNode(CreateTrigStmt);
	ObjectAddress trig, ext;

	stmt->replace = false;
	stmt->isconstraint = false;
	stmt->trigname = (char *)name;
	stmt->relation = makeRangeVar(get_namespace_name(get_rel_namespace(relid)), get_rel_name(relid), -1);
	stmt->funcname = list_make2(makeString(FLOWNODE_SCHEMA), makeString((char *)func));
	stmt->args = args;
	stmt->row = (type & TRIGGER_TYPE_TRUNCATE) == 0;
	stmt->timing = (type & TRIGGER_TYPE_BEFORE) ? TRIGGER_TYPE_BEFORE : TRIGGER_TYPE_AFTER;
	stmt->events = (int16)(type & ROW_EVENTS);
	stmt->columns = NIL;
	stmt->whenClause = when ? when_clause(when) : NULL;
	stmt->transitionRels = NIL;
	stmt->deferrable = false;
	stmt->initdeferred = false;
	stmt->constrrel = NULL;
	/* fired in every replication role from the start (fn_keep_marking_always) */
	trig = CreateTriggerFiringOn(stmt, NULL, relid, InvalidOid, InvalidOid, InvalidOid, InvalidOid,
	                             InvalidOid, NULL, true, false, TRIGGER_FIRES_ALWAYS);
	/* DROP EXTENSION takes the triggers with it */
	ObjectAddressSet(ext, ExtensionRelationId, get_extension_oid("flownode", false));
	recordDependencyOn(&trig, &ext, DEPENDENCY_AUTO);
	CommandCounterIncrement();
}
