/*
 * commit_marks.h: a writer's marks at the end of its transaction (docs/internals.md §2, invariant 2): at
 * PRE_COMMIT each flow's windows are derived from its groups' sets, its slot claimed
 * and its windows recorded durably unless already recorded; at COMMIT they are
 * published to shared memory (nothing there can fail); at ABORT they are dropped.
 */
#ifndef FLOWNODE_COMMIT_MARKS_H
#define FLOWNODE_COMMIT_MARKS_H

#include "postgres.h"

#include "core/time_range.h"

extern void fn_marks_pre_commit(void);
extern void fn_marks_commit(void);
extern void fn_marks_abort(void);
/* This transaction's own, uncommitted marks for the flow, in its windows (read_flow:
 * its snapshot sees the rows, the record does not hold them yet). */
extern FnTimeRange *fn_marks_local_windows(int64 flow_id, uint32 *n);

#endif
