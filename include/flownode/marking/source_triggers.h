/*
 * source_triggers.h: the marking triggers flownode puts on a flow's source table
 * (and, for a partitioned source, on each of its partitions), kept to what the
 * flows need as flows, partitions and tables come and go.
 */
#ifndef FLOWNODE_SOURCE_TRIGGERS_H
#define FLOWNODE_SOURCE_TRIGGERS_H

#include "postgres.h"

#include "access/attnum.h"

#define FLOWNODE_INSERT_TRIGGER_NAME "flownode_mark_insert"
#define FLOWNODE_UPDATE_TRIGGER_NAME "flownode_mark_update"
#define FLOWNODE_DELETE_TRIGGER_NAME "flownode_mark_delete"
#define FLOWNODE_TRUNCATE_TRIGGER_NAME "flownode_mark_truncate"
#define FLOWNODE_TRUNCATE_ROWS_TRIGGER_NAME "flownode_mark_truncated_rows"

/*
 * Puts on the table, and on every partition under it, exactly the marking triggers
 * that the flows of the table, of its partitions and of the tables above it need:
 * missing ones are created, ones no flow needs any more are dropped, and the
 * per-backend caches of those tables are invalidated. Locks the partitions (SHARE
 * ROW EXCLUSIVE). Does nothing when the table is gone. ERROR when a table whose
 * writes a flow needs marked cannot carry the triggers (a foreign table) or is the
 * flow's own sink.
 */
extern void fn_sync_marking_triggers(Oid relid);
/*
 * Puts on a table exactly the triggers the flows that join it as a dimension need
 * (per join column: row triggers collecting the changed rows' values; a TRUNCATE
 * trigger), dropping those no flow needs any more. Does nothing when the table is
 * gone.
 */
extern void fn_sync_dimension_triggers(Oid relid);
/* Makes the table's marking triggers fire in every replication role, except those
 * someone disabled. */
extern void fn_keep_marking_always(Oid relid);
/* Whether the table and every partition under it have marking triggers, all firing
 * always (the one definition; the table is not locked). */
extern bool fn_marking_enabled(Oid relid);

#endif
