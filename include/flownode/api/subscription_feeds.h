/*
 * subscription_feeds.h: on a flow server (docs/operations.md, "Flow servers"), the
 * subscriptions that replicate into the tables a flow reads, and what each one is
 * doing. Read and judged in this one place for flownode.wait_for_publishers
 * (replication_wait.c), which fails on a subscription that cannot reach its point,
 * and for the flows view's replication column (flow_replication.c), which says why a
 * sink is behind.
 */
#ifndef FLOWNODE_SUBSCRIPTION_FEEDS_H
#define FLOWNODE_SUBSCRIPTION_FEEDS_H

#include "postgres.h"

#include "access/xlogdefs.h"
#include "nodes/pg_list.h"

#include "registry/flow_registry.h"

/* What a subscription feeding a flow is doing, worst first: the flows view lists the
 * subscriptions in this order. */
typedef enum FeedState {
	FEED_FAILING,   /* its workers fail (see fn_feed_state) */
	FEED_DISABLED,  /* ALTER SUBSCRIPTION ... DISABLE, or disable_on_error after an error */
	FEED_DROPPED,   /* dropped since the flow's subscriptions were found */
	FEED_NO_WORKER, /* enabled, no apply worker running, no failure counted */
	FEED_COPYING,   /* a table the flow reads has not finished its initial synchronization */
	FEED_STREAMING  /* its apply worker runs and every table the flow reads is synchronized */
} FeedState;

/* A subscription's state as the catalog and the statistics say now. */
typedef struct FeedStatus {
	Oid subid;
	char *name; /* NULL: the subscription was dropped */
	bool enabled;
	bool has_worker;    /* an apply worker runs (pg_stat_subscription has its pid) */
	XLogRecPtr applied; /* applied and committed up to (latest_end_lsn); invalid: none reported */
	int64 failures;     /* apply_error_count + sync_error_count (pg_stat_subscription_stats) */
	Oid copying;        /* the first table the flow reads that is not synchronized; InvalidOid: none */
} FeedStatus;

/* Whether a subscription of this database replicates into any table: one scan of
 * pg_subscription_rel, empty on most servers. */
extern bool fn_database_has_subscriptions(void);
/* The tables the flow's sink is computed from (Oid list): the sources and dimensions,
 * with their partitions, of the flow and of every flow it reads from. */
extern List *fn_flow_feed_tables(TaskConfig *top);
/* The subscriptions (Oid list) that replicate into one of the tables. */
extern List *fn_feeding_subscriptions(List *tables);
/* Reads the subscription's state now (the statistics afresh, not from the
 * transaction's cache); `tables` are those of fn_flow_feed_tables. */
extern void fn_read_feed_status(Oid subid, List *tables, FeedStatus *st);
/*
 * What the subscription is doing. Failing: with a baseline (the failures counted when
 * the caller began, >= 0), any failure since; without one (-1), an enabled
 * subscription whose apply worker is not running (it exited on an error and waits
 * for the launcher to start it again) and whose workers have failed since the
 * statistics were reset. An old failure of a subscription that streams again is not
 * failing; a worker restarted to fail again reads as streaming until it does.
 */
extern FeedState fn_feed_state(const FeedStatus *st, int64 baseline);

#endif
