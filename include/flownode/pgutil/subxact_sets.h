/*
 * subxact_sets.h: what a transaction collects as it writes (a source's marks,
 * LocalMarks; a dimension's changed join values, DimensionValues) is kept in sets
 * that each belong to the subtransaction that made them, so that a ROLLBACK TO
 * SAVEPOINT takes back exactly what was collected since. One routine ends a
 * subtransaction's sets for every kind: dropped with its abort; with its commit,
 * merged into the parent's set of the same key where the kind can merge, else
 * handed to the parent as they are.
 */
#ifndef FLOWNODE_SUBXACT_SETS_H
#define FLOWNODE_SUBXACT_SETS_H

#include "postgres.h"

#include "access/xact.h"
#include "nodes/pg_list.h"

/* The first member of every kind of set. */
typedef struct SubxactSet {
	SubTransactionId subid;
} SubxactSet;

typedef struct SubxactSetKind {
	/* Whether two sets collect for the same thing (NULL: sets never merge). */
	bool (*same_key)(const SubxactSet *a, const SubxactSet *b);
	/* Merges a committed child's set into its parent's of the same key; false when it
	 * cannot (the child then moves up as a set of its own). Runs in a subtransaction
	 * callback: it must not fail. */
	bool (*merge)(SubxactSet *child, SubxactSet *parent);
	void (*free)(SubxactSet *set);
} SubxactSetKind;

/* Ends mySubid's sets in *sets (a List of SubxactSet *): true when a set was freed, so
 * that pointers to sets cached by their users are stale. */
extern bool fn_subxact_sets_end(List **sets, const SubxactSetKind *kind, SubXactEvent event,
                                SubTransactionId mySubid, SubTransactionId parentSubid);

#endif
