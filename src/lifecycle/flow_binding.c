/*
 * flow_binding.c: flows that a restore brought back (docs/internals.md §9).
 *
 * pg_dump writes the extension's configuration: flownode.flow, flownode.pending
 * and the flow ids' sequence (pg_extension_config_dump), with tables and roles
 * named by name (regclass, regrole), which the restore reads back as its own OIDs.
 * It writes neither the marking triggers (internal) nor flownode.flow_binding. So a
 * restore brings each flow back unbound: its row, its pending windows and its
 * sink's rows as they were in the dump's one snapshot, in which every window not in
 * the record was exact, but no triggers, no slot and no worker. Nothing marks the
 * restore's own rows, and no refresh can run before the sink's rows and key are
 * there.
 *
 * Binding finds the time column again (a restore renumbers the columns after a
 * dropped one), creates the triggers and starts the worker at commit, which reloads
 * the pending windows. It happens:
 * - when the command that builds the sink's unique key runs (the post-data section
 *   of a pg_restore or a plain dump comes after every table's rows): automatic for a
 *   whole restore;
 * - for a flow of one row, whose sink has no key, after the COPY of its catalog row
 *   (fn_after_copy_from), in whatever order the restore loads its source and sink:
 *   its one window is recorded as pending, and a COPY into its sink after the
 *   binding marks it again;
 * - by refresh_flow (api/flow_api.c), after a data-only restore, whose sinks had
 *   their keys before their rows came, or whenever a flow still says 'restored'.
 *   Only refresh_flow binds then: writes may have reached the source unmarked
 *   since the restore, and it recomputes what they touched.
 * A COPY into flownode.pending after a flow was bound (pg_restore -j may restore the
 * record after the sink's index) makes the bound flows reload their record.
 */
#include "flownode.h"

#include "lifecycle/flow_binding.h"

#include "access/table.h"
#include "access/xact.h"
#include "catalog/partition.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "lifecycle/xact_hooks.h"
#include "marking/mark_rows.h"
#include "marking/mark_triggers.h"
#include "marking/source_triggers.h"
#include "miscadmin.h"
#include "pgutil/pg_util.h"
#include "pgutil/subxact_try.h"
#include "record/durable_record.h"
#include "executor/spi.h"
#include "query/flow_joins.h"
#include "query/flow_query.h"
#include "query/query_rewrite.h"
#include "query/time_column.h"
#include "registry/flow_dimensions.h"
#include "registry/sink_table.h"
#include "registry/stored_query.h"
#include "shmem/flow_slots.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"

PG_FUNCTION_INFO_V1(flownode_pending_restored);

/* One value of a one-row query (SPI connected). */
static bool query_bool(const char *sql) {
	bool isnull;

	if (SPI_execute(sql, true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "flownode: reading a restored table failed: %s", sql);
	return DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
}

/* The windows of the source's rows, as one range (SPI connected); false when no row
 * has a time. A window-less flow has one mark, [0, 1), when the source has a row. */
static bool source_windows(TaskConfig *cfg, FlowQuery *fq, FnTimeRange *r) {
	const char *from = fn_time_column_from(cfg->source_relid, NULL);
	FnTimeColumn c;
	int64 lo, hi;
	FnWindow *w;

	if (fq->window.kind == FN_WINDOW_NONE) { /* no time column */
		*r = (FnTimeRange){0, 1};
		return query_bool(psprintf("SELECT EXISTS (SELECT FROM %s)", from));
	}
	c = (FnTimeColumn){from, quote_identifier(fq->time_column),
	                   cfg->window.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID, &cfg->input};
	if (!fn_time_column_extent(&c, (FnTimeRange){FN_TS_MIN, DT_NOEND}, &lo, &hi))
		return false;
	w = fn_window_create(&cfg->window);
	*r = (FnTimeRange){fn_window_of(w, lo).start, fn_window_of(w, hi).end};
	return true;
}

/*
 * A sink restored empty over a source that has rows: its rows were left out of the
 * dump (pg_dump --exclude-table-data) or lost, and the restored record cannot say
 * so. Every window of the source's rows is recorded as pending, so the worker fills
 * the sink (oldest first, with plain INSERTs) instead of leaving it silently empty.
 */
static void record_empty_sink(TaskConfig *cfg, FlowQuery *fq) {
	bool pending;
	FnTimeRange r = {0, 0};

	/* in a snapshot taken after the locks of the source and of every partition
	 * (lock_unbound, fn_sync_marking_triggers): a restore may have been loading the
	 * source's rows while this command waited for them, and the statement's snapshot,
	 * from before the wait, saw none of them */
	PushActiveSnapshot(GetLatestSnapshot());
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "flownode: SPI_connect failed");
	pending = query_bool(psprintf("SELECT NOT EXISTS (SELECT FROM %s)",
	                              fn_time_column_from(cfg->sink_relid, NULL))) &&
	          source_windows(cfg, fq, &r);
	SPI_finish();
	PopActiveSnapshot();
	if (pending) {
		PendingWriter *writer = fn_pending_open();

		fn_pending_write(writer, cfg->flow_id, &r, 1,
		                 GetCurrentTimestamp()); /* the lag counts from the binding */
		fn_pending_close(writer);
		ereport(NOTICE,
		        (errmsg("the sink of restored flow \"%s\" is empty: it will be filled", cfg->flow_name)));
	}
}

/*
 * The dimension tables the flow joins, found again from its query: a dump keeps no
 * row of flownode.flow_dimension (its attribute numbers are the old database's) and
 * pg_upgrade keeps none of their triggers. Without them, a write to a dimension of a
 * restored flow marked nothing and its sink went stale.
 */
void fn_rebind_dimensions(int64 flow_id, List *dimensions) {
	List *tables = fn_load_flow_dimensions(flow_id); /* what it joined: their triggers may go */
	ListCell *lc;

	fn_registry_delete_dimensions(flow_id);
	fn_registry_insert_dimensions(flow_id, dimensions);
	CommandCounterIncrement();
	foreach (lc, dimensions)
		tables = list_append_unique_oid(tables, ((FlowDimension *)lfirst(lc))->relid);
	foreach (lc, tables)
		fn_sync_dimension_triggers(lfirst_oid(lc));
}

/*
 * A flow of one row (aggregates without GROUP BY) has its one window recorded as
 * pending, whatever its sink and source hold: the restore may load either before or
 * after the binding (pg_restore -j loads them in parallel with the catalog), and the
 * one-row refresh replaces every row the sink holds by the query's (refresh_sql.c),
 * so one recompute of the whole source is exact in every order. The sink's lock
 * orders the binding with a COPY into the sink: one that commits first is under this
 * recompute (its worker starts at this commit); one that waits for the lock finds
 * the flow bound after it and marks the window again (fn_after_copy_from).
 */
static void record_one_row(TaskConfig *cfg) {
	static const FnTimeRange one = {0, 1};
	PendingWriter *writer;

	LockRelationOid(cfg->sink_relid, ShareRowExclusiveLock);
	writer = fn_pending_open();
	fn_pending_write(writer, cfg->flow_id, &one, 1, GetCurrentTimestamp());
	fn_pending_close(writer);
}

/* Everything after the checks: the binding, the triggers, the slot, the worker. A
 * flow pg_upgrade brought over records nothing: its sink and its record are the old
 * cluster's files, exact as of its clean shutdown, and nothing wrote since. */
static void bind_checked(TaskConfig *cfg, FlowQuery *fq, bool upgraded) {
	bool windowed = fq->window.kind != FN_WINDOW_NONE;
	FlowSlot *slot;

	if (!upgraded && fq->shape == FLOW_SHAPE_SINGLE)
		record_one_row(cfg);
	fn_registry_bind(cfg->flow_id, windowed ? fq->time_attnum : 0, windowed ? fq->time_column : NULL);
	/* the triggers, on every partition too: the flow is bound now, so they are needed */
	CommandCounterIncrement();
	fn_sync_marking_triggers(cfg->source_relid);
	/* only now, with every partition locked: a load into one partition (pg_restore -j
	 * truncates and copies a partition in its own transaction, locking only that
	 * table) has committed and is read, or waits and is marked; read before the
	 * triggers' locks, its rows were in neither (the oracle, seed 2042065028) */
	if (!upgraded && fq->shape != FLOW_SHAPE_SINGLE)
		record_empty_sink(cfg, fq);
	fn_rebind_dimensions(cfg->flow_id, fq->dimensions);
	/* as create_flow: the slot now, so flownode.max_flows fails here; the worker at commit */
	slot = fn_acquire_slot(MyDatabaseId, fn_current_catalog_relid(), cfg->flow_id, true);
	fn_slot_reserve(slot); /* until this transaction ends */
	fn_on_commit_start_worker(cfg->flow_id, cfg->owner);
}

/* The lock; with nowait only if it is free now: false if it was not. */
static bool lock_table(Oid relid, LOCKMODE mode, bool nowait) {
	if (nowait)
		return ConditionalLockRelationOid(relid, mode);
	LockRelationOid(relid, mode);
	return true;
}

/*
 * The binding's locks on the flow's tables, kept to the end of the (sub)transaction:
 * its source SHARE ROW EXCLUSIVE (writers wait, and see the triggers at commit). A
 * binding of pg_upgrade's or one that may not wait also takes every partition of the
 * source and every dimension so (the triggers' creation would, waiting), before
 * unbound_for_subscription looks at the subscriptions, and the sink ACCESS SHARE
 * (for the check). With FN_BIND_NOWAIT each only if it is free now: false if one was
 * not.
 */
static bool lock_tables(TaskConfig *cfg, int flags) {
	bool nowait = (flags & FN_BIND_NOWAIT) != 0;
	ListCell *lc;

	if (!(flags & (FN_BIND_NOWAIT | FN_BIND_UPGRADED))) /* a restore's, or refresh_flow's */
		return lock_table(cfg->source_relid, ShareRowExclusiveLock, false);
	foreach (lc, list_concat(find_all_inheritors(cfg->source_relid, NoLock, NULL),
	                         fn_load_flow_dimensions(cfg->flow_id)))
		if (!lock_table(lfirst_oid(lc), ShareRowExclusiveLock, nowait))
			return false;
	return lock_table(cfg->sink_relid, AccessShareLock, nowait);
}

/* The flow, locked against another binding or a drop, read again: NULL once it is
 * bound (or gone, or with FN_BIND_UPGRADED no longer pg_upgrade's). Writers to the
 * source wait from here to the end of the transaction, and see the triggers once it
 * commits. With FN_BIND_NOWAIT, *busy says that a lock was not free. The flow is
 * read again after the source's lock: a writer that held it may have forgotten an
 * upgraded binding (upgrade_binding.c) and committed meanwhile. */
static TaskConfig *lock_unbound(TaskConfig *cfg, int flags, bool *busy) {
	bool nowait = (flags & FN_BIND_NOWAIT) != 0;

	fn_check_preloaded();
	*busy = false;
	if (nowait ? !fn_try_lock_flow(cfg->flow_id, AccessExclusiveLock)
	           : (fn_lock_flow(cfg->flow_id, AccessExclusiveLock), false)) {
		*busy = true;
		return NULL;
	}
	cfg = fn_load_task_config(cfg->flow_id, true);
	if (cfg == NULL || cfg->bound)
		return NULL;
	if (!lock_tables(cfg, flags)) {
		*busy = true;
		return NULL;
	}
	cfg = fn_load_task_config(cfg->flow_id, true);
	if (cfg == NULL || cfg->bound || ((flags & FN_BIND_UPGRADED) && !cfg->upgraded))
		return NULL;
	return cfg;
}

void fn_bind_flow(TaskConfig *cfg) {
	FlowQuery *fq;
	bool busy;

	fn_check_catalog_version();
	cfg = lock_unbound(cfg, 0, &busy);
	if (cfg == NULL)
		return;
	fq = fn_analyse_stored(cfg);
	fn_check_sink(cfg->sink_relid, fq);
	bind_checked(cfg, fq, false);
	ereport(NOTICE,
	        (errmsg("flow \"%s\" is bound to %s", cfg->flow_name, fn_qualified_relname(cfg->source_relid)),
	         errdetail("Its triggers mark writes from now on; its worker starts at commit.")));
}

/*
 * Whether a binding that failed waits for a key the restore builds later, which is no
 * news: the sink's unique key (another index was built first), or the primary key of
 * the source that a flow without aggregation is keyed by. pg_dump's post-data section
 * builds every constraint before it attaches any partition's index, and a partitioned
 * table's primary key is valid only once the index of its last partition is attached:
 * over a partitioned source, the sink's key always comes first.
 */
static bool awaits_key(TaskConfig *cfg, ErrorData *edata, bool sink_step) {
	Relation rel;
	bool keyless;

	/* a deadlock between two jobs of pg_restore -j, each building the key of one of
	 * the flow's tables and binding after it, each holding its table to commit: the
	 * survivor waits for the victim's commit and binds */
	if (sink_step || edata->sqlerrcode == ERRCODE_T_R_DEADLOCK_DETECTED)
		return true;
	if (edata->sqlerrcode != ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE)
		return false; /* not copy_keys' "needs a primary key" */
	/* outside the binding's subtransaction, so never a wait: a job of pg_restore -j
	 * that holds the source exclusively builds its key and binds after it, waiting for
	 * this command's table (waiting here for the source closed a deadlock that failed
	 * the restore's command on PostgreSQL 18, whose ADD PRIMARY KEY holds the sink
	 * exclusively: the oracle, seed 1570396023) */
	if (!ConditionalLockRelationOid(cfg->source_relid, AccessShareLock))
		return true;
	rel = try_table_open(cfg->source_relid, NoLock);
	if (rel == NULL) {
		UnlockRelationOid(cfg->source_relid, AccessShareLock);
		return false;
	}
	keyless = !OidIsValid(fn_rel_primary_key_index(rel));
	table_close(rel, AccessShareLock);
	return keyless;
}

/* The checks and the binding, once the flow is locked; with FN_BIND_UPGRADED as the
 * flow's owner (a writer's statement may bind it, upgrade_binding.c), as its worker
 * refreshes. *sink_step says that the sink's check was under way. */
static void bind_locked(TaskConfig *cfg, int flags, bool *sink_step) {
	bool upgraded = (flags & FN_BIND_UPGRADED) != 0;
	Oid user;
	int sec;
	FlowQuery *fq;

	GetUserIdAndSecContext(&user, &sec);
	if (upgraded)
		SetUserIdAndSecContext(cfg->owner, sec | SECURITY_LOCAL_USERID_CHANGE);
	fq = fn_analyse_stored(cfg);
	*sink_step = true; /* the step a sink restored without its key yet fails */
	fn_check_sink(cfg->sink_relid, fq);
	*sink_step = false;
	SetUserIdAndSecContext(user, sec);
	bind_checked(cfg, fq, upgraded);
}

/*
 * A flow pg_upgrade brought over that a subscription of this database writes into:
 * unbound for good, with a WARNING, so that it says 'restored' and refresh_flow
 * recomputes it. A subscription's apply and tablesync workers write without the
 * executor's hooks (fn_guard_upgraded_write), so one that was enabled may have
 * applied changes to the flow's tables since the server started, before this
 * binding and unmarked (on PostgreSQL 17 and later, pg_upgrade keeps a subscription
 * enabled, its tables and its origin's progress: it applies what the publisher wrote
 * meanwhile at once). Only enabled ones count. A disabled subscription has applied
 * nothing since the start (one enabled and disabled again before this binding
 * aside), and once it is enabled after the binding, its workers fire the triggers the
 * binding creates (they fire in every replication role). One enabled while this
 * binding runs waits for it: the flow's tables are locked (lock_tables) before this
 * looks, so its first write to them comes after the binding's commit. A table a
 * subscription lists in no state (pg_upgrade from 15 or 16 leaves it without its
 * tables until REFRESH PUBLICATION) is not applied to.
 */
static bool unbound_for_subscription(TaskConfig *cfg) {
	ListCell *lc;

	foreach (lc, fn_flow_read_tables(cfg)) {
		char *sub = fn_enabled_subscription_of(lfirst_oid(lc));

		if (sub == NULL)
			continue;
		fn_registry_unbind(cfg->flow_id);
		ereport(WARNING,
		        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		         errmsg("flow \"%s\" needs refresh_flow: its table %s is written by subscription \"%s\", "
		                "whose changes since pg_upgrade may not be marked",
		                cfg->flow_name, fn_qualified_relname(lfirst_oid(lc)), sub),
		         errdetail("A subscription writes without binding the flows pg_upgrade brought over, so "
		                   "the flow is not bound without a recompute."),
		         errhint("SELECT flownode.refresh_flow(%s) binds it and recomputes its sink.",
		                 quote_literal_cstr(cfg->flow_name))));
		return true;
	}
	return false;
}

/* A binding that failed, said: a WARNING, or only DEBUG1 when the flow may wait for
 * a key (FN_BIND_AWAITS_KEY: bound when the restore builds one). */
static void report_unbound(TaskConfig *cfg, int flags, ErrorData *edata, bool sink_step) {
	bool quiet = (flags & FN_BIND_AWAITS_KEY) && awaits_key(cfg, edata, sink_step);

	if (flags & FN_BIND_UPGRADED)
		ereport(quiet ? DEBUG1 : WARNING, (errmsg("flow \"%s\" is not bound after pg_upgrade yet: %s",
		                                          cfg->flow_name, edata->message)));
	else
		ereport(quiet ? DEBUG1 : WARNING,
		        (errmsg("restored flow \"%s\" is not bound yet: %s", cfg->flow_name, edata->message),
		         errhint("Once the problem is fixed, SELECT flownode.refresh_flow(%s) binds it.",
		                 quote_literal_cstr(cfg->flow_name))));
}

/* One binding tried (fn_try_in_subxact's work): kept unless a lock was busy. */
typedef struct BindTry {
	TaskConfig *cfg;
	int flags;
	bool sink_step;
	FnBindResult result;
} BindTry;

static bool bind_work(void *arg) {
	BindTry *t = arg;
	bool busy;
	TaskConfig *locked = lock_unbound(t->cfg, t->flags, &busy);

	if (locked != NULL && (t->flags & FN_BIND_UPGRADED) && unbound_for_subscription(locked))
		t->result = FN_BIND_UNBOUND;
	else if (locked != NULL)
		bind_locked(locked, t->flags, &t->sink_step);
	if (busy) /* the locks it did take go with the subtransaction */
		t->result = FN_BIND_BUSY;
	return !busy;
}

FnBindResult fn_try_bind_flow(TaskConfig *cfg, int flags) {
	BindTry t = {cfg, flags, false, FN_BIND_DONE};
	ErrorData *edata = fn_try_in_subxact(bind_work, &t);

	if (edata == NULL)
		return t.result;
	report_unbound(cfg, flags, edata, t.sink_step);
	FreeErrorData(edata);
	return FN_BIND_FAILED;
}

/* Whether the flow's query analyses and its sink fits it now. */
static bool fits_now(TaskConfig *cfg) {
	return fn_analysed_or_null(cfg, true) != NULL;
}

/* Whether the flow is of one row (aggregates without GROUP BY: never windowed); no
 * when its query does not analyse now. */
static bool one_row(TaskConfig *cfg) {
	FlowQuery *fq;

	if (cfg->window.kind != FN_WINDOW_NONE)
		return false;
	fq = fn_analysed_or_null(cfg, false);
	return fq != NULL && fq->shape == FLOW_SHAPE_SINGLE;
}

List *fn_restored_flows_awaiting_key(Oid relid) {
	List *waiting = NIL;
	List *tables;
	ListCell *lc, *fc;

	if (fn_slot_count() == 0 || !OidIsValid(fn_catalog_relid(true)) || !fn_catalog_is_current())
		return NIL; /* not preloaded (refresh_flow says so), or no restored flows here */
	/* the tables above it too: attaching the index of a partition makes the partitioned
	 * index above it valid once every partition has its own, and so on upwards */
	tables = lcons_oid(relid, get_partition_ancestors(relid));
	foreach (lc, tables) {
		List *flows = fn_load_unbound_flows_of_table(lfirst_oid(lc));

		foreach (fc, flows) {
			TaskConfig *cfg = lfirst(fc);

			if (!fn_flows_contain(waiting, cfg->flow_id) && !fits_now(cfg))
				waiting = lappend(waiting, cfg);
		}
	}
	return waiting;
}

void fn_bind_restored_flows(List *flows) {
	ListCell *lc;

	if (flows == NIL)
		return;
	/* the command's catalog changes seen, and the sources' index lists read again:
	 * ALTER INDEX ... ATTACH PARTITION marks a partitioned primary key valid in
	 * pg_index without a relcache invalidation of its table, and the catalog snapshot
	 * the command left may not see it (both found by TAP 021) */
	foreach (lc, flows)
		CacheInvalidateRelcacheByRelid(((TaskConfig *)lfirst(lc))->source_relid);
	CommandCounterIncrement();
	InvalidateCatalogSnapshot();
	foreach (lc, flows)
		(void)fn_try_bind_flow(lfirst(lc), FN_BIND_AWAITS_KEY);
}

/*
 * pg_dump and pg_restore --data-only --disable-triggers disable every table's
 * triggers around its COPY, flownode.flow's too (the internal ones of the foreign
 * keys that reference it: TAP 021 checks that they still exist): the sources' rows
 * may then come after a binding, unmarked.
 */
static bool triggers_disabled(Oid relid) {
	Relation rel = table_open(relid, AccessShareLock);
	bool disabled = false;

	for (int i = 0; rel->trigdesc != NULL && i < rel->trigdesc->numtriggers; i++)
		disabled |= rel->trigdesc->triggers[i].tgenabled == TRIGGER_DISABLED;
	table_close(rel, AccessShareLock);
	return disabled;
}

/* After a COPY into the catalog: its unbound flows of one row, bound. A failure is a
 * WARNING (they wait for no key); a flow whose query does not analyse yet is left to
 * the restore's keys or to refresh_flow, which say why. */
static void bind_one_row_flows(Oid catalog) {
	ListCell *lc;

	if (triggers_disabled(catalog))
		return;
	CommandCounterIncrement(); /* the COPY's rows */
	foreach (lc, fn_load_all_flows()) {
		TaskConfig *cfg = lfirst(lc);

		if (!cfg->bound && one_row(cfg))
			(void)fn_try_bind_flow(cfg, 0);
	}
}

/* After a COPY into a table: its bound flows of one row whose sink it is get their
 * window marked, as a removal (the row the COPY added is not the query's, or not
 * the only one). */
static void mark_one_row_sinks(Oid relid) {
	ListCell *lc;

	foreach (lc, fn_load_flows_of_relation(relid)) {
		TaskConfig *cfg = lfirst(lc);

		if (cfg->bound && cfg->sink_relid == relid && one_row(cfg))
			fn_mark_rows_extent(cfg->source_relid, list_make1(&cfg->flow_id));
	}
}

void fn_after_copy_from(Oid relid) {
	if (!OidIsValid(relid) || fn_slot_count() == 0 || !OidIsValid(fn_catalog_relid(true)) ||
	    !fn_catalog_is_current())
		return; /* not preloaded (refresh_flow says so), or no flows here */
	if (relid == fn_catalog_relid(false))
		bind_one_row_flows(relid);
	else
		mark_one_row_sinks(relid);
}

/* The source tables of the bound flows get the triggers a fresh install would give
 * their flows: the update's new kinds of trigger (the key triggers of 0.4, which a
 * catalog older than the library could not have, marking/key_triggers.c) are
 * installed now, so an updated flow behaves as one created after the update. */
static void sync_updated_triggers(List *flows) {
	List *synced = NIL;
	ListCell *lc;

	foreach (lc, flows) {
		TaskConfig *cfg = lfirst(lc);

		if (!OidIsValid(cfg->source_relid) || list_member_oid(synced, cfg->source_relid))
			continue;
		synced = lappend_oid(synced, cfg->source_relid);
		fn_sync_marking_triggers(cfg->source_relid);
	}
}

void fn_after_extension_update(void) {
	List *flows;
	Oid catalog;
	ListCell *lc;

	if (!OidIsValid(fn_catalog_relid(true)) || !fn_catalog_is_current())
		return;
	flows = fn_load_bound_flows();
	sync_updated_triggers(flows);
	if (fn_slot_count() == 0)
		return;
	catalog = fn_catalog_relid(false);
	foreach (lc, flows) {
		TaskConfig *cfg = lfirst(lc);
		if (!fn_slot_has_worker(MyDatabaseId, catalog, cfg->flow_id))
			fn_on_commit_restart_worker(cfg->flow_id, cfg->owner);
	}
}

/*
 * AFTER INSERT statement trigger on flownode.pending and flownode.pending_keys.
 * Writers record into them with heap inserts, which fire no trigger: an INSERT or
 * COPY is a restore's (or a superuser's). Its rows reach the bound flows' workers
 * at commit (reload_record: the ranges into the slot, key marks noted).
 */
Datum flownode_pending_restored(PG_FUNCTION_ARGS) {
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
		                errmsg("flownode.pending_restored() must be called as a trigger")));
	if (fn_slot_count() > 0 && fn_catalog_is_current())
		fn_on_commit_reload_records(fn_catalog_relid(false));
	return PointerGetDatum(NULL);
}
