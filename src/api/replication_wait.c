/*
 * replication_wait.c: flownode.wait_for_publishers, the exact-as-of call of a flow
 * server (docs/operations.md, "Flow servers"). A flow server takes no writes of its
 * own: logical replication applies its publishers' changes to the flow's source (and
 * dimensions), and the triggers mark them. The call finds the subscriptions that
 * feed the flow's tables (and those of the flows it reads from), takes a point per
 * subscription (the publisher's WAL insert position now, learned over a connection
 * made with the subscription's conninfo, or the position the caller passes), waits
 * until the subscription's apply worker has applied and committed every change
 * before that point, then flushes the flow with cascade: its sink is then exact as of
 * the points. Which subscriptions feed the flow and what each is doing are read and
 * judged by subscription_feeds.c, as the flows view's replication column reads them.
 *
 * Which position means "applied and committed": pg_stat_subscription.latest_end_lsn.
 * The apply worker sets it (UpdateWorkerStats(..., reply = true)) when it processes a
 * keepalive of its walsender, whose position is the end of the WAL the walsender has
 * decoded: every transaction committed before it was sent ahead of the keepalive, and
 * the worker applies and commits messages in order, one at a time, so each was
 * committed on this server when the keepalive is processed. received_lsn is no
 * answer (received, maybe not applied), nor the replication origin's remote_lsn (it
 * stops at the last transaction the publication carried, short of a point past it).
 * The walsender sends that keepalive as soon as it has caught up, so an idle
 * publisher reaches its point too.
 *
 * It fails (SQLSTATE 55000) rather than wait forever: a subscription disabled or
 * dropped, one whose workers fail (pg_stat_subscription_stats counts a failure while
 * it waits), one without an apply worker for NO_WORKER_GRACE_MS, or the timeout.
 */
#include "flownode.h"

#include "api/flow_api.h"
#include "api/subscription_feeds.h"
#include "pgutil/pg_util.h"
#include "registry/flow_registry.h"

#include "access/xlog_internal.h"
#include "catalog/pg_subscription.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "replication/walreceiver.h"
#include "storage/latch.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pg_lsn.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

PG_FUNCTION_INFO_V1(flownode_wait_for_publishers);

/* How long a subscription may have no apply worker: the launcher starts one within
 * wal_retrieve_retry_interval (5 s) of a restart or of its last failure. */
#define NO_WORKER_GRACE_MS 10000
/* How often the positions are read again: nothing sets our latch when they move. */
#define POLL_MS 20

/* A subscription that feeds the flow, and the point it must reach. */
typedef struct FeedingSub {
	Oid subid;
	char *name;
	XLogRecPtr target;
	int64 failures;          /* its workers' failures when the call began */
	TimestampTz seen_worker; /* last time it had an apply worker */
} FeedingSub;

/* The publisher's WAL insert position: every transaction committed there before the
 * call has its commit record before it, synchronous_commit off or not. At the start
 * of a page it points past the page's header, where the walsender's position (the
 * end of the last record) never gets: that is the same point in the WAL. */
static XLogRecPtr normalized_position(XLogRecPtr lsn, int64 block_size, int64 segment_size) {
	if (segment_size > 0 && lsn % segment_size == SizeOfXLogLongPHD)
		return lsn - SizeOfXLogLongPHD;
	if (block_size > 0 && lsn % block_size == SizeOfXLogShortPHD)
		return lsn - SizeOfXLogShortPHD;
	return lsn;
}

/* Runs the position query over a connection to the publisher (libpqwalreceiver, the
 * library the subscription's own workers connect with). */
static XLogRecPtr ask_publisher(WalReceiverConn *conn, Subscription *sub) {
	Oid types[3] = {LSNOID, INT8OID, INT8OID};
	WalRcvExecResult *res;
	TupleTableSlot *slot;
	XLogRecPtr lsn;
	bool isnull;

	res = walrcv_exec(conn,
	                  "SELECT pg_catalog.pg_current_wal_insert_lsn(), "
	                  "pg_catalog.current_setting('wal_block_size')::int8, "
	                  "pg_catalog.pg_size_bytes(pg_catalog.current_setting('wal_segment_size'))",
	                  3, types);
	if (res->status != WALRCV_OK_TUPLES)
		ereport(ERROR, (errcode(ERRCODE_CONNECTION_FAILURE),
		                errmsg("could not read the WAL position of the publisher of subscription \"%s\": %s",
		                       sub->name, res->err)));
	slot = MakeSingleTupleTableSlot(res->tupledesc, &TTSOpsMinimalTuple);
	if (!tuplestore_gettupleslot(res->tuplestore, true, false, slot))
		elog(ERROR, "the publisher of subscription \"%s\" returned no WAL position", sub->name);
	lsn = DatumGetLSN(slot_getattr(slot, 1, &isnull));
	lsn = normalized_position(lsn, DatumGetInt64(slot_getattr(slot, 2, &isnull)),
	                          DatumGetInt64(slot_getattr(slot, 3, &isnull)));
	ExecDropSingleTupleTableSlot(slot);
	walrcv_clear_result(res);
	return lsn;
}

/* The publisher's position now, over a connection of our own (closed on error too). */
static XLogRecPtr publisher_position(Subscription *sub) {
	WalReceiverConn *conn;
	char *err = NULL;
	volatile XLogRecPtr lsn = InvalidXLogRecPtr;

	load_file("libpqwalreceiver", false);
	conn = fn_walrcv_connect_sub(sub, "flownode wait_for_publishers", &err);
	if (conn == NULL)
		ereport(ERROR,
		        (errcode(ERRCODE_CONNECTION_FAILURE),
		         errmsg("could not connect to the publisher of subscription \"%s\": %s", sub->name, err),
		         errhint("Pass the publisher's position in the positions argument instead.")));
	PG_TRY();
	{ lsn = ask_publisher(conn, sub); }
	PG_FINALLY();
	{ walrcv_disconnect(conn); }
	PG_END_TRY();
	return lsn;
}

/* The errdetail of a subscription that is not applying: its workers' failures. */
static int failures_detail(int64 failures) {
	return errdetail_plural("Its workers have failed %lld time since its statistics were reset.",
	                        "Its workers have failed %lld times since its statistics were reset.",
	                        (unsigned long)failures, (long long)failures);
}

/* ERROR when the subscription cannot reach its point: dropped, disabled, failing. */
static void check_subscription(FeedingSub *fs, const FeedStatus *st, const char *flow_name) {
	switch (fn_feed_state(st, fs->failures)) {
	case FEED_DROPPED:
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("subscription \"%s\" feeding flow \"%s\" was dropped", fs->name, flow_name)));
		break;
	case FEED_DISABLED:
		ereport(
		    ERROR,
		    (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		     errmsg("subscription \"%s\" feeding flow \"%s\" is disabled", fs->name, flow_name),
		     failures_detail(st->failures),
		     errhint("Changes committed on its publisher are not applied until ALTER SUBSCRIPTION %s ENABLE.",
		             quote_identifier(fs->name))));
		break;
	case FEED_FAILING:
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("subscription \"%s\" feeding flow \"%s\" is failing", fs->name, flow_name),
		                errdetail_plural("Its workers failed %lld time while the call waited (%lld in all, "
		                                 "pg_stat_subscription_stats); the sink is behind its publisher.",
		                                 "Its workers failed %lld times while the call waited (%lld in all, "
		                                 "pg_stat_subscription_stats); the sink is behind its publisher.",
		                                 (unsigned long)(st->failures - fs->failures),
		                                 (long long)(st->failures - fs->failures), (long long)st->failures),
		                errhint("The server log names the error, for example a column of the publisher's "
		                        "table that this server's table lacks: DDL is not replicated.")));
		break;
	default:
		break;
	}
}

/* Whether the subscription has applied and committed everything before its point;
 * ERROR when it never will. `deadline` passed: ERROR saying how far it got. */
static bool reached(FeedingSub *fs, List *tables, const char *flow_name, TimestampTz now,
                    TimestampTz deadline) {
	FeedStatus st;

	fn_read_feed_status(fs->subid, tables, &st);
	check_subscription(fs, &st, flow_name);
	if (st.has_worker)
		fs->seen_worker = now;
	else if (TimestampDifferenceExceeds(fs->seen_worker, now, NO_WORKER_GRACE_MS) || now >= deadline)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("subscription \"%s\" feeding flow \"%s\" has no running apply worker",
		                       fs->name, flow_name),
		                failures_detail(st.failures),
		                errhint("Check max_logical_replication_workers and the server log.")));
	if (OidIsValid(st.copying) || st.applied < fs->target) {
		if (now < deadline)
			return false;
		ereport(ERROR,
		        (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		         errmsg("subscription \"%s\" feeding flow \"%s\" did not apply its publisher's changes up "
		                "to %X/%X in time",
		                fs->name, flow_name, LSN_FORMAT_ARGS(fs->target)),
		         OidIsValid(st.copying)
		             ? errdetail("Table \"%s\" has not finished its initial synchronization.",
		                         get_rel_name(st.copying))
		             : errdetail("It has applied and committed the changes up to %X/%X.",
		                         LSN_FORMAT_ARGS(st.applied))));
	}
	return true;
}

/* The points the caller passed: {"subscription": "pg_lsn", ...}. */
static void caller_positions(Jsonb *positions, List *subs, const char *flow_name) {
	Oid types[1] = {JSONBOID};
	Datum values[1] = {JsonbPGetDatum(positions)};
	uint64 i;

	if (SPI_execute_with_args("SELECT key, value FROM pg_catalog.jsonb_each_text($1)", 1, types, values, NULL,
	                          true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the positions");
	for (i = 0; i < SPI_processed; i++) {
		char *name = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
		char *lsn = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2);
		ListCell *lc;
		bool found = false;

		foreach (lc, subs) {
			FeedingSub *fs = lfirst(lc);

			if (strcmp(fs->name, name) == 0) {
				fs->target = DatumGetLSN(DirectFunctionCall1(pg_lsn_in, CStringGetDatum(lsn ? lsn : "")));
				found = true;
			}
		}
		if (!found)
			ereport(
			    ERROR,
			    (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			     errmsg("subscription \"%s\" in positions does not feed flow \"%s\"", name, flow_name),
			     errdetail("Only a subscription of one of the tables the flow reads can be waited for.")));
	}
	SPI_freetuptable(SPI_tuptable);
}

/* Every feeding subscription with its point: the caller's, else its publisher's now.
 * A subscription dropped since it was found no longer feeds the flow. */
static List *subscriptions_to_wait(List *tables, Jsonb *positions, const char *flow_name) {
	List *subs = NIL;
	ListCell *lc;

	foreach (lc, fn_feeding_subscriptions(tables)) {
		FeedingSub *fs = palloc0(sizeof(FeedingSub));
		FeedStatus st;

		fn_read_feed_status(lfirst_oid(lc), tables, &st);
		if (st.name == NULL)
			continue;
		fs->subid = st.subid;
		fs->name = pstrdup(st.name);
		fs->target = InvalidXLogRecPtr;
		fs->failures = st.failures;
		fs->seen_worker = GetCurrentTimestamp();
		subs = lappend(subs, fs);
	}
	if (subs == NIL)
		ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
		                errmsg("no subscription feeds flow \"%s\"", flow_name),
		                errdetail("No table the flow reads is in a subscription of this database."),
		                errhint("Call flownode.flush_flow on the server that takes the writes.")));
	if (positions != NULL)
		caller_positions(positions, subs, flow_name);
	foreach (lc, subs) {
		FeedingSub *fs = lfirst(lc);
		FeedStatus st;

		fn_read_feed_status(fs->subid, tables, &st);
		check_subscription(fs, &st, flow_name); /* before connecting to its publisher */
		if (XLogRecPtrIsInvalid(fs->target))
			fs->target = publisher_position(GetSubscription(fs->subid, false));
	}
	return subs;
}

/* Waits until every subscription has reached its point, reading the catalog and the
 * statistics afresh each time round. */
static void wait_for_subscriptions(List *subs, List *tables, const char *flow_name, int64 timeout_usec) {
	TimestampTz deadline = GetCurrentTimestamp() + timeout_usec;
	MemoryContext round =
	    AllocSetContextCreate(CurrentMemoryContext, "wait_for_publishers", ALLOCSET_SMALL_SIZES);
	MemoryContext outer = MemoryContextSwitchTo(round);

	for (;;) {
		TimestampTz now = GetCurrentTimestamp();
		bool all = true;
		ListCell *lc;

		AcceptInvalidationMessages();
		InvalidateCatalogSnapshot();
		foreach (lc, subs)
			all = reached(lfirst(lc), tables, flow_name, now, deadline) && all;
		MemoryContextReset(round);
		if (all)
			break;
		(void)WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, POLL_MS, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	MemoryContextSwitchTo(outer);
	MemoryContextDelete(round);
}

/* wait_for_publishers(flow_name, timeout, positions): returns flush_flow's count
 * (with cascade) once the sink is exact as of the publishers' points. */
Datum flownode_wait_for_publishers(PG_FUNCTION_ARGS) {
	char *flow_name = fn_text_arg(fcinfo, 0, "flow_name");
	Jsonb *positions = PG_ARGISNULL(2) ? NULL : PG_GETARG_JSONB_P(2);
	int64 timeout_usec;
	List *tables;
	List *subs;

	if (PG_ARGISNULL(1))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("timeout must not be null")));
	fn_check_flow_interval(PG_GETARG_INTERVAL_P(1), "timeout", 1);
	timeout_usec = fn_interval_usec(PG_GETARG_INTERVAL_P(1));
	tables = fn_flow_feed_tables(fn_flow_to_flush(flow_name));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	subs = subscriptions_to_wait(tables, positions, flow_name);
	wait_for_subscriptions(subs, tables, flow_name, timeout_usec);
	SPI_finish();
	PG_RETURN_INT64(fn_flush_flow_cascade(flow_name));
}
