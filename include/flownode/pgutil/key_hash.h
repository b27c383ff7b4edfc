/*
 * key_hash.h: the hash that names a group of a flow in a key mark (core/key_marks.h):
 * its key values hashed as GROUP BY compares them (each type's default hash
 * opclass, each column's collation), NULLs alike, folded in column order.
 */
#ifndef FLOWNODE_KEY_HASH_H
#define FLOWNODE_KEY_HASH_H

#include "postgres.h"

#include "fmgr.h"

/* How to hash one key column: its type's extended hash function and collation. */
typedef struct FnKeyColumn {
	FmgrInfo hash;
	Oid collation;
} FnKeyColumn;

/* Prepares the hashing of a column of `type` under `collation` in `cxt`; false when
 * the type has no hash opclass (its groups cannot be named by a hash). */
extern bool fn_key_column_init(FnKeyColumn *col, Oid type, Oid collation, MemoryContext cxt);

/* The hash of a row's key values (n columns, in the flow's key order). */
extern uint64 fn_key_hash(const FnKeyColumn *cols, const Datum *values, const bool *nulls, int n);

#endif /* FLOWNODE_KEY_HASH_H */
