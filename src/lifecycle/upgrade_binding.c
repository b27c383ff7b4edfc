/*
 * upgrade_binding.c: flows that pg_upgrade brought over (docs/internals.md §9).
 *
 * pg_upgrade makes a new cluster: it restores the schema as pg_dump writes it (so
 * no internal trigger: none of flownode's marking triggers) and copies every
 * table's files as they are, with their OIDs, attribute numbers and transaction
 * ids. So flownode.flow, its record, its clocks and every sink are the old
 * cluster's as of its clean shutdown, in which every window not in the record was
 * exact; and each flow's binding row names the old cluster's system identifier.
 * Such a flow needs its triggers and its worker again, and nothing recomputed.
 *
 * Its triggers must exist before the first write to its tables: the database's
 * starter binds every such flow at the server's start, and until it has, a
 * statement that writes to one of their tables binds those flows itself. Neither
 * waits for the other: the starter takes only free locks, round after round (for
 * 10 s, then it waits). That
 * statement holds its table (ROW EXCLUSIVE) and may not wait for the locks a
 * binding takes (another writer of the same table would wait for it in turn): it
 * takes them only if they are free, and fails with 55P03 if one is not, to be
 * retried. A flow whose binding fails for another reason cannot be marked: its
 * binding is forgotten in the writer's transaction, so the flow says 'restored'
 * and only refresh_flow binds it again, recomputing its sink. So is a flow over a
 * table an enabled subscription writes (fn_try_bind_flow): its workers write
 * without these hooks, maybe before either path bound the flow.
 */
#include "flownode.h"

#include "lifecycle/upgrade_binding.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "lifecycle/flow_binding.h"
#include "miscadmin.h"
#include "parser/parsetree.h"
#include "pgutil/pg_util.h"
#include "registry/flow_dimensions.h"
#include "registry/flow_registry.h"
#include "shmem/flow_slots.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

/* This backend found no flow of pg_upgrade's: none appears before a restart. */
static bool none_upgraded = false;

/* One flow bound in a transaction of its own; with nowait, only if its locks are
 * free: false if one was not. */
static bool bind_in_transaction(TaskConfig *cfg, bool nowait) {
	FnBindResult r;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	r = fn_try_bind_flow(cfg, FN_BIND_UPGRADED | (nowait ? FN_BIND_NOWAIT : 0));
	PopActiveSnapshot();
	CommitTransactionCommand();
	if (r == FN_BIND_DONE)
		ereport(DEBUG1, (errmsg("flownode: flow \"%s\" is bound after pg_upgrade", cfg->flow_name)));
	return r != FN_BIND_BUSY;
}

/* The flows of pg_upgrade's still unbound here, read in cxt. */
static List *upgraded_flows(MemoryContext cxt) {
	MemoryContext old;
	List *flows;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	old = MemoryContextSwitchTo(cxt);
	flows = fn_load_upgraded_flows();
	MemoryContextSwitchTo(old);
	PopActiveSnapshot();
	CommitTransactionCommand();
	return flows;
}

/*
 * Rounds of bindings that take only free locks, so that the writers of the first
 * seconds neither wait for the starter nor fail (55P03) while it waits for another
 * writer: a flow whose table is busy is tried again in the next round (writers bind
 * it meanwhile). After UPGRADE_NOWAIT_ROUNDS, a last round waits for the locks.
 */
#define UPGRADE_NOWAIT_ROUNDS 50
#define UPGRADE_ROUND_PAUSE_MS 200

void fn_bind_upgraded_flows(void) {
	MemoryContext cxt =
	    AllocSetContextCreate(TopMemoryContext, "flownode upgraded flows", ALLOCSET_SMALL_SIZES);

	for (int round = 0; round <= UPGRADE_NOWAIT_ROUNDS; round++) {
		bool nowait = round < UPGRADE_NOWAIT_ROUNDS, busy = false;
		ListCell *lc;

		MemoryContextReset(cxt);
		foreach (lc, upgraded_flows(cxt))
			busy |= !bind_in_transaction(lfirst(lc), nowait);
		if (!busy)
			break;
		CHECK_FOR_INTERRUPTS();
		pg_usleep(UPGRADE_ROUND_PAUSE_MS * 1000L);
	}
	MemoryContextDelete(cxt);
}

/* The flow's binding failed (a WARNING said why): the write goes on unmarked, so
 * the flow may no longer be bound without a recompute. */
static void unbind_for_good(TaskConfig *cfg, Oid relid) {
	fn_registry_unbind(cfg->flow_id);
	ereport(
	    WARNING,
	    (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
	     errmsg("flow \"%s\" does not mark this write to table \"%s\"", cfg->flow_name, get_rel_name(relid)),
	     errdetail("The flow came from the cluster pg_upgrade copied, and it could not be bound here."),
	     errhint("Once the problem is fixed, SELECT flownode.refresh_flow(%s) binds it and "
	             "recomputes its sink.",
	             quote_literal_cstr(cfg->flow_name))));
}

static void busy(TaskConfig *cfg, Oid relid) {
	ereport(ERROR,
	        (errcode(ERRCODE_LOCK_NOT_AVAILABLE),
	         errmsg("could not bind flow \"%s\" before this write to table \"%s\"", cfg->flow_name,
	                get_rel_name(relid)),
	         errdetail("The flow came from the cluster pg_upgrade copied, and another transaction holds "
	                   "one of its tables or is binding it; a write before its binding would not be "
	                   "marked."),
	         errhint("Retry the transaction: flownode binds such flows when the server starts.")));
}

void fn_guard_upgraded_write(Oid relid) {
	List *flows;
	ListCell *lc;

	if (none_upgraded || !OidIsValid(relid) || fn_slot_count() == 0 || RecoveryInProgress() ||
	    !IsTransactionState() || IsBinaryUpgrade || fn_in_own_script())
		return; /* not preloaded (refresh_flow and flush_flow say so), pg_upgrade's own
		         * statements, or the extension's script */
	if (!OidIsValid(fn_catalog_relid(true)) || !fn_catalog_is_current() ||
	    (flows = fn_load_upgraded_flows()) == NIL) {
		none_upgraded = true;
		return;
	}
	foreach (lc, flows) {
		TaskConfig *cfg = lfirst(lc);

		if (!list_member_oid(fn_flow_read_tables(cfg), relid))
			continue;
		switch (fn_try_bind_flow(cfg, FN_BIND_UPGRADED | FN_BIND_NOWAIT)) {
		case FN_BIND_DONE:
			break;
		case FN_BIND_BUSY:
			busy(cfg, relid);
			break;
		case FN_BIND_FAILED:
			unbind_for_good(cfg, relid);
			break;
		case FN_BIND_UNBOUND: /* a subscription writes its tables: refresh_flow recomputes it */
			break;
		}
	}
}

void fn_guard_upgraded_plan(PlannedStmt *plan) {
	ListCell *lc;

	if (none_upgraded || plan->resultRelations == NIL)
		return;
	foreach (lc, plan->resultRelations)
		fn_guard_upgraded_write(rt_fetch(lfirst_int(lc), plan->rtable)->relid);
}
