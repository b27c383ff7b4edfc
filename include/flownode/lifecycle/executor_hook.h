/*
 * executor_hook.h: flownode's one ExecutorStart hook.
 */
#ifndef FLOWNODE_EXECUTOR_HOOK_H
#define FLOWNODE_EXECUTOR_HOOK_H

#include "postgres.h"

extern void fn_executor_hook_init(void);

#endif
