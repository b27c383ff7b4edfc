/*
 * flow_removal.c: flows removed by drop_flow, and with the tables, extension and
 * database they depend on.
 *
 * - DROP TABLE of a flow's source or sink (also DROP SCHEMA ... CASCADE, DROP OWNED)
 *   drops the flow with a NOTICE, as PostgreSQL does for dependent objects (the
 *   object access hook sees the table's drop).
 * - DROP EXTENSION (or DROP SCHEMA flownode CASCADE) drops the flow catalog before
 *   the extension itself: every flow of the database stops when that commits.
 */
#include "flownode.h"

#include "lifecycle/flow_removal.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/objectaccess.h"
#include "catalog/pg_class.h"
#include "lifecycle/xact_hooks.h"
#include "marking/source_triggers.h"
#include "record/durable_record.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"

static object_access_hook_type prev_object_access_hook = NULL;

/* The flow's rows go; its worker stops at commit. */
static void remove_rows(TaskConfig *cfg) {
	fn_registry_delete_flow(cfg->flow_id);
	fn_record_forget_flow(cfg->flow_id);
	fn_on_commit_drop_flow(cfg->flow_id);
}

void fn_remove_flow(TaskConfig *cfg) {
	/* first: waits for a refresh in flight, holds off the next (fn_lock_flow) */
	fn_lock_flow(cfg->flow_id, AccessExclusiveLock);
	remove_rows(cfg);
	fn_remove_triggers_if_unused(cfg->source_relid);
	if (OidIsValid(get_rel_namespace(cfg->source_relid)))
		CacheInvalidateRelcacheByRelid(cfg->source_relid);
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

		ereport(NOTICE, (errmsg("drop cascades to flow \"%s\"", cfg->flow_name)));
		remove_rows(cfg);
		if (cfg->source_relid != relid) {
			CacheInvalidateRelcacheByRelid(cfg->source_relid);
			fn_on_pre_commit_cleanup_triggers(cfg->source_relid);
		}
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
	else if (get_rel_relkind(objectId) == RELKIND_RELATION &&
	         get_rel_persistence(objectId) != RELPERSISTENCE_TEMP && OidIsValid(fn_catalog_relid(true)) &&
	         get_rel_namespace(objectId) != get_namespace_oid(FLOWNODE_SCHEMA, true))
		drop_flows_of_relation(objectId);
}

void fn_flow_removal_init(void) {
	prev_object_access_hook = object_access_hook;
	object_access_hook = object_access;
}
