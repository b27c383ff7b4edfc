/*
 * internal_trigger.h: one of flownode's internal marking triggers, created.
 */
#ifndef FLOWNODE_INTERNAL_TRIGGER_H
#define FLOWNODE_INTERNAL_TRIGGER_H

#include "postgres.h"

#include "nodes/pg_list.h"

/* Creates one internal marking trigger (fired always, dropped with the extension):
 * `type` its TRIGGER_TYPE_* timing and events, `when` the text of its WHEN clause
 * (NULL: none), `args` its arguments (String nodes). */
extern void fn_create_marking_trigger(Oid relid, const char *name, const char *func, List *args, int16 type,
                                      const char *when);

#endif
