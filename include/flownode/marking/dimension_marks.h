/*
 * dimension_marks.h: writes to the dimension tables of flows that join (docs/internals.md
 * §3, Dimension tables). The triggers collect the join columns' old and new values
 * of the changed rows per (sub)transaction; at PRE_COMMIT, after the writer is
 * registered in flight, the windows of the fact rows holding those values are looked
 * up in a fresh snapshot and added to each flow's marks, which commit_marks.c
 * records and publishes like any writer's.
 */
#ifndef FLOWNODE_DIMENSION_MARKS_H
#define FLOWNODE_DIMENSION_MARKS_H

#include "postgres.h"

#include "access/xact.h"

/* Whether the transaction changed rows of a dimension table. */
extern bool fn_dimension_marks_pending(void);
/* PRE_COMMIT, once the writer is in flight (fn_inflight_begin): the lookups, whose
 * windows join the transaction's marks (mark_triggers.h). */
extern void fn_dimension_marks_resolve(void);
/* A subtransaction's values: dropped with it, or handed to its parent. */
extern void fn_dimension_marks_subxact(SubXactEvent event, SubTransactionId mySubid,
                                       SubTransactionId parentSubid);
/* The end of the transaction either way. */
extern void fn_dimension_marks_forget(void);

#endif
