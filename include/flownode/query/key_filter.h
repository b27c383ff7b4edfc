/*
 * key_filter.h: a query restricted to the groups of key marks (docs/internals.md §6,
 * *Refreshing key marks*).
 */
#ifndef FLOWNODE_KEY_FILTER_H
#define FLOWNODE_KEY_FILTER_H

#include "postgres.h"

#include "nodes/parsenodes.h"

/* The SQL function a key filter calls, as the refresh statement's text names it. */
#define FN_KEY_HASH_FUNCTION "flownode.key_hash"

/*
 * Keeps the source's rows whose keys (attnums, the source's columns in key order)
 * hash to one of the bigint[] parameter `paramid`:
 *   flownode.key_hash(k1, k2, ...) = ANY ($paramid)
 * added to the source's fenced subquery when fn_inject_time_filter made one (so an
 * index on (flownode.key_hash(keys), time) serves each range), else to the query's
 * WHERE. Every row of a group has the group's hash, so the groups kept are whole.
 */
extern void fn_inject_key_filter(Query *query, int rtindex, List *attnums, int paramid);

#endif
