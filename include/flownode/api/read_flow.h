/*
 * read_flow.h: exact real-time reads (docs/reference.md, "flownode.read_flow"): the
 * read views a flow's drop takes with it.
 */
#ifndef FLOWNODE_READ_FLOW_H
#define FLOWNODE_READ_FLOW_H

#include "postgres.h"

/* Drops the views create_read_view made over the sink (a NOTICE each): drop_flow. */
extern void fn_drop_read_views(Oid sink_relid);

#endif
