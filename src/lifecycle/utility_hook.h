/*
 * utility_hook.h: flownode's part in DDL of other objects (PostgreSQL's
 * ProcessUtility hook): DROP DATABASE stops that database's workers first, and
 * ENABLE/DISABLE TRIGGER on a flow's source keeps its marking firing always, or says
 * that it stopped.
 */
#ifndef FLOWNODE_UTILITY_HOOK_H
#define FLOWNODE_UTILITY_HOOK_H

#include "postgres.h"

extern void fn_utility_hook_init(bool preloaded);

#endif
