/*
 * key_marks.h: the key marks a transaction collects (docs/internals.md §3, *Key
 * marks*): per flow and (sub)transaction, the groups (window, hash of the keys) its
 * rows touched, recorded at PRE_COMMIT in flownode.pending_keys and noted to the
 * flow's slot at COMMIT.
 */
#ifndef FLOWNODE_MARKING_KEY_MARKS_H
#define FLOWNODE_MARKING_KEY_MARKS_H

#include "postgres.h"

#include "access/xact.h"

#include "bridge/core_bridge.h"

/* The most key marks one (sub)transaction keeps per flow: past it, windows are
 * marked whole (KeyMarks hands them back), so the memory stays bounded. */
#define FN_KEY_MARKS_PER_XACT 4096

extern bool fn_key_marks_pending(void);
/* At PRE_COMMIT, after the transaction's rows are marked: the records written. */
extern void fn_key_marks_pre_commit(Oid catalog_relid);
/* At COMMIT: the slots told. Cannot fail. */
extern void fn_key_marks_commit(void);
/* At the end of the transaction either way. */
extern void fn_key_marks_forget(void);
extern void fn_key_marks_subxact(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid);
/* The windows this transaction key-marked for the flow, added to s (room for
 * fn_key_marks_count more); read_flow reads them as dirty. */
extern uint32 fn_key_marks_count(int64 flow_id);
extern void fn_key_marks_add_windows(int64 flow_id, FnDirtySet s);

#endif
