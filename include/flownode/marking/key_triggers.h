/*
 * key_triggers.h: the row triggers of a flow whose marks carry keys (docs/internals.md
 * §3, *Key marks*): one per event, per such flow, on each table holding its rows.
 */
#ifndef FLOWNODE_KEY_TRIGGERS_H
#define FLOWNODE_KEY_TRIGGERS_H

#include "postgres.h"

#include "nodes/pg_list.h"

#define FLOWNODE_KEYS_TRIGGER_NAME "flownode_mark_keys"

/* The flows among `flows` (TaskConfig *) whose marks carry keys (fn_key_mark_columns):
 * those that have key triggers already, and all that may while
 * flownode.key_marks_per_window is above 0. Read once per sync of a tree. */
extern List *fn_key_flows(List *flows);

/*
 * Keeps the key triggers of relid to exactly those needed: a table that holds rows
 * (a plain table or a partition) gets them for each flow of key_flows among `mine`,
 * the flows that read its rows, naming its marking source `named`; the rest are
 * dropped. A flow created in this transaction whose source is relid and has no
 * index on (flownode.key_hash(keys), time) has a NOTICE with the CREATE INDEX that
 * serves its refreshes.
 */
extern void fn_sync_key_triggers(Oid relid, List *mine, Oid named, List *key_flows);

/* After the triggers are synced: a new sink of a flow that got key triggers gets an
 * index on (flownode.key_hash(<sink's keys>), <window>), which its key refreshes read
 * the sink's groups of marked hashes through. */
struct FlowQuery;
extern void fn_key_sink_index(int64 flow_id, Oid sink_relid, const struct FlowQuery *fq);

#endif
