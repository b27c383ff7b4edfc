/*
 * source_triggers.h: the marking triggers create_flow puts on a source table, and
 * their removal once no flow needs them.
 */
#ifndef FLOWNODE_SOURCE_TRIGGERS_H
#define FLOWNODE_SOURCE_TRIGGERS_H

#include "postgres.h"

#include "access/attnum.h"

#define FLOWNODE_INSERT_TRIGGER_NAME "flownode_mark_insert"
#define FLOWNODE_UPDATE_TRIGGER_NAME "flownode_mark_update"
#define FLOWNODE_DELETE_TRIGGER_NAME "flownode_mark_delete"
#define FLOWNODE_TRUNCATE_TRIGGER_NAME "flownode_mark_truncate"

/* The triggers marking the rows of one time column (0: window-less flows), and the
 * TRUNCATE trigger; those already there are kept. */
extern void fn_install_source_triggers(Oid source_relid, AttrNumber time_attnum);
/* Makes the table's marking triggers fire in every replication role, except those
 * someone disabled. */
extern void fn_keep_marking_always(Oid source_relid);
/* Whether every marking trigger of the table fires always (and there is one). */
extern bool fn_marking_enabled(Oid source_relid);
/* Removes the triggers of time columns no flow reads, all of them when no flow reads
 * the source. */
extern void fn_remove_triggers_if_unused(Oid source_relid);

#endif
