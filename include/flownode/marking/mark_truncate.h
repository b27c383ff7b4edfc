/*
 * mark_truncate.h: TRUNCATE of a flow's source empties its flows' sinks; TRUNCATE
 * of a partition under one marks the windows of its rows.
 */
#ifndef FLOWNODE_MARK_TRUNCATE_H
#define FLOWNODE_MARK_TRUNCATE_H

#include "postgres.h"

#include "nodes/pg_list.h"

/* Around a TRUNCATE statement: the tables it truncates (its partitions mark their
 * rows only for tables above them that it leaves alone). */
extern void fn_truncate_begin(List *relids);
extern void fn_truncate_end(void);

#endif
