/*
 * flow_removal.h: removing flows: one by drop_flow (or create_flow's or_replace), and
 * every flow of a table, extension or database that is dropped (PostgreSQL's
 * object-access and utility hooks), as PostgreSQL drops dependent objects.
 */
#ifndef FLOWNODE_FLOW_REMOVAL_H
#define FLOWNODE_FLOW_REMOVAL_H

#include "postgres.h"

#include "registry/flow_registry.h"

extern void fn_flow_removal_init(void);

/* Removes the flow in the current transaction: its catalog row, its durable record,
 * and its source's triggers if no other flow needs them; its worker stops at commit. */
extern void fn_remove_flow(TaskConfig *cfg);

/* Around a DROP statement: the tables it drops by name and the partitions under them,
 * whose rows the utility hook has marked if they left a flow's source. */
extern void fn_dropping_begin(List *relids);
extern void fn_dropping_end(void);

#endif
