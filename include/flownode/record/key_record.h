/*
 * key_record.h: the key marks waiting for their refresh, flownode.pending_keys
 * (docs/internals.md §3 and §4, *Key marks*): one row per (flow, window, group)
 * a committed writer touched.
 */
#ifndef FLOWNODE_KEY_RECORD_H
#define FLOWNODE_KEY_RECORD_H

#include "postgres.h"

#include "storage/itemptr.h"
#include "datatype/timestamp.h"
#include "utils/snapshot.h"

#include "core/key_marks.h"

/* A committing writer's key marks of one flow (PRE_COMMIT, its own transaction). */
extern void fn_key_record_write(int64 flow_id, const FnKeyMark *marks, uint32 n);

/* The most key marks one refresh reads: a larger backlog is refreshed in parts. */
#define FN_KEY_RECORD_READ_MAX 100000

/* The flow's key marks the snapshot sees (at most FN_KEY_RECORD_READ_MAX, the oldest
 * windows first), from the line on (the rows of windows
 * that start before `expired_before`, a window start, are deleted unread; 0: none);
 * *ctids says which rows they are, for fn_key_record_trim. Caller's context. */
extern FnKeyMark *fn_key_record_read(int64 flow_id, Snapshot snap, int64 expired_before, uint32 *n,
                                     Datum *ctids);
/* Deletes the rows fn_key_record_read read (ctids), in the same snapshot. */
extern void fn_key_record_trim(Datum ctids, Snapshot snap);

/* The windows holding key marks the current snapshot sees, sorted, distinct
 * (read_flow, the flows view). */
extern FnTimeRange *fn_key_record_windows(int64 flow_id, uint32 *n);

/* A flow's key marks as the flows view shows them: their windows, sorted and
 * distinct, and when the oldest of them committed (its lag). */
typedef struct FnKeyRecordFlow {
	int64 flow_id;
	FnTimeRange *windows;
	uint32 nwindows;
	TimestampTz oldest;
} FnKeyRecordFlow;

/* Every flow's key marks the current snapshot sees, in one query (the flows view:
 * once per read, not once per flow), sorted by flow_id; NULL with *nflows 0 when
 * none. Caller's context. */
extern FnKeyRecordFlow *fn_key_record_summary(uint32 *nflows);
/* The flow's entry of a summary, NULL when it has no key marks. */
extern const FnKeyRecordFlow *fn_key_record_find(const FnKeyRecordFlow *flows, uint32 n, int64 flow_id);

/* The flow's rows go with the flow. */
extern void fn_key_record_forget_flow(int64 flow_id);

#endif
