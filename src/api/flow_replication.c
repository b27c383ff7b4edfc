/*
 * flow_replication.c: the flows view's replication column (docs/reference.md,
 * "flownode.flows"; docs/operations.md, "Flow servers"): on a flow server, why a
 * flow's sink is behind its publishers. NULL when no subscription feeds the flow,
 * else one sentence per subscription that does, the worst first (FeedState's
 * order), then by name: failing, disabled, without apply worker, copying a table the
 * flow reads, or streaming with the position it has applied. The subscriptions and
 * their states are those flownode.wait_for_publishers judges (subscription_feeds.c);
 * as the view has no baseline of failures, failing means an enabled subscription
 * whose apply worker is not running and whose workers have failed.
 */
#include "flownode.h"

#include "api/subscription_feeds.h"
#include "pgutil/pg_util.h"
#include "registry/flow_registry.h"

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(flownode_flow_replication);

/* One feeding subscription's sentence, with what it is sorted by. */
typedef struct FeedLine {
	FeedState state;
	const char *name;
	char *text;
} FeedLine;

static int compare_lines(const ListCell *a, const ListCell *b) {
	const FeedLine *x = lfirst(a);
	const FeedLine *y = lfirst(b);

	if (x->state != y->state)
		return x->state < y->state ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The sentence of a streaming subscription: the position it has applied, and the
 * failures of its workers, which a worker restarted after an error may soon add to. */
static char *streaming_text(const FeedStatus *st) {
	if (XLogRecPtrIsInvalid(st->applied))
		return psprintf("subscription \"%s\" streams (no position applied yet)", st->name);
	if (st->failures == 0)
		return psprintf("subscription \"%s\" streams (applied up to %X/%X)", st->name,
		                LSN_FORMAT_ARGS(st->applied));
	if (st->failures == 1)
		return psprintf("subscription \"%s\" streams (applied up to %X/%X; 1 failure since its "
		                "statistics were reset)",
		                st->name, LSN_FORMAT_ARGS(st->applied));
	return psprintf("subscription \"%s\" streams (applied up to %X/%X; %lld failures since its "
	                "statistics were reset)",
	                st->name, LSN_FORMAT_ARGS(st->applied), (long long)st->failures);
}

/* The sentence saying what the subscription is doing; NULL: dropped meanwhile. */
static char *feed_text(const FeedStatus *st, FeedState state) {
	switch (state) {
	case FEED_FAILING:
		if (st->failures == 1)
			return psprintf("subscription \"%s\" is failing (1 failure since its statistics were reset; "
			                "the server log has the error)",
			                st->name);
		return psprintf("subscription \"%s\" is failing (%lld failures since its statistics were reset; "
		                "the server log has the last error)",
		                st->name, (long long)st->failures);
	case FEED_DISABLED:
		return psprintf("subscription \"%s\" is disabled", st->name);
	case FEED_NO_WORKER:
		return psprintf("subscription \"%s\" has no apply worker", st->name);
	case FEED_COPYING:
		return psprintf("subscription \"%s\" is copying table %s", st->name,
		                fn_qualified_relname(st->copying));
	case FEED_STREAMING:
		return streaming_text(st);
	case FEED_DROPPED:
		break;
	}
	return NULL;
}

/* The sentences of the subscriptions feeding the flow, joined; NULL: none feeds it. */
static char *flow_replication_text(TaskConfig *cfg) {
	List *tables = fn_flow_feed_tables(cfg);
	List *lines = NIL;
	ListCell *lc;
	StringInfoData s;

	foreach (lc, fn_feeding_subscriptions(tables)) {
		FeedLine *line = palloc(sizeof(FeedLine));
		FeedStatus st;

		fn_read_feed_status(lfirst_oid(lc), tables, &st);
		line->state = fn_feed_state(&st, -1);
		line->name = st.name;
		line->text = feed_text(&st, line->state);
		if (line->text != NULL)
			lines = lappend(lines, line);
	}
	if (lines == NIL)
		return NULL;
	list_sort(lines, compare_lines);
	initStringInfo(&s);
	foreach (lc, lines) {
		if (s.len > 0)
			appendStringInfoString(&s, "; ");
		appendStringInfoString(&s, ((FeedLine *)lfirst(lc))->text);
	}
	return s.data;
}

/* flownode.flow_replication(flow_id): NULL for a flow no subscription feeds, and for
 * one of a role the caller is not. On a server without subscriptions (most) it is
 * one scan of an empty catalog. */
Datum flownode_flow_replication(PG_FUNCTION_ARGS) {
	TaskConfig *cfg;
	char *sentences;

	if (!fn_database_has_subscriptions())
		PG_RETURN_NULL();
	cfg = fn_load_task_config(PG_GETARG_INT64(0), true);
	if (cfg == NULL || cfg->waiting || !has_privs_of_role(GetUserId(), cfg->owner))
		PG_RETURN_NULL();
	sentences = flow_replication_text(cfg);
	if (sentences == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(sentences));
}
