/*
 * utility_hook.c: flownode's part in DDL on other objects.
 *
 * - DROP DATABASE must not be blocked by the flow workers connected to it: they are
 *   stopped first.
 * - ALTER TABLE ... ENABLE TRIGGER [ALL] makes triggers fire on origin only; a flow's
 *   marking triggers are put back to ALWAYS, so that replica-mode writes keep
 *   marking (pg_restore --disable-triggers ends with ENABLE TRIGGER ALL).
 * - DISABLE TRIGGER [ALL] stops marking: PostgreSQL then bypasses the triggers, and
 *   nothing can mark what is written meanwhile. The writer is told (a WARNING naming
 *   the flows and the repair, refresh_flow), and flows.marking_enabled shows it.
 * - Partitions of a flow's source (docs/internals.md §3): a partition created or
 *   attached gets the marking triggers, and the windows of the rows an attached one
 *   brings are marked; a partition detached or dropped has the windows of its rows
 *   marked first, and loses the triggers; TRUNCATE tells the partitions' BEFORE
 *   TRUNCATE triggers which tables it empties.
 * - A flow follows its tables the way a view does: the stored query names them, so a
 *   rename of a table, of one of its columns or of a schema, or a table moved to
 *   another schema, rewrites the stored query of every flow it touches. Each is
 *   analysed before the command (names to OIDs, while the old names still hold) and
 *   deparsed after it (OIDs to the new names), in the command's transaction.
 * - ALTER COLUMN TYPE (also SET DATA TYPE, USING, COLLATE): column_retype.c.
 * - The command that builds a restored flow's sink key binds the flow
 *   (flow_binding.c): a restore builds keys after every table's rows. A flow of one
 *   row has no key: the COPY of its catalog row binds it, and a COPY into its sink
 *   after that marks its window.
 * - ALTER EXTENSION flownode UPDATE starts the workers of its database's flows.
 * - Nothing of this runs inside flownode's own extension scripts: their catalog is
 *   half-built until they end.
 */
#include "flownode.h"

#include "lifecycle/utility_hook.h"
#include "lifecycle/column_retype.h"
#include "lifecycle/upgrade_binding.h"
#include "pgutil/pg_util.h"
#include "pgutil/subxact_try.h"

#include "access/sysattr.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "commands/dbcommands.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "catalog/pg_inherits.h"
#include "commands/extension.h"
#include "lifecycle/flow_binding.h"
#include "lifecycle/flow_removal.h"
#include "marking/mark_rows.h"
#include "marking/mark_triggers.h"
#include "marking/mark_truncate.h"
#include "marking/source_cache.h"
#include "marking/source_triggers.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "nodes/nodeFuncs.h"
#include "nodes/parsenodes.h"
#include "registry/flow_dimensions.h"
#include "registry/flow_registry.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "worker/launcher.h"
#include "query/flow_query.h"
#include "query/query_rewrite.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

static bool preloaded_hooks = false;

/* Whether the ALTER TABLE enables or disables triggers that may be ours (USER ones
 * never are: ours are internal). */
static void trigger_commands(AlterTableStmt *stmt, bool *enables, bool *disables) {
	ListCell *lc;

	*enables = *disables = false;
	foreach (lc, stmt->cmds) {
		AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);

		switch (cmd->subtype) {
		case AT_EnableTrig:
		case AT_EnableTrigAll:
		case AT_EnableReplicaTrig:
			*enables = true;
			break;
		case AT_DisableTrig:
		case AT_DisableTrigAll:
			*disables = true;
			break;
		default:
			break;
		}
	}
}

/* The flows that join the table as a dimension. */
static List *flows_joining(Oid relid) {
	List *flows = NIL;
	int64 last = -1;
	ListCell *lc;

	foreach (lc, fn_load_dimension_keys(relid)) { /* ordered by flow */
		DimensionKey *k = lfirst(lc);
		TaskConfig *cfg;

		if (k->flow_id == last)
			continue;
		last = k->flow_id;
		cfg = fn_load_task_config(k->flow_id, true);
		if (cfg != NULL)
			flows = lappend(flows, cfg);
	}
	return flows;
}

/* The flows that read the rows of the table the ALTER TABLE names (its own, those of
 * the tables it is a partition of, and those that join it), NIL when none (or no
 * such table). */
static List *flows_of_altered_table(AlterTableStmt *stmt, Oid *relid) {
	if (!OidIsValid(fn_catalog_relid(true)))
		return NIL;
	*relid = RangeVarGetRelid(stmt->relation, NoLock, true);
	if (!OidIsValid(*relid))
		return NIL;
	return list_concat(fn_load_flows_over(*relid), flows_joining(*relid));
}

static void after_trigger_commands(AlterTableStmt *stmt) {
	bool enables, disables;
	Oid relid = InvalidOid;
	List *flows;
	StringInfoData names;
	ListCell *lc;

	trigger_commands(stmt, &enables, &disables);
	if (!enables && !disables)
		return;
	flows = flows_of_altered_table(stmt, &relid);
	if (flows == NIL)
		return;
	if (enables)
		fn_keep_marking_always(relid);
	if (fn_marking_enabled(relid))
		return;
	initStringInfo(&names);
	foreach (lc, flows)
		appendStringInfo(&names, "%s\"%s\"", names.len ? ", " : "", ((TaskConfig *)lfirst(lc))->flow_name);
	ereport(
	    WARNING,
	    (errmsg("writes to \"%s\" are not marked for its flows while their triggers are disabled",
	            get_rel_name(relid)),
	     errdetail("Flows of the table: %s.", names.data),
	     errhint("Enable them again with ALTER TABLE ... ENABLE TRIGGER ALL, then recompute what was written "
	             "meanwhile with flownode.refresh_flow(flow_name, from, to).")));
}

/* A flow whose stored query a rename may rewrite, analysed before it. */
typedef struct Renamed {
	TaskConfig *cfg;
	Query *query;          /* analysed: refers to tables and columns by OID */
	char *old_time_column; /* the time column's name before */
} Renamed;

/* Whether the command renames or moves something a flow's query may name. */
static bool renames(Node *stmt) {
	if (IsA(stmt, RenameStmt)) {
		RenameStmt *r = (RenameStmt *)stmt;

		/* a view a flow joins is named by its query as a table is */
		return r->renameType == OBJECT_TABLE || r->renameType == OBJECT_VIEW ||
		       r->renameType == OBJECT_SCHEMA ||
		       (r->renameType == OBJECT_COLUMN &&
		        (r->relationType == OBJECT_TABLE || r->relationType == OBJECT_VIEW));
	}
	if (IsA(stmt, AlterObjectSchemaStmt))
		return ((AlterObjectSchemaStmt *)stmt)->objectType == OBJECT_TABLE ||
		       ((AlterObjectSchemaStmt *)stmt)->objectType == OBJECT_VIEW;
	return false;
}

/*
 * CREATE OR REPLACE VIEW of a view flows join changes its rows without a write, and
 * its new query may read other tables: before the command, the flows that join it;
 * after it, each flow's query analysed again (a new query that is not deterministic,
 * or reads a foreign table, fails the command, naming it), its dimensions recorded
 * again with their triggers (fn_rebind_dimensions) and every window of its source
 * marked, as ALTER COLUMN TYPE of a column it reads does.
 */
static List *before_view_replace(Node *stmt) {
	ViewStmt *vs = (ViewStmt *)stmt;
	Oid relid;

	if (!IsA(stmt, ViewStmt) || !vs->replace || !OidIsValid(fn_catalog_relid(true)))
		return NIL;
	relid = RangeVarGetRelid(vs->view, NoLock, true);
	if (!OidIsValid(relid) || get_rel_relkind(relid) != RELKIND_VIEW)
		return NIL;
	return flows_joining(relid);
}

static void after_view_replace(List *flows) {
	ListCell *lc;

	foreach (lc, flows) {
		TaskConfig *cfg = lfirst(lc);
		FlowQuery *fq;
		int nest;

		if (!cfg->bound)
			continue; /* its binding finds the dimensions from the query */
		nest = fn_pin_deparse_settings(cfg->timezone);
		fq = fn_analyze_flow_query(cfg->query, cfg->timezone);
		fn_unpin_settings(nest);
		fn_rebind_dimensions(cfg->flow_id, fq->dimensions);
		fn_mark_rows_extent(cfg->source_relid, list_make1(&cfg->flow_id));
	}
}

/* The stored query analysed, or NULL when it does not analyse (a flow already broken
 * stays broken: its refreshes say why); the error is swallowed in a subtransaction. */
typedef struct AnalyseTry {
	TaskConfig *cfg;
	FlowQuery *fq;
} AnalyseTry;

static bool analyse_work(void *arg) {
	AnalyseTry *t = arg;
	int nest = fn_pin_deparse_settings(t->cfg->timezone);

	t->fq = fn_analyze_flow_query(t->cfg->query, t->cfg->timezone);
	fn_unpin_settings(nest);
	return true;
}

static FlowQuery *analyse_or_null(TaskConfig *cfg) {
	AnalyseTry t = {cfg, NULL};
	ErrorData *edata = fn_try_in_subxact(analyse_work, &t);

	if (edata != NULL) {
		FreeErrorData(edata);
		return NULL;
	}
	return t.fq;
}

/* Before a rename: the flows it may touch, analysed while the old names hold. A
 * schema or column rename may touch any flow of the database: there are few. */
static List *before_rename(void) {
	List *flows;
	List *out = NIL;
	ListCell *lc;

	if (!OidIsValid(fn_catalog_relid(true)))
		return NIL;
	flows = fn_load_all_flows();
	foreach (lc, flows) {
		Renamed *r = palloc(sizeof(Renamed));
		FlowQuery *fq;

		r->cfg = lfirst(lc);
		fq = analyse_or_null(r->cfg);
		/* the query as written: what is stored (without the hidden key outputs) */
		r->query = fq != NULL ? fq->as_written : NULL;
		r->old_time_column =
		    r->cfg->time_attnum > 0 ? get_attname(r->cfg->source_relid, r->cfg->time_attnum, true) : NULL;
		if (r->query != NULL)
			out = lappend(out, r);
	}
	return out;
}

/* After it: each query deparsed with the new names, stored where it changed. */
static void after_rename(List *renamed) {
	ListCell *lc;

	if (renamed == NIL)
		return;
	CommandCounterIncrement(); /* the new names */
	foreach (lc, renamed) {
		Renamed *r = lfirst(lc);
		int nest = fn_pin_deparse_settings(r->cfg->timezone);
		char *text = fn_deparse_query(r->query);
		FlowQuery *fq;

		if (strcmp(text, r->cfg->query) == 0) {
			fn_unpin_settings(nest);
			continue;
		}
		/* the new text must analyse to the same query: checked as create_flow does */
		fq = fn_analyze_flow_query(text, r->cfg->timezone);
		fn_unpin_settings(nest);
		{
			/* a renamed time column shows under its new name */
			bool windowed = fq->window.kind != FN_WINDOW_NONE;
			bool column_renamed =
			    windowed && r->old_time_column != NULL && strcmp(fq->time_column, r->old_time_column) != 0;

			fn_registry_update_query(r->cfg->flow_id, text, windowed ? fq->time_column : NULL,
			                         column_renamed ? fq->window_text : NULL);
		}
		CacheInvalidateRelcacheByRelid(r->cfg->source_relid); /* workers and writers read it again */
	}
}

/* Whether the command builds an index on a table or makes one valid (CREATE INDEX,
 * ALTER TABLE ... ADD PRIMARY KEY / UNIQUE / USING INDEX, ALTER INDEX ... ATTACH
 * PARTITION, as pg_dump's post-data section does); its RangeVar then (the
 * partitioned index's for ALTER INDEX). */
static RangeVar *indexed_relation(Node *stmt) {
	ListCell *lc;

	if (IsA(stmt, IndexStmt))
		return ((IndexStmt *)stmt)->relation;
	if (!IsA(stmt, AlterTableStmt))
		return NULL;
	foreach (lc, ((AlterTableStmt *)stmt)->cmds) {
		AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);

		if (cmd->subtype == AT_AddConstraint || cmd->subtype == AT_AddIndex ||
		    cmd->subtype == AT_AddIndexConstraint ||
		    (cmd->subtype == AT_AttachPartition && ((AlterTableStmt *)stmt)->objtype == OBJECT_INDEX))
			return ((AlterTableStmt *)stmt)->relation;
	}
	return NULL;
}

/* Before it: the restored flows of that table (sink or source) that a key is missing
 * for. An index names its table. */
static List *before_index_built(RangeVar *rv) {
	Oid relid;
	char kind;

	if (rv == NULL || !OidIsValid(fn_catalog_relid(true)))
		return NIL;
	relid = RangeVarGetRelid(rv, NoLock, true);
	kind = OidIsValid(relid) ? get_rel_relkind(relid) : '\0';
	if (kind == RELKIND_INDEX || kind == RELKIND_PARTITIONED_INDEX)
		relid = IndexGetRelation(relid, true);
	return OidIsValid(relid) ? fn_restored_flows_awaiting_key(relid) : NIL;
}

/* The table a COPY FROM loads (a restore loads every table so), or InvalidOid. */
static Oid copied_into(Node *stmt) {
	CopyStmt *copy = (CopyStmt *)stmt;

	if (!IsA(stmt, CopyStmt) || !copy->is_from || copy->relation == NULL)
		return InvalidOid;
	return RangeVarGetRelid(copy->relation, NoLock, true);
}

/* Before a COPY FROM or a TRUNCATE: the flows pg_upgrade brought over that read its
 * tables are bound first (upgrade_binding.c). */
static void guard_upgraded_writes(Node *stmt) {
	ListCell *lc;

	if (IsA(stmt, CopyStmt))
		fn_guard_upgraded_write(copied_into(stmt));
	else if (IsA(stmt, TruncateStmt))
		foreach (lc, ((TruncateStmt *)stmt)->relations)
			fn_guard_upgraded_write(RangeVarGetRelid(lfirst_node(RangeVar, lc), NoLock, true));
}

static bool updates_flownode(Node *stmt) {
	return IsA(stmt, AlterExtensionStmt) && strcmp(((AlterExtensionStmt *)stmt)->extname, "flownode") == 0;
}

/* ---- partitions of a flow's source ---- */

/*
 * What a statement does to partition trees, as far as flows care: the partitions it
 * attaches, detaches or creates (their triggers are synced after it), and whether it
 * truncates or drops tables (the lists the triggers and the object-access hook read
 * while it runs).
 */
typedef struct PartitionDdl {
	bool truncating;
	bool dropping;
	List *attach; /* ATTACH PARTITION: (parent, partition) RangeVar pairs */
	List *sync;   /* partitions detached or created: relids or RangeVars */
} PartitionDdl;

/* Whether a flow reads the rows of a table under relid: its own, or one above it. */
static bool flows_over(Oid relid) {
	return OidIsValid(relid) && fn_source_entry(relid)->nflows > 0;
}

/* A table and, when it is partitioned, every partition under it. */
static List *with_partitions(Oid relid) {
	return get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE ? find_all_inheritors(relid, NoLock, NULL)
	                                                           : list_make1_oid(relid);
}

/* TRUNCATE: the tables it empties, for the BEFORE TRUNCATE triggers of partitions. */
static void before_truncate(TruncateStmt *stmt, PartitionDdl *ddl) {
	List *relids = NIL;
	ListCell *lc;

	foreach (lc, stmt->relations) {
		RangeVar *rv = lfirst_node(RangeVar, lc);
		Oid relid = RangeVarGetRelid(rv, NoLock, true);

		if (OidIsValid(relid))
			relids = list_concat(relids, rv->inh ? with_partitions(relid) : list_make1_oid(relid));
	}
	fn_truncate_begin(relids);
	ddl->truncating = true;
}

/*
 * DROP TABLE of a partition of a flow's source: the windows of its rows are marked
 * for the flows above it, read before the drop (through its time index, which goes
 * first in the drop). Locked as the drop locks it (the table above, then the
 * partition). The dropped tables are listed for the object-access hook, which marks
 * everything for a partition dropped without being read here.
 */
static void before_drop(DropStmt *stmt, PartitionDdl *ddl) {
	List *dropped = NIL;
	ListCell *lc;

	foreach (lc, stmt->objects) {
		Oid relid = RangeVarGetRelid(makeRangeVarFromNameList(lfirst(lc)), NoLock, true);
		Oid parent;

		if (!OidIsValid(relid))
			continue;
		dropped = list_concat(dropped, with_partitions(relid));
		parent = get_rel_relispartition(relid) ? get_partition_parent(relid, true) : InvalidOid;
		if (!flows_over(parent))
			continue;
		LockRelationOid(parent, AccessExclusiveLock);
		LockRelationOid(relid, AccessExclusiveLock);
		if (get_rel_relispartition(relid) && get_partition_parent(relid, true) == parent)
			fn_mark_rows_of(relid, parent, true);
	}
	fn_dropping_begin(dropped);
	ddl->dropping = true;
}

/*
 * ALTER TABLE ... DETACH PARTITION: the windows of the partition's rows are marked
 * for the flows above it before it goes (in the first transaction of a DETACH
 * CONCURRENTLY, whose commit takes the partition out of every later snapshot), locked
 * as the command locks; its triggers follow after. ATTACH PARTITION is dealt with
 * after the command.
 */
static void before_alter_partitions(AlterTableStmt *stmt, PartitionDdl *ddl) {
	ListCell *lc;

	if (stmt->objtype != OBJECT_TABLE)
		return;
	foreach (lc, stmt->cmds) {
		AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);
		PartitionCmd *pc;
		Oid parent, part;
		LOCKMODE mode;

		if (cmd->subtype == AT_AttachPartition) {
			pc = (PartitionCmd *)cmd->def;
			ddl->attach = lappend(ddl->attach, list_make2(stmt->relation, pc->name));
			continue;
		}
		if (cmd->subtype != AT_DetachPartition && cmd->subtype != AT_DetachPartitionFinalize)
			continue;
		pc = (PartitionCmd *)cmd->def;
		ddl->sync = lappend(ddl->sync, pc->name);
		parent = RangeVarGetRelid(stmt->relation, NoLock, true);
		part = RangeVarGetRelid(pc->name, NoLock, true);
		/* FINALIZE ends a DETACH CONCURRENTLY whose first transaction marked */
		if (cmd->subtype == AT_DetachPartitionFinalize || !OidIsValid(part) || !flows_over(parent))
			continue;
		mode = pc->concurrent ? ShareUpdateExclusiveLock : AccessExclusiveLock;
		LockRelationOid(parent, mode);
		LockRelationOid(part, mode);
		/* not a partition of it: the command fails, with PostgreSQL's own error */
		if (get_rel_relispartition(part) && get_partition_parent(part, true) == parent)
			fn_mark_rows_of(part, parent, true);
	}
}

static void before_partition_ddl(Node *stmt, PartitionDdl *ddl) {
	if (!IsTransactionState() || !OidIsValid(fn_catalog_relid(true)))
		return;
	if (IsA(stmt, TruncateStmt))
		before_truncate((TruncateStmt *)stmt, ddl);
	else if (IsA(stmt, DropStmt) && ((DropStmt *)stmt)->removeType == OBJECT_TABLE)
		before_drop((DropStmt *)stmt, ddl);
	else if (IsA(stmt, AlterTableStmt))
		before_alter_partitions((AlterTableStmt *)stmt, ddl);
}

static void end_partition_ddl(PartitionDdl *ddl) {
	if (ddl->truncating)
		fn_truncate_end();
	if (ddl->dropping)
		fn_dropping_end();
	ddl->truncating = ddl->dropping = false;
}

/* A partition created, attached or detached gets the triggers the flows over it
 * need, and loses those of flows it is no longer under. */
static void sync_partition(Node *name) {
	Oid relid = IsA(name, RangeVar) ? RangeVarGetRelid((RangeVar *)name, NoLock, true) : InvalidOid;

	if (OidIsValid(relid))
		fn_sync_marking_triggers(relid);
}

/*
 * After the command: a partition created (CREATE TABLE ... PARTITION OF, also of a
 * foreign table, which the sync refuses under a flow) or detached gets its triggers
 * synced; an attached one too, and the windows of the rows it brings are marked for
 * the flows above it.
 */
static void after_partition_ddl(Node *stmt, PartitionDdl *ddl) {
	ListCell *lc;

	if (!IsTransactionState() || !OidIsValid(fn_catalog_relid(true)))
		return;
	if (IsA(stmt, CreateStmt) || IsA(stmt, CreateForeignTableStmt)) {
		CreateStmt *cs = (CreateStmt *)stmt; /* CreateForeignTableStmt begins with one */

		if (cs->partbound != NULL) {
			Oid relid = RangeVarGetRelid(cs->relation, NoLock, true);

			/* (not through the cache: an entry per new partition would stay) */
			if (OidIsValid(relid) && fn_load_flows_over(relid) != NIL)
				fn_sync_marking_triggers(relid);
		}
	}
	foreach (lc, ddl->sync)
		sync_partition(lfirst(lc));
	foreach (lc, ddl->attach) {
		Oid parent = RangeVarGetRelid(linitial(lfirst(lc)), NoLock, true);
		Oid part = RangeVarGetRelid(lsecond(lfirst(lc)), NoLock, true);

		if (!OidIsValid(part) || !flows_over(parent))
			continue;
		fn_sync_marking_triggers(part);
		fn_mark_rows_of(part, parent, false);
	}
}

/* The command itself; the lists the TRUNCATE and DROP set up live only while it runs. */
static void run_command(ProcessUtility_hook_type next, PlannedStmt *pstmt, const char *queryString,
                        bool readOnlyTree, ProcessUtilityContext context, ParamListInfo params,
                        QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc,
                        PartitionDdl *ddl) {
	PG_TRY();
	{
		if (next)
			next(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc);
		else
			standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc);
	}
	PG_CATCH();
	{
		end_partition_ddl(ddl);
		PG_RE_THROW();
	}
	PG_END_TRY();
	end_partition_ddl(ddl);
}

void fn_utility_command(ProcessUtility_hook_type next, PlannedStmt *pstmt, const char *queryString,
                        bool readOnlyTree, ProcessUtilityContext context, ParamListInfo params,
                        QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc) {
	Node *stmt = pstmt->utilityStmt;
	bool ours = IsTransactionState() && !fn_in_own_script();
	PartitionDdl ddl = {0};
	List *renamed = NIL;
	List *awaiting_key = NIL;
	FnRetyped *retyped = NULL;
	List *replaced = NIL;
	Oid dropped_db = InvalidOid;

	if (preloaded_hooks && IsA(stmt, DropdbStmt)) {
		dropped_db = get_database_oid(((DropdbStmt *)stmt)->dbname, true);
		fn_before_drop_database(((DropdbStmt *)stmt)->dbname);
	}
	if (renames(stmt) && ours)
		renamed = before_rename();
	if (ours) {
		awaiting_key = before_index_built(indexed_relation(stmt));
		before_partition_ddl(stmt, &ddl);
		if (IsA(stmt, AlterTableStmt))
			retyped = fn_before_retype((AlterTableStmt *)stmt);
		replaced = before_view_replace(stmt);
		guard_upgraded_writes(stmt);
	}
	run_command(next, pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc, &ddl);
	if (OidIsValid(dropped_db))
		fn_after_drop_database(dropped_db); /* the drop succeeded: nothing rolls it back */
	if (!IsTransactionState() || fn_in_own_script())
		return;
	if (IsA(stmt, AlterTableStmt))
		after_trigger_commands((AlterTableStmt *)stmt);
	after_partition_ddl(stmt, &ddl);
	fn_after_retype(retyped);
	after_view_replace(replaced);
	after_rename(renamed);
	fn_bind_restored_flows(awaiting_key);
	fn_after_copy_from(copied_into(stmt));
	if (updates_flownode(stmt))
		fn_after_extension_update();
}

/* Stopping workers before DROP DATABASE needs shared memory (preloaded). */
void fn_utility_hook_init(bool preloaded) {
	preloaded_hooks = preloaded;
}
