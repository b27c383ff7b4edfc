/*
 * flow_removal.c: flows removed by drop_flow, and with the tables, extension and
 * database they depend on.
 *
 * - DROP TABLE of a flow's source or sink, or of a dimension table it joins, DROP
 *   VIEW of a view it joins or of one under it (also DROP SCHEMA ... CASCADE, DROP
 *   OWNED, DROP TABLE ... CASCADE of a table under a view) drops the flow with a NOTICE, as PostgreSQL
 *   does for dependent objects (the object access hook sees the table's drop). A
 *   partition of a source is not the source: dropping it drops only flows of its
 *   own; its rows leaving the source are marked (by the utility hook before a DROP
 *   TABLE; here, for a drop that cascaded, by marking every window the flows may
 *   hold).
 * - DROP EXTENSION (or DROP SCHEMA flownode CASCADE) drops the flow catalog before
 *   the extension itself: every flow of the database stops when that commits.
 */
#include "flownode.h"

#include "lifecycle/flow_removal.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/objectaccess.h"
#include "catalog/partition.h"
#include "catalog/pg_class.h"
#include "lifecycle/xact_hooks.h"
#include "marking/source_triggers.h"
#include "record/durable_record.h"
#include "record/key_record.h"
#include "registry/flow_dimensions.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

static object_access_hook_type prev_object_access_hook = NULL;

/* The flow's rows go; its worker stops at commit. */
static void remove_rows(TaskConfig *cfg) {
	fn_registry_delete_flow(cfg->flow_id);
	fn_registry_delete_dimensions(cfg->flow_id);
	fn_record_forget_flow(cfg->flow_id);
	fn_key_record_forget_flow(cfg->flow_id);
	fn_on_commit_drop_flow(cfg->flow_id);
}

void fn_remove_flow(TaskConfig *cfg) {
	List *dimensions;
	ListCell *lc;

	/* first: waits for a refresh in flight, holds off the next (fn_lock_flow) */
	fn_lock_flow(cfg->flow_id, AccessExclusiveLock);
	if (cfg->waiting) { /* it has nothing but its row: no trigger, slot, record or worker */
		fn_registry_delete_flow(cfg->flow_id);
		return;
	}
	dimensions = fn_load_flow_dimensions(cfg->flow_id);
	remove_rows(cfg);
	CommandCounterIncrement();
	/* the triggers no flow needs any more go; the caches of the source's tree too */
	fn_sync_marking_triggers(cfg->source_relid);
	foreach (lc, dimensions)
		fn_sync_dimension_triggers(lfirst_oid(lc));
}

/* ---- partitions dropped ---- */

/* The tables each DROP statement in progress drops by name, with the partitions under
 * them, innermost statement first (TopMemoryContext): the utility hook has read the
 * rows of those that were partitions of a flow's source before the drop. */
static List *dropping_stack = NIL;

void fn_dropping_begin(List *relids) {
	MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

	dropping_stack = lcons(list_copy(relids), dropping_stack);
	MemoryContextSwitchTo(old);
}

void fn_dropping_end(void) {
	List *top;

	if (dropping_stack == NIL)
		return;
	top = linitial(dropping_stack);
	dropping_stack = list_delete_first(dropping_stack);
	list_free(top);
}

/*
 * A partition dropped as a dependent of another object (DROP SCHEMA ... CASCADE, DROP
 * OWNED BY) rather than by a DROP TABLE that named it or a table above it: its rows
 * were not read before they went (its indexes are already gone here). If the table
 * it was a partition of keeps flows, every window those flows may hold is marked at
 * PRE_COMMIT (fn_mark_all_windows); when the whole tree goes, nothing is.
 */
static void partition_dropped(Oid relid) {
	Oid parent;

	if (!get_rel_relispartition(relid) ||
	    (dropping_stack != NIL && list_member_oid(linitial(dropping_stack), relid)))
		return;
	parent = get_partition_parent(relid, true);
	if (OidIsValid(parent) && fn_load_flows_over(parent) != NIL)
		fn_on_pre_commit_mark_all(parent);
}

/*
 * Called from the object-access hook while the table is being dropped: the source's
 * triggers go with the source; when only the sink goes, they are removed at
 * PRE_COMMIT if no other flow reads the source.
 */
static void drop_flows_of_relation(Oid relid) {
	List *flows = fn_load_flows_of_relation(relid);
	ListCell *lc;

	foreach (lc, flows) {
		TaskConfig *cfg = lfirst(lc);
		List *dimensions = fn_load_flow_dimensions(cfg->flow_id);
		ListCell *lc2;

		ereport(NOTICE, (errmsg("drop cascades to flow \"%s\"", cfg->flow_name)));
		remove_rows(cfg);
		if (cfg->source_relid != relid) {
			CacheInvalidateRelcacheByRelid(cfg->source_relid);
			fn_on_pre_commit_cleanup_triggers(cfg->source_relid);
		}
		/* and the triggers of the tables it joined, the dropped one aside */
		foreach (lc2, dimensions)
			if (lfirst_oid(lc2) != relid)
				fn_on_pre_commit_cleanup_triggers(lfirst_oid(lc2));
	}
}

static void object_access(ObjectAccessType access, Oid classId, Oid objectId, int subId, void *arg) {
	if (prev_object_access_hook)
		prev_object_access_hook(access, classId, objectId, subId, arg);
	if (access != OAT_DROP || classId != RelationRelationId || subId != 0 || !IsTransactionState())
		return;
	/* whatever the version of the objects: DROP EXTENSION always works */
	if (objectId == fn_catalog_relid_unchecked())
		fn_on_commit_stop_all(objectId);
	else if ((get_rel_relkind(objectId) == RELKIND_RELATION ||
	          get_rel_relkind(objectId) == RELKIND_PARTITIONED_TABLE ||
	          get_rel_relkind(objectId) == RELKIND_VIEW) &&
	         get_rel_persistence(objectId) != RELPERSISTENCE_TEMP && OidIsValid(fn_catalog_relid(true)) &&
	         get_rel_namespace(objectId) != get_namespace_oid(FLOWNODE_SCHEMA, true)) {
		partition_dropped(objectId);
		drop_flows_of_relation(objectId);
	}
}

void fn_flow_removal_init(void) {
	prev_object_access_hook = object_access_hook;
	object_access_hook = object_access;
}
