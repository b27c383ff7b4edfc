/*
 * run_history.h: flownode.run_history, one row per run of a flow (an evaluation, a
 * flush's refresh, refresh_flow's range, a background backfill's chunk,
 * create_flow's fill), as pg_cron's cron.job_run_details and TimescaleDB's
 * job_history keep theirs: written by whoever ran it, kept to
 * flownode.run_history_per_flow rows a flow (docs/reference.md, "flownode.runs").
 */
#ifndef FLOWNODE_RUN_HISTORY_H
#define FLOWNODE_RUN_HISTORY_H

#include "postgres.h"

#include "datatype/timestamp.h"

/* the kinds of run, as the table's kind column names them */
typedef enum FnRunKind {
	FN_RUN_REFRESH,
	FN_RUN_FLUSH,
	FN_RUN_REPAIR,
	FN_RUN_BACKFILL,
	FN_RUN_FILL
} FnRunKind;

typedef struct FnRunRecord {
	int64 flow_id;
	FnRunKind kind;
	TimestampTz start;
	TimestampTz end;
	int64 windows;      /* < 0: not known */
	int64 rows_read;    /* source rows in the windows it refreshed, as counted; < 0: not known */
	int64 rows_written; /* sink rows */
	bool folded;        /* it folded the open window's new rows in */
	int sqlstate;       /* 0: it succeeded */
	const char *error;  /* the failure's message */
} FnRunRecord;

/* The row written in the current transaction, as the catalog's owner: a success in
 * the run's own transaction (it commits with it, and costs no other), a failure in
 * one of its own after the run's rolled back. Nothing when the database's objects
 * have no history (a version before 0.4 not updated yet) or
 * flownode.run_history_per_flow is 0. */
extern void fn_history_write(const FnRunRecord *r);
/* Whether the writer of flow's rows should prune them now: once every tenth of
 * flownode.run_history_per_flow writes, so a flow holds at most that many and a
 * tenth more (`writes` counts the writer's). */
extern bool fn_history_prune_due(uint64 writes);
/* The flow's oldest rows beyond flownode.run_history_per_flow deleted, in the current
 * transaction. */
extern void fn_history_prune(int64 flow_id);

#endif
