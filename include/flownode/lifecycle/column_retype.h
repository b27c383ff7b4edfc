/*
 * column_retype.h: ALTER COLUMN TYPE of a table a flow reads, around the command
 * (utility_hook.c): the flows that read a retyped column found before it, their
 * windows marked and their sinks' hidden key columns retyped after it.
 */
#ifndef FLOWNODE_COLUMN_RETYPE_H
#define FLOWNODE_COLUMN_RETYPE_H

#include "postgres.h"

#include "nodes/parsenodes.h"

typedef struct FnRetyped FnRetyped;

/* Before the command: the flows reading a column it retypes (NULL: none to follow,
 * or not the table's owner, whose command fails anyway). ERROR when it retypes a
 * flow's time column, naming the flows. */
extern FnRetyped *fn_before_retype(AlterTableStmt *stmt);
/* After it, in its transaction: each flow's sink's hidden key columns take the
 * query's new types, and every window of those flows is marked. */
extern void fn_after_retype(FnRetyped *r);

#endif
