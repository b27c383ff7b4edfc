/*
 * utility_hook.h: flownode's part in DDL of other objects (PostgreSQL's
 * ProcessUtility hook): DROP DATABASE stops that database's workers first, and
 * ENABLE/DISABLE TRIGGER on a flow's source keeps its marking firing always, or says
 * that it stopped.
 */
#ifndef FLOWNODE_UTILITY_HOOK_H
#define FLOWNODE_UTILITY_HOOK_H

#include "postgres.h"

#include "tcop/utility.h"

extern void fn_utility_hook_init(bool preloaded);
/* A utility command run with flownode's part around it: `next` runs the command
 * itself (the hook installed before flownode's, NULL: standard_ProcessUtility).
 * Called by module.c's one ProcessUtility hook. */
extern void fn_utility_command(ProcessUtility_hook_type next, PlannedStmt *pstmt, const char *queryString,
                               bool readOnlyTree, ProcessUtilityContext context, ParamListInfo params,
                               QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc);

#endif
