/*
 * key_hash.c: flownode.key_hash(VARIADIC "any"), the hash of a group's key values
 * that a key mark carries (docs/internals.md §3, *Key marks*), and its C form for
 * the marking path.
 *
 * Two values GROUP BY puts in one group must hash alike, or a refresh that reads
 * the rows of the marked hashes would recompute a group from part of its rows. So
 * each column is hashed by its type's default hash opclass (whose equality is the
 * one GROUP BY uses: numeric 1.0 and 1.00, float -0 and 0, every NaN alike) under
 * the column's own collation (a nondeterministic one hashes by its sort key, as
 * its hash opclass does for GROUP BY), and a NULL contributes a constant (GROUP BY puts the
 * NULLs together). Different groups may share a hash: their refresh recomputes one
 * group more, exactly. IMMUTABLE, so an index on `(flownode.key_hash(k), ts)`
 * serves the refresh of a window's marked groups.
 */
#include "postgres.h"

#include "catalog/pg_collation.h"
#include "fmgr.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/typcache.h"

#include "core/key_marks.h"
#include "pgutil/key_hash.h"

PG_FUNCTION_INFO_V1(flownode_key_hash);

bool fn_key_column_init(FnKeyColumn *col, Oid type, Oid collation, MemoryContext cxt) {
	TypeCacheEntry *tc = lookup_type_cache(type, TYPECACHE_HASH_EXTENDED_PROC);

	if (!OidIsValid(tc->hash_extended_proc))
		return false;
	fmgr_info_cxt(tc->hash_extended_proc, &col->hash, cxt);
	col->collation = collation;
	return true;
}

uint64 fn_key_hash(const FnKeyColumn *cols, const Datum *values, const bool *nulls, int n) {
	uint64 h = FN_KEY_HASH_SEED;

	for (int i = 0; i < n; i++) {
		uint64 c = FN_KEY_HASH_NULL;

		if (!nulls[i])
			c = DatumGetUInt64(FunctionCall2Coll((FmgrInfo *)&cols[i].hash, cols[i].collation, values[i],
			                                     UInt64GetDatum(0)));
		h = fn_key_hash_add(h, c);
	}
	return h;
}

/* The columns of this call, prepared once per query (fn_extra). */
static FnKeyColumn *call_columns(FunctionCallInfo fcinfo) {
	FmgrInfo *flinfo = fcinfo->flinfo;
	List *args;

	if (flinfo->fn_extra != NULL)
		return flinfo->fn_extra;
	if (get_fn_expr_variadic(flinfo))
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("flownode.key_hash does not take a VARIADIC array"),
		                errhint("Pass the key values as separate arguments.")));
	if (flinfo->fn_expr == NULL || !IsA(flinfo->fn_expr, FuncExpr))
		elog(ERROR, "flownode.key_hash called without its expression");
	args = ((FuncExpr *)flinfo->fn_expr)->args;
	flinfo->fn_extra = MemoryContextAllocZero(flinfo->fn_mcxt, sizeof(FnKeyColumn) * Max(1, fcinfo->nargs));
	for (int i = 0; i < fcinfo->nargs; i++) {
		Node *arg = list_nth(args, i);
		Oid type = exprType(arg);
		Oid collation = exprCollation(arg);

		if (!fn_key_column_init(&((FnKeyColumn *)flinfo->fn_extra)[i], type, collation, flinfo->fn_mcxt))
			ereport(ERROR, (errcode(ERRCODE_UNDEFINED_FUNCTION),
			                errmsg("could not identify a hash function for type %s", format_type_be(type))));
	}
	return flinfo->fn_extra;
}

Datum flownode_key_hash(PG_FUNCTION_ARGS) {
	FnKeyColumn *cols = call_columns(fcinfo);
	Datum values[FUNC_MAX_ARGS];
	bool nulls[FUNC_MAX_ARGS];

	for (int i = 0; i < PG_NARGS(); i++) {
		values[i] = PG_GETARG_DATUM(i);
		nulls[i] = PG_ARGISNULL(i);
	}
	PG_RETURN_INT64((int64)fn_key_hash(cols, values, nulls, PG_NARGS()));
}
