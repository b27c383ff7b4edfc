/*
 * commit_marks.h: a writer's marks at the end of its transaction (docs/internals.md §2, invariant 2): at
 * PRE_COMMIT each flow's windows are derived from its groups' sets, its slot claimed
 * and its windows recorded durably unless already recorded; at COMMIT they are
 * published to shared memory (nothing there can fail); at ABORT they are dropped.
 */
#ifndef FLOWNODE_COMMIT_MARKS_H
#define FLOWNODE_COMMIT_MARKS_H

#include "postgres.h"

extern void fn_marks_pre_commit(void);
extern void fn_marks_commit(void);
extern void fn_marks_abort(void);

#endif
