/*
 * key_triggers.h: the row triggers of a flow whose marks carry keys (docs/internals.md
 * §3, *Key marks*): one per event, per such flow, on its source table.
 */
#ifndef FLOWNODE_KEY_TRIGGERS_H
#define FLOWNODE_KEY_TRIGGERS_H

#include "postgres.h"

#include "nodes/pg_list.h"

#define FLOWNODE_KEYS_TRIGGER_NAME "flownode_mark_keys"

/*
 * Keeps the key triggers of relid to exactly those its flows (TaskConfig *, the
 * flows of the table and its tree) need: a flow of a plain table (neither
 * partitioned nor a partition) whose groups are keyed by source columns
 * (fn_key_mark_columns) gets them; the rest are dropped. A flow created in this
 * transaction that gets them without an index on (flownode.key_hash(keys), time)
 * has a NOTICE with the CREATE INDEX that serves its refreshes.
 */
extern void fn_sync_key_triggers(Oid relid, List *flows);

/* After the triggers are synced: a new sink of a flow that got key triggers gets an
 * index on (flownode.key_hash(<sink's keys>), <window>), which its key refreshes read
 * the sink's groups of marked hashes through. */
struct FlowQuery;
extern void fn_key_sink_index(int64 flow_id, Oid source_relid, Oid sink_relid, const struct FlowQuery *fq);

#endif
