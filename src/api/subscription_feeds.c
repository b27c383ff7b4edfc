/*
 * subscription_feeds.c: the subscriptions feeding a flow on a flow server and the
 * state of each (api/subscription_feeds.h), the one place flownode.wait_for_publishers
 * and the flows view's replication column read and judge them.
 *
 * A subscription feeds a flow when pg_subscription_rel names one of the tables its
 * sink is computed from: the source (or a partition or child of it: a subscription
 * may name either), the dimensions, and those of the flows it reads from, as
 * flush_flow's cascade goes. Its state comes from pg_subscription (enabled), from
 * pg_stat_subscription (the apply worker and latest_end_lsn, the position it has
 * applied and committed: replication_wait.c says why that one), from
 * pg_stat_subscription_stats (its workers' failures) and from pg_subscription_rel
 * (the tables still in their initial synchronization).
 */
#include "flownode.h"

#include "api/subscription_feeds.h"
#include "registry/flow_chain.h"
#include "registry/flow_dimensions.h"

#include "access/genam.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_subscription.h"
#include "catalog/pg_subscription_rel.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "pgstat.h"
#include "utils/fmgroids.h"
#include "utils/pg_lsn.h"

bool fn_database_has_subscriptions(void) {
	Relation rel = table_open(SubscriptionRelRelationId, AccessShareLock);
	SysScanDesc scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	bool any = HeapTupleIsValid(systable_getnext(scan));

	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return any;
}

/* A table and its partitions or children: a subscription may name either. */
static List *with_descendants(List *tables, Oid relid) {
	/* no lock: one held until the wait call ends would hold up a replicated TRUNCATE,
	 * which the call then waits for */
	return list_concat_unique_oid(tables, find_all_inheritors(relid, NoLock, NULL));
}

List *fn_flow_feed_tables(TaskConfig *top) {
	List *tables = NIL;
	ListCell *lc;

	foreach (lc, fn_flows_to_flush(top)) {
		TaskConfig *cfg = lfirst(lc);
		ListCell *dc;

		tables = with_descendants(tables, cfg->source_relid);
		foreach (dc, fn_load_flow_dimensions(cfg->flow_id))
			tables = with_descendants(tables, lfirst_oid(dc));
	}
	return tables;
}

List *fn_feeding_subscriptions(List *tables) {
	List *subids = NIL;
	Relation rel = table_open(SubscriptionRelRelationId, AccessShareLock);
	ListCell *lc;

	foreach (lc, tables) {
		ScanKeyData key;
		SysScanDesc scan;
		HeapTuple tup;

		ScanKeyInit(&key, Anum_pg_subscription_rel_srrelid, BTEqualStrategyNumber, F_OIDEQ,
		            ObjectIdGetDatum(lfirst_oid(lc)));
		scan = systable_beginscan(rel, SubscriptionRelSrrelidSrsubidIndexId, true, NULL, 1, &key);
		while (HeapTupleIsValid(tup = systable_getnext(scan)))
			subids = list_append_unique_oid(subids, ((Form_pg_subscription_rel)GETSTRUCT(tup))->srsubid);
		systable_endscan(scan);
	}
	table_close(rel, AccessShareLock);
	return subids;
}

/* The failures of the subscription's workers (apply and table sync) counted since
 * its statistics were reset, read afresh rather than from the transaction's cache. */
static int64 sub_failures(Oid subid) {
	Oid types[1] = {OIDOID};
	Datum values[1] = {ObjectIdGetDatum(subid)};
	bool isnull = true;
	int64 n = 0;

	pgstat_clear_snapshot();
	if (SPI_execute_with_args(
	        "SELECT apply_error_count + sync_error_count FROM pg_catalog.pg_stat_subscription_stats "
	        "WHERE subid = $1",
	        1, types, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_stat_subscription_stats");
	if (SPI_processed == 1)
		n = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	SPI_freetuptable(SPI_tuptable);
	return isnull ? 0 : n;
}

/* The apply worker's applied-and-committed position; false when it has no apply
 * worker (not started, or between a failure and its restart). */
static bool applied_position(Oid subid, XLogRecPtr *applied) {
	Oid types[1] = {OIDOID};
	Datum values[1] = {ObjectIdGetDatum(subid)};
	bool no_pid = true;
	bool isnull;

	if (SPI_execute_with_args("SELECT pid, latest_end_lsn FROM pg_catalog.pg_stat_subscription "
	                          "WHERE subid = $1 AND relid IS NULL",
	                          1, types, values, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "could not read pg_stat_subscription");
	*applied = InvalidXLogRecPtr;
	if (SPI_processed == 1) {
		HeapTuple row = SPI_tuptable->vals[0];
		Datum lsn = SPI_getbinval(row, SPI_tuptable->tupdesc, 2, &isnull);

		(void)SPI_getbinval(row, SPI_tuptable->tupdesc, 1, &no_pid);
		if (!isnull)
			*applied = DatumGetLSN(lsn);
	}
	SPI_freetuptable(SPI_tuptable);
	return !no_pid;
}

/* The first of the tables the subscription replicates into that is not synchronized
 * (its initial copy not done and handed to the apply worker); InvalidOid: none. */
static Oid unsynchronized_table(Oid subid, List *tables) {
	ListCell *lc;

	foreach (lc, tables) {
		XLogRecPtr sublsn;
		char state = GetSubscriptionRelState(subid, lfirst_oid(lc), &sublsn);

		if (state != '\0' && state != SUBREL_STATE_READY)
			return lfirst_oid(lc);
	}
	return InvalidOid;
}

void fn_read_feed_status(Oid subid, List *tables, FeedStatus *st) {
	/* read before SPI_connect: the name must outlive SPI_finish */
	Subscription *sub = GetSubscription(subid, true);

	memset(st, 0, sizeof(*st));
	st->subid = subid;
	st->applied = InvalidXLogRecPtr;
	if (sub == NULL)
		return;
	st->name = sub->name;
	st->enabled = sub->enabled;
	st->copying = unsynchronized_table(subid, tables);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	st->failures = sub_failures(subid);
	st->has_worker = applied_position(subid, &st->applied);
	SPI_finish();
}

FeedState fn_feed_state(const FeedStatus *st, int64 baseline) {
	bool failing = baseline >= 0 ? st->failures > baseline : !st->has_worker && st->failures > 0;

	if (st->name == NULL)
		return FEED_DROPPED;
	if (!st->enabled)
		return FEED_DISABLED;
	if (failing)
		return FEED_FAILING;
	if (!st->has_worker)
		return FEED_NO_WORKER;
	if (OidIsValid(st->copying))
		return FEED_COPYING;
	return FEED_STREAMING;
}
