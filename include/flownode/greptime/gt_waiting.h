/*
 * gt_waiting.h: flows that wait for their source table (CREATE FLOW ... WITH
 * (defer_on_missing_source = true)) start when a table of that name appears: after
 * the DDL that can make it appear (CREATE TABLE, CREATE TABLE AS, a table renamed or
 * moved, a GRANT on a table), and when ADMIN FLUSH_FLOW asks for them.
 */
#ifndef FLOWNODE_GT_WAITING_H
#define FLOWNODE_GT_WAITING_H

#include "postgres.h"

#include "registry/flow_registry.h"

/* Starts the waiting flow if its source table exists now, as its owner and with the
 * search_path it was created with; false if it still waits. Errors propagate. */
extern bool fn_gt_start_waiting_flow(TaskConfig *cfg);

/* After a utility command has run (module.c's ProcessUtility hook): starts the
 * waiting flows that can start, when the command can make a source table appear. */
extern void fn_gt_after_utility(Node *stmt);

#endif
