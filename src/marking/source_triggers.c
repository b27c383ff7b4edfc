/*
 * source_triggers.c: the triggers flownode puts on a flow's source table, and on
 * every partition of a partitioned one, kept to what the flows need.
 *
 * On a table whose rows a flow reads (its source, or a partition under it), per time
 * column (attnum 0: window-less flows, which any row dirties):
 *   AFTER INSERT ROW  WHEN (flownode.mark_row(named, attnum, NEW.ts))
 *   AFTER UPDATE ROW  WHEN (flownode.mark_row_removed(named, attnum, OLD.ts, NEW.ts))
 *   AFTER DELETE ROW  WHEN (flownode.mark_row_removed(named, attnum, OLD.ts, OLD.ts))
 * where `named` is the nearest table at or above it that is a flow's source (its
 * marking source) and attnum numbers the column as `named` does: the rows of every
 * partition of a source are marked through the source's entry in the per-backend
 * cache (source_cache.c), which holds the flows of the source and of the tables above
 * it. Row triggers go on tables that hold rows only (a partitioned table's row
 * triggers never fire). Statement triggers, per table:
 *   AFTER TRUNCATE   on a flow's source: its flows' sinks are emptied;
 *   BEFORE TRUNCATE  on a partition under a flow's source: the windows of its rows
 *                    are marked for the flows above it before they go.
 * The WHEN clause does the marking and is always false, so no after-trigger event is
 * ever queued (see mark_triggers.c). The triggers are internal: hidden from \d and
 * pg_dump, left alone by DISABLE TRIGGER USER, and not cloned by PostgreSQL to new
 * partitions (it clones only non-internal row triggers): flownode puts them on
 * partitions itself, when a flow is created and when a partition is created or
 * attached (lifecycle/utility_hook.c). PostgreSQL suffixes internal trigger names,
 * so they are found by function, events and their arguments (the attnum, and the
 * named table when it is not the trigger's own).
 */
#include "flownode.h"

#include "marking/source_triggers.h"

#include "marking/internal_trigger.h"
#include "marking/key_triggers.h"
#include "marking/source_cache.h"
#include "registry/flow_registry.h"
#include "registry/flow_dimensions.h"

#include "catalog/dependency.h"
#include "catalog/objectaddress.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_trigger.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "access/genam.h"
#include "access/table.h"
#include "catalog/pg_trigger_d.h"
#include "utils/fmgroids.h"
#include "nodes/makefuncs.h"
#include "parser/parser.h"
#include "parser/parse_func.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#define ROW_EVENTS (TRIGGER_TYPE_INSERT | TRIGGER_TYPE_UPDATE | TRIGGER_TYPE_DELETE | TRIGGER_TYPE_TRUNCATE)
/* what tells our triggers apart, besides their function and arguments */
#define KEY_TYPE_BITS (ROW_EVENTS | TRIGGER_TYPE_BEFORE)
#define NO_ATTNUM (-1) /* a TRUNCATE trigger marks no column */

static Oid marking_function(const char *name) {
	return LookupFuncName(list_make2(makeString(FLOWNODE_SCHEMA), makeString((char *)name)), 0, NULL, false);
}

/* The trigger functions, looked up once per call. */
typedef struct MarkFuncs {
	Oid insert_fn;
	Oid dirty_fn;
	Oid truncate_fn;
} MarkFuncs;

static MarkFuncs mark_funcs(void) {
	MarkFuncs f = {marking_function("mark_insert"), marking_function("mark_dirty"),
	               marking_function("mark_truncate")};

	return f;
}

/* One of our triggers on a table, as it is identified. */
typedef struct MarkTrigger {
	Oid funcoid;
	int16 type;  /* tgtype & KEY_TYPE_BITS */
	int attnum;  /* row triggers: the time column, numbered as `named` numbers it */
	Oid named;   /* row triggers: the table their WHEN clause names */
	bool exists; /* found on the table */
} MarkTrigger;

static MarkTrigger trigger_key(const Trigger *t, Oid relid) {
	MarkTrigger k = {t->tgfoid, (int16)(t->tgtype & KEY_TYPE_BITS), NO_ATTNUM, InvalidOid, true};

	if (t->tgnargs >= 1) {
		k.attnum = atoi(t->tgargs[0]);
		k.named = t->tgnargs >= 2 ? (Oid)strtoul(t->tgargs[1], NULL, 10) : relid;
	}
	return k;
}

static bool same_trigger(const MarkTrigger *a, const MarkTrigger *b) {
	return a->funcoid == b->funcoid && a->type == b->type && a->attnum == b->attnum && a->named == b->named;
}

static void create_trigger(Oid relid, const MarkTrigger *mt, const char *name, const char *func,
                           const char *when) {
	List *args;

	if (mt->attnum == NO_ATTNUM)
		args = NIL;
	else if (mt->named == relid)
		args = list_make1(makeString(psprintf("%d", mt->attnum)));
	else
		args = list_make2(makeString(psprintf("%d", mt->attnum)), makeString(psprintf("%u", mt->named)));
	fn_create_marking_trigger(relid, name, func, args, mt->type, when);
}

/* Creates one of the marking triggers sync_table found missing. */
static void install(Oid relid, const MarkTrigger *mt, const MarkFuncs *fn) {
	const char *col_new, *col_old;

	if (mt->funcoid == fn->truncate_fn) {
		bool before = (mt->type & TRIGGER_TYPE_BEFORE) != 0;

		create_trigger(relid, mt,
		               before ? FLOWNODE_TRUNCATE_ROWS_TRIGGER_NAME : FLOWNODE_TRUNCATE_TRIGGER_NAME,
		               "mark_truncate", NULL);
		return;
	}
	if (mt->attnum > 0) {
		/* the column has the same name in every partition of its table */
		const char *col = quote_identifier(get_attname(mt->named, (AttrNumber)mt->attnum, false));

		col_new = psprintf("NEW.%s", col);
		col_old = psprintf("OLD.%s", col);
	} else /* window-less: the row's values do not matter */
		col_new = col_old = "NULL::pg_catalog.timestamptz";
	if (mt->type & TRIGGER_TYPE_INSERT)
		create_trigger(relid, mt, FLOWNODE_INSERT_TRIGGER_NAME, "mark_insert",
		               psprintf("flownode.mark_row('%u'::pg_catalog.oid, '%d'::pg_catalog.int2, %s)",
		                        mt->named, mt->attnum, col_new));
	else
		create_trigger(
		    relid, mt,
		    (mt->type & TRIGGER_TYPE_UPDATE) ? FLOWNODE_UPDATE_TRIGGER_NAME : FLOWNODE_DELETE_TRIGGER_NAME,
		    "mark_dirty",
		    psprintf("flownode.mark_row_removed('%u'::pg_catalog.oid, '%d'::pg_catalog.int2, %s, %s)",
		             mt->named, mt->attnum, col_old, (mt->type & TRIGGER_TYPE_UPDATE) ? col_new : col_old));
}

static List *need(List *needed, Oid funcoid, int16 type, int attnum, Oid named) {
	MarkTrigger *mt = palloc(sizeof(MarkTrigger));
	ListCell *lc;

	mt->funcoid = funcoid;
	mt->type = type;
	mt->attnum = attnum;
	mt->named = named;
	mt->exists = false;
	foreach (lc, needed)
		if (same_trigger(lfirst(lc), mt))
			return needed;
	return lappend(needed, mt);
}

/* The flows among `flows` that read the table's rows (its own and those of the tables
 * above it), and in *named its marking source: the nearest table at or above it
 * with a flow, which its row triggers name. */
static List *reading_flows(Oid relid, List *flows, Oid *named) {
	List *chain = lcons_oid(relid, get_partition_ancestors(relid)); /* the table, then upwards */
	List *mine = NIL;
	ListCell *lc, *lc2;

	foreach (lc, flows) {
		TaskConfig *cfg = lfirst(lc);

		if (!list_member_oid(chain, cfg->source_relid))
			continue;
		if (cfg->sink_relid == relid)
			ereport(ERROR,
			        (errcode(ERRCODE_INVALID_TABLE_DEFINITION),
			         errmsg("table \"%s\" is the sink of flow \"%s\" and a partition of its source \"%s\"",
			                get_rel_name(relid), cfg->flow_name, get_rel_name(cfg->source_relid)),
			         errdetail("The flow's refreshes would write rows into its own source.")));
		mine = lappend(mine, cfg);
	}
	*named = InvalidOid;
	foreach (lc, chain) {
		foreach (lc2, mine)
			if (((TaskConfig *)lfirst(lc2))->source_relid == lfirst_oid(lc))
				*named = lfirst_oid(lc);
		if (OidIsValid(*named))
			break;
	}
	return mine;
}

/* The triggers a table needs, given the flows that read its rows and its marking
 * source (reading_flows). */
static List *needed_triggers(Oid relid, List *mine, Oid named, const MarkFuncs *fn) {
	char relkind = get_rel_relkind(relid);
	List *needed = NIL;
	bool own = false, above = false;
	ListCell *lc;

	if (mine == NIL)
		return NIL;
	foreach (lc, mine) {
		own |= ((TaskConfig *)lfirst(lc))->source_relid == relid;
		above |= ((TaskConfig *)lfirst(lc))->source_relid != relid;
	}
	if (relkind == RELKIND_FOREIGN_TABLE)
		ereport(ERROR,
		        (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		         errmsg("partition \"%s\" of flow source \"%s\" is a foreign table", get_rel_name(relid),
		                get_rel_name(((TaskConfig *)linitial(mine))->source_relid)),
		         errdetail(
		             "Writes to a foreign table happen on another server, where flownode cannot mark them."),
		         errhint("Keep foreign tables out of the partitions of a flow's source.")));
	if (relkind == RELKIND_RELATION)
		foreach (lc, mine) {
			int a = fn_time_attnum_in(named, lfirst(lc));

			needed = need(needed, fn->insert_fn, TRIGGER_TYPE_INSERT, a, named);
			needed = need(needed, fn->dirty_fn, TRIGGER_TYPE_UPDATE, a, named);
			needed = need(needed, fn->dirty_fn, TRIGGER_TYPE_DELETE, a, named);
		}
	if (own)
		needed = need(needed, fn->truncate_fn, TRIGGER_TYPE_TRUNCATE, NO_ATTNUM, InvalidOid);
	if (above && relkind == RELKIND_RELATION)
		needed =
		    need(needed, fn->truncate_fn, TRIGGER_TYPE_TRUNCATE | TRIGGER_TYPE_BEFORE, NO_ATTNUM, InvalidOid);
	return needed;
}

typedef void (*InstallTrigger)(Oid relid, const MarkTrigger *mt, const MarkFuncs *fn);

/* Keeps the triggers of fn's functions on relid to exactly `needed`: those missing
 * are created by `install`, duplicates and those no longer needed are dropped. One
 * routine for a source's marking triggers and a dimension's. */
static void sync_triggers(Oid relid, List *needed, const MarkFuncs *fn, InstallTrigger install) {
	List *doomed = NIL;
	Relation rel = table_open(relid, AccessShareLock);
	ListCell *lc;

	for (int i = 0; rel->trigdesc && i < rel->trigdesc->numtriggers; i++) {
		const Trigger *t = &rel->trigdesc->triggers[i];
		MarkTrigger have;
		bool wanted = false;

		if (t->tgfoid != fn->insert_fn && t->tgfoid != fn->dirty_fn && t->tgfoid != fn->truncate_fn)
			continue;
		have = trigger_key(t, relid);
		foreach (lc, needed) {
			MarkTrigger *mt = lfirst(lc);

			if (same_trigger(mt, &have)) {
				wanted = !mt->exists; /* a duplicate goes */
				mt->exists = true;
			}
		}
		if (!wanted)
			doomed = lappend_oid(doomed, t->tgoid);
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
		if (!((MarkTrigger *)lfirst(lc))->exists)
			install(relid, lfirst(lc), fn);
}

/* Creates the triggers the table lacks and drops those it has and needs no more:
 * the row and TRUNCATE triggers, and the key triggers of the keyed flows among
 * key_flows (fn_key_flows) that read its rows. */
static void sync_table(Oid relid, List *flows, const MarkFuncs *fn, List *key_flows) {
	Oid named;
	List *mine = reading_flows(relid, flows, &named);

	sync_triggers(relid, needed_triggers(relid, mine, named, fn), fn, install);
	fn_sync_key_triggers(relid, mine, named, key_flows);
}

void fn_sync_marking_triggers(Oid relid) {
	List *tree;
	List *flows, *key_flows;
	MarkFuncs fn;
	ListCell *lc;

	if (!OidIsValid(get_rel_namespace(relid)) || !OidIsValid(fn_catalog_relid(true)))
		return; /* the table, or the extension, is gone */
	/* writers to any partition wait from here on (create_flow fills the sink after) */
	tree = get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE
	           ? find_all_inheritors(relid, ShareRowExclusiveLock, NULL)
	           : list_make1_oid(relid);
	flows = fn_load_flows_of_sources(list_concat_copy(tree, get_partition_ancestors(relid)));
	fn = mark_funcs();
	key_flows = fn_key_flows(flows);
	foreach (lc, tree)
		sync_table(lfirst_oid(lc), flows, &fn, key_flows);
	/* each table's cached flows include those of the tables above it, and an entry
	 * above takes a flow as keyed only when every partition under it has its key
	 * triggers (source_cache.c) */
	foreach (lc, tree)
		CacheInvalidateRelcacheByRelid(lfirst_oid(lc));
	foreach (lc, get_partition_ancestors(relid))
		CacheInvalidateRelcacheByRelid(lfirst_oid(lc));
	CommandCounterIncrement();
	fn_keep_marking_always(relid);
}

/* ---- dimension tables ---- */

/*
 * On a table that flows join as a dimension (registry/flow_dimensions.h), per join
 * column (its attnum, the trigger's argument):
 *   AFTER INSERT ROW  WHEN (flownode.mark_dimension_row(dim, attnum, NEW.c, NEW.c))
 *   AFTER UPDATE ROW  WHEN (flownode.mark_dimension_row(dim, attnum, OLD.c, NEW.c))
 *   AFTER DELETE ROW  WHEN (flownode.mark_dimension_row(dim, attnum, OLD.c, OLD.c))
 * and AFTER TRUNCATE (mark_dimension_truncate). When a flow marks every window on
 * any write to it (no equality, or a table under a view or subquery), attnum 0 and
 * the values `true, true`. A view gets none: the tables it reads have them. The WHEN clause collects the
 * values and is always false (the function mark_dimension never runs); the windows of the fact rows with
 * those values are looked up when the writer commits (dimension_marks.c). Internal and firing always, like a
 * source's; the WHEN clause pins the join column as it pins a source's time column.
 */
static void install_dimension_trigger(Oid relid, const MarkTrigger *mt, const MarkFuncs *fn) {
	const char *col, *olds, *news;
	const char *name;

	if (mt->funcoid == fn->truncate_fn) {
		create_trigger(relid, mt, "flownode_dimension_truncate", "mark_dimension_truncate", NULL);
		return;
	}
	name = (mt->type & TRIGGER_TYPE_INSERT)   ? "flownode_dimension_insert"
	       : (mt->type & TRIGGER_TYPE_UPDATE) ? "flownode_dimension_update"
	                                          : "flownode_dimension_delete";
	if (mt->attnum == 0) { /* every write marks every window: the row's values do not matter */
		create_trigger(
		    relid, mt, name, "mark_dimension",
		    psprintf("flownode.mark_dimension_row('%u'::pg_catalog.oid, '0'::pg_catalog.int2, true, "
		             "true)",
		             relid));
		return;
	}
	col = quote_identifier(get_attname(relid, (AttrNumber)mt->attnum, false));
	olds = (mt->type & TRIGGER_TYPE_INSERT) ? "NEW" : "OLD";
	news = (mt->type & TRIGGER_TYPE_DELETE) ? "OLD" : "NEW";
	create_trigger(
	    relid, mt, name, "mark_dimension",
	    psprintf("flownode.mark_dimension_row('%u'::pg_catalog.oid, '%d'::pg_catalog.int2, %s.%s, %s.%s)",
	             relid, mt->attnum, olds, col, news, col));
}

void fn_sync_dimension_triggers(Oid relid) {
	MarkFuncs fn;
	List *keys;
	List *needed = NIL;
	ListCell *lc;

	if (!OidIsValid(get_rel_namespace(relid)) || !OidIsValid(fn_catalog_relid(true)))
		return; /* the table, or the extension, is gone */
	if (get_rel_relkind(relid) != RELKIND_RELATION)
		return; /* a view: the tables it reads have the triggers */
	/* one function for every row event: it is the insert and the update/delete one */
	fn.insert_fn = fn.dirty_fn = marking_function("mark_dimension");
	fn.truncate_fn = marking_function("mark_dimension_truncate");
	keys = fn_load_dimension_keys(relid);
	foreach (lc, keys) {
		int a = ((DimensionKey *)lfirst(lc))->dim_attnum;

		needed = need(needed, fn.insert_fn, TRIGGER_TYPE_INSERT, a, relid);
		needed = need(needed, fn.insert_fn, TRIGGER_TYPE_UPDATE, a, relid);
		needed = need(needed, fn.insert_fn, TRIGGER_TYPE_DELETE, a, relid);
	}
	if (keys != NIL)
		needed = need(needed, fn.truncate_fn, TRIGGER_TYPE_TRUNCATE, NO_ATTNUM, InvalidOid);
	sync_triggers(relid, needed, &fn, install_dimension_trigger);
	CacheInvalidateRelcacheByRelid(relid);
	CommandCounterIncrement();
}

/* A trigger function of 0.2's, InvalidOid under a 0.1 catalog not yet updated. */
static Oid marking_function_if_any(const char *name) {
	return LookupFuncName(list_make2(makeString(FLOWNODE_SCHEMA), makeString((char *)name)), 0, NULL, true);
}

static bool is_marking_trigger(const Trigger *t) {
	return t->tgfoid == marking_function("mark_insert") || t->tgfoid == marking_function("mark_dirty") ||
	       t->tgfoid == marking_function("mark_truncate") ||
	       t->tgfoid == marking_function_if_any("mark_dimension") ||
	       t->tgfoid == marking_function_if_any("mark_dimension_truncate") ||
	       t->tgfoid == marking_function_if_any("mark_keyed");
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
void fn_keep_marking_always(Oid relid) {
	Relation rel;
	List *names = NIL;
	ListCell *lc;

	if (!superuser())
		return;
	rel = table_open(relid, ShareRowExclusiveLock);

	for (int i = 0; rel->trigdesc && i < rel->trigdesc->numtriggers; i++) {
		const Trigger *t = &rel->trigdesc->triggers[i];

		if (is_marking_trigger(t) && t->tgenabled != TRIGGER_FIRES_ALWAYS && t->tgenabled != TRIGGER_DISABLED)
			names = lappend(names, pstrdup(t->tgname));
	}
	foreach (lc, names)
		fn_enable_disable_trigger(rel, lfirst(lc), TRIGGER_FIRES_ALWAYS, false, ShareRowExclusiveLock);
	table_close(rel, NoLock);
	if (names != NIL)
		CommandCounterIncrement();
}

/* Whether a trigger of the table (scanned in pg_trigger, without locking the table:
 * the flows view must not wait for a DDL in progress) is a marking one: any, and
 * whether they all fire always. */
static void scan_marking_triggers(Relation tgrel, Oid relid, bool *any, bool *all) {
	Oid fns[] = {marking_function("mark_insert"),
	             marking_function("mark_dirty"),
	             marking_function("mark_truncate"),
	             marking_function_if_any("mark_dimension"),
	             marking_function_if_any("mark_dimension_truncate"),
	             marking_function_if_any("mark_keyed")};
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple tup;

	ScanKeyInit(&key, Anum_pg_trigger_tgrelid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(relid));
	scan = systable_beginscan(tgrel, TriggerRelidNameIndexId, true, NULL, 1, &key);
	while (HeapTupleIsValid(tup = systable_getnext(scan))) {
		Form_pg_trigger t = (Form_pg_trigger)GETSTRUCT(tup);

		for (int i = 0; i < (int)lengthof(fns); i++)
			if (OidIsValid(fns[i]) && t->tgfoid == fns[i]) {
				*any = true;
				*all &= t->tgenabled == TRIGGER_FIRES_ALWAYS;
			}
	}
	systable_endscan(scan);
}

/*
 * The one definition of "marking is enabled" (the flows view's marking_enabled, the
 * WARNING of ALTER TABLE ... DISABLE TRIGGER): the table and every partition under
 * it have marking triggers, and each fires always (in every replication role).
 */
bool fn_marking_enabled(Oid relid) {
	List *rels = find_all_inheritors(relid, NoLock, NULL);
	Relation tgrel = table_open(TriggerRelationId, AccessShareLock);
	bool any = false, all = true;
	ListCell *lc;

	foreach (lc, rels)
		scan_marking_triggers(tgrel, lfirst_oid(lc), &any, &all);
	table_close(tgrel, AccessShareLock);
	list_free(rels);
	return any && all;
}
