/*
 * durable_record.h: flownode.pending, the durable record of pending work
 * (docs/internals.md §4). Writers add to it at PRE_COMMIT, a refresh trims what it
 * covered in its own snapshot, a worker reloads its flow's part at start.
 */
#ifndef FLOWNODE_DURABLE_RECORD_H
#define FLOWNODE_DURABLE_RECORD_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "utils/snapshot.h"

#include "core/time_range.h"
#include "shmem/flow_slots.h"

extern void fn_record_init(void);

/* A commit's writes: the table and its index opened once for every flow it records. */
typedef struct PendingWriter PendingWriter;
extern PendingWriter *fn_pending_open(void);
extern void fn_pending_write(PendingWriter *w, int64 flow_id, const FnTimeRange *ranges, uint32 n,
                             TimestampTz committed_at);
extern void fn_pending_close(PendingWriter *w);

/* The flow's recorded windows, merged and sorted, read as the catalog's owner; and
 * when the oldest record was committed (0: none, or not known). */
extern FnTimeRange *fn_record_read(int64 flow_id, uint32 *n, TimestampTz *oldest);
/* The flow's recorded windows into its slot's dirty and durable sets (worker start). */
extern void fn_reload_pending(int64 flow_id, FlowSlot *slot);
/* Removes refreshed (and expired) windows, in the refresh's snapshot (under SPI). */
extern void fn_record_trim(int64 flow_id, const FnTimeRange *ranges, int nranges, int64 expired_before,
                           Snapshot snap);
/* Removes the flow's rows (it is being dropped). */
extern void fn_record_forget_flow(int64 flow_id);

#endif
