/*
 * sink_table.c: creates a flow's sink or checks that an existing one fits.
 *
 * A created sink has the query's output columns, named and typed as the query
 * produces them, and a key on the group-by output columns with the window column
 * first: a PRIMARY KEY when every key is known NOT NULL, otherwise the window column
 * is NOT NULL and the key is UNIQUE NULLS NOT DISTINCT (a NULL host is a group too).
 * A flow without aggregation is keyed by its source's primary key; a flow of
 * aggregates without GROUP BY (one row) has no key.
 */
#include "flownode.h"

#include "registry/sink_table.h"

#include "pgutil/pg_util.h"
#include "query/hidden_keys.h"

#include "catalog/partition.h"

#include "access/genam.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/index.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "commands/defrem.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "optimizer/optimizer.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/varlena.h"
#include "utils/ruleutils.h"

static const char *out_name(FlowQuery *fq, int pos) {
	return (const char *)list_nth(fq->out_names, pos);
}

static bool name_in(List *names, const char *name) {
	ListCell *lc;

	foreach (lc, names)
		if (strcmp((const char *)lfirst(lc), name) == 0)
			return true;
	return false;
}

/* The problem with a unique index on exactly the group keys as the refresh's ON
 * CONFLICT arbiter, or NULL when it serves. ON CONFLICT never matches a NULL key
 * under NULLS DISTINCT, so each refresh of a group with a NULL key would insert it
 * again: the index must treat NULLs as equal, or the sink must refuse NULL in every
 * key the query may leave NULL (a NULL group then fails the refresh loudly). */
static const char *arbiter_null_problem(Form_pg_index idx, Relation rel, FlowQuery *fq) {
	ListCell *lc;
	int k = 0;

	if (idx->indnullsnotdistinct)
		return NULL;
	foreach (lc, fq->key_positions) {
		const char *name = out_name(fq, lfirst_int(lc));
		AttrNumber att = get_attnum(RelationGetRelid(rel), name);

		if (!list_nth_int(fq->key_notnull, k++) && !TupleDescAttr(RelationGetDescr(rel), att - 1)->attnotnull)
			return name;
	}
	return NULL;
}

/* The equality operator the query tells keys at output column `pos` apart with. */
static Oid group_eqop(FlowQuery *fq, int pos) {
	ListCell *kc, *ec;

	forboth(kc, fq->key_positions, ec, fq->key_eqops) {
		if (lfirst_int(kc) == pos)
			return lfirst_oid(ec);
	}
	return InvalidOid;
}

static bool same_equality_collation(Oid a, Oid b) {
	if (a == b)
		return true;
	/* two deterministic collations both call strings equal only when their bytes are */
	return OidIsValid(a) && OidIsValid(b) && get_collation_isdeterministic(a) &&
	       get_collation_isdeterministic(b);
}

/* What an arbiter index that compares a key otherwise than the query does breaks. */
#define ARBITER_DETAIL                                                                                       \
	"ON CONFLICT would take rows of different groups for one, or one group's rows for different ones."
#define ARBITER_HINT                                                                                         \
	"Key the sink on the columns with their own collation and default operator class, or let create_flow "   \
	"create the sink."

/* ERROR when an arbiter index compares a key otherwise than the query groups it. ON
 * CONFLICT takes two rows for one group when any arbiter calls them equal: an index
 * with a coarser equality (a case-insensitive collation) would merge two groups into
 * one sink row, a finer one would keep two rows for one group. */
static void check_arbiter_equality(HeapTuple itup, Oid relid, FlowQuery *fq) {
	Form_pg_index idx = (Form_pg_index)GETSTRUCT(itup);
	bool isnull;
	oidvector *classes =
	    (oidvector *)DatumGetPointer(SysCacheGetAttr(INDEXRELID, itup, Anum_pg_index_indclass, &isnull));
	oidvector *collations =
	    (oidvector *)DatumGetPointer(SysCacheGetAttr(INDEXRELID, itup, Anum_pg_index_indcollation, &isnull));

	for (int k = 0; k < idx->indnkeyatts; k++) {
		const char *name = get_attname(relid, idx->indkey.values[k], false);
		int pos = 0;
		Oid want, eqop;
		ListCell *lc;

		foreach (lc, fq->out_names) {
			if (strcmp((const char *)lfirst(lc), name) == 0)
				break;
			pos++;
		}
		want = list_nth_oid(fq->out_collations, pos);
		if (!same_equality_collation(collations->values[k], want))
			ereport(
			    ERROR,
			    (errcode(ERRCODE_INVALID_TABLE_DEFINITION),
			     errmsg("sink \"%s\" does not match the flow query: its unique index \"%s\" compares \"%s\" "
			            "with collation %s, and the query groups it with collation %s",
			            get_rel_name(relid), get_rel_name(idx->indexrelid), name,
			            generate_collation_name(collations->values[k]), generate_collation_name(want)),
			     errdetail(ARBITER_DETAIL), errhint(ARBITER_HINT)));
		eqop = group_eqop(fq, pos);
		if (!OidIsValid(eqop))
			ereport(
			    ERROR,
			    (errcode(ERRCODE_INVALID_TABLE_DEFINITION),
			     errmsg("sink \"%s\" does not match the flow query: its unique index \"%s\" compares \"%s\" "
			            "with an operator class whose equality is not the query's grouping",
			            get_rel_name(relid), get_rel_name(idx->indexrelid), name),
			     errdetail(ARBITER_DETAIL), errhint(ARBITER_HINT)));
		if (get_op_opfamily_strategy(eqop, get_opclass_family(classes->values[k])) != BTEqualStrategyNumber)
			ereport(
			    ERROR,
			    (errcode(ERRCODE_INVALID_TABLE_DEFINITION),
			     errmsg("sink \"%s\" does not match the flow query: its unique index \"%s\" compares \"%s\" "
			            "with an operator class whose equality is not the query's %s",
			            get_rel_name(relid), get_rel_name(idx->indexrelid), name, format_operator(eqop)),
			     errdetail(ARBITER_DETAIL), errhint(ARBITER_HINT)));
	}
}

/* Whether the index is unique, immediate, valid, without predicate or expressions,
 * and on exactly the group keys (in any order): what ON CONFLICT (keys) infers. */
static bool is_key_index(HeapTuple itup, Oid relid, FlowQuery *fq) {
	Form_pg_index idx = (Form_pg_index)GETSTRUCT(itup);
	bool match = idx->indisunique && idx->indimmediate && idx->indisvalid &&
	             heap_attisnull(itup, Anum_pg_index_indpred, NULL) &&
	             heap_attisnull(itup, Anum_pg_index_indexprs, NULL) &&
	             idx->indnkeyatts == list_length(fq->key_positions);

	for (int k = 0; match && k < idx->indnkeyatts; k++) {
		const char *name = get_attname(relid, idx->indkey.values[k], false);
		bool found = false;
		ListCell *kc;

		foreach (kc, fq->key_positions)
			found |= (strcmp(name, out_name(fq, lfirst_int(kc))) == 0);
		match = found;
	}
	return match;
}

/*
 * Checks that an existing table can be the flow's sink, as the current user (its
 * owner): a plain table, SELECT/INSERT/UPDATE/DELETE on it, every output column
 * present with the query's type, no other NOT NULL column without a default, and
 * ON CONFLICT arbiters on exactly the group keys that compare them as the query
 * groups them, one of which finds groups with NULL keys too. ERROR with the first
 * problem found.
 */
/* The creator's rights on an existing sink: SELECT, INSERT, UPDATE and DELETE. */
static void check_sink_privileges(Oid relid, const char *relname) {
	AclResult acl;

	static const struct {
		AclMode mode;
		const char *name;
	} needed[] = {
	    {ACL_SELECT, "SELECT"}, {ACL_INSERT, "INSERT"}, {ACL_UPDATE, "UPDATE"}, {ACL_DELETE, "DELETE"}};

	for (size_t i = 0; i < lengthof(needed); i++) {
		acl = pg_class_aclcheck(relid, GetUserId(), needed[i].mode);
		if (acl != ACLCHECK_OK)
			ereport(
			    ERROR,
			    (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			     errmsg("permission denied for sink table \"%s\": %s is missing", relname, needed[i].name),
			     errdetail("A flow's owner needs SELECT, INSERT, UPDATE and DELETE on an existing sink.")));
	}
}

/* A declared sink without the hidden key column at output `pos`: which column to add. */
pg_noreturn static void missing_hidden_column(Relation rel, FlowQuery *fq, int pos);
static void missing_hidden_column(Relation rel, FlowQuery *fq, int pos) {
	const char *column = fn_hidden_source_column(fq, pos);
	char *qualified = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
	                                             RelationGetRelationName(rel));
	char *type =
	    format_type_with_typemod(list_nth_oid(fq->out_types, pos), list_nth_int(fq->out_typmods, pos));

	ereport(
	    ERROR,
	    (errcode(ERRCODE_DATATYPE_MISMATCH),
	     errmsg("sink \"%s\" does not match the flow query: hidden key column \"%s\" is missing",
	            RelationGetRelationName(rel), out_name(fq, pos)),
	     column != NULL ? errdetail("The query does not output column \"%s\" of its source's primary key, "
	                                "so the sink keeps it in a column of that name.",
	                                column)
	                    : errdetail("The query groups by key %d without outputting it, so the sink keeps "
	                                "it in a column of that name.",
	                                fn_hidden_key_number(fq, pos)),
	     errhint("Add it with ALTER TABLE %s ADD COLUMN %s %s, and make it part of the sink's unique key.",
	             qualified, quote_identifier(out_name(fq, pos)), type)));
}

/* Every output of the query a column of its type; every other column may be left out. */
static void check_sink_columns(Relation rel, FlowQuery *fq) {
	Oid relid = RelationGetRelid(rel);
	TupleDesc desc = RelationGetDescr(rel);
	const char *relname = RelationGetRelationName(rel);
	int ncols = list_length(fq->out_names);

	for (int i = 0; i < ncols; i++) {
		AttrNumber att = get_attnum(relid, out_name(fq, i));
		Oid want = list_nth_oid(fq->out_types, i);

		if (att == InvalidAttrNumber && fn_output_is_hidden(fq, i))
			missing_hidden_column(rel, fq, i);
		if (att == InvalidAttrNumber)
			ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
			                errmsg("sink \"%s\" does not match the flow query: column \"%s\" is missing",
			                       relname, out_name(fq, i))));
		if (TupleDescAttr(desc, att - 1)->atttypid != want)
			ereport(ERROR,
			        (errcode(ERRCODE_DATATYPE_MISMATCH),
			         errmsg("sink \"%s\" does not match the flow query: column \"%s\" has type %s, the "
			                "query produces %s",
			                relname, out_name(fq, i), format_type_be(TupleDescAttr(desc, att - 1)->atttypid),
			                format_type_be(want))));
	}
	for (int a = 0; a < desc->natts; a++) {
		Form_pg_attribute attr = TupleDescAttr(desc, a);

		if (attr->attisdropped)
			continue;
		if (!name_in(fq->out_names, NameStr(attr->attname)) && attr->attnotnull && !attr->atthasdef)
			ereport(ERROR,
			        (errcode(ERRCODE_DATATYPE_MISMATCH),
			         errmsg("sink \"%s\" does not match the flow query: column \"%s\" is NOT NULL without "
			                "a default and the query does not produce it",
			                relname, NameStr(attr->attname))));
	}
}

/* The unique index ON CONFLICT arbitrates with: on exactly the keys, comparing them as
 * the query groups them, and one that finds NULL keys too where a key can be NULL. */
static void check_sink_key(Relation rel, FlowQuery *fq) {
	Oid relid = RelationGetRelid(rel);
	const char *relname = RelationGetRelationName(rel);
	List *indexes;
	ListCell *lc;
	bool key_found = false;
	const char *null_key = NULL;
	StringInfoData keys;

	/* an arbiter for ON CONFLICT: ON CONFLICT (keys) uses every unique index on
	 * exactly the keys, so each must compare keys as the query groups them, and one
	 * that also finds NULL keys is enough */
	initStringInfo(&keys);
	foreach (lc, fq->key_positions)
		appendStringInfo(&keys, "%s%s", keys.len ? ", " : "", quote_identifier(out_name(fq, lfirst_int(lc))));
	indexes = RelationGetIndexList(rel);
	foreach (lc, indexes) {
		HeapTuple itup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(lfirst_oid(lc)));

		if (!HeapTupleIsValid(itup))
			continue;
		if (is_key_index(itup, relid, fq)) {
			const char *problem;

			check_arbiter_equality(itup, relid, fq);
			problem = arbiter_null_problem((Form_pg_index)GETSTRUCT(itup), rel, fq);

			if (problem == NULL)
				key_found = true;
			else if (null_key == NULL)
				null_key = problem;
		}
		ReleaseSysCache(itup);
	}
	if (!key_found && null_key != NULL)
		ereport(ERROR,
		        (errcode(ERRCODE_INVALID_TABLE_DEFINITION),
		         errmsg("sink \"%s\" does not match the flow query: its unique key (%s) treats NULLs as "
		                "distinct, and group key \"%s\" can be NULL",
		                relname, keys.data, null_key),
		         errdetail("ON CONFLICT never matches a NULL key, so every refresh of a group whose \"%s\" "
		                   "is NULL would add another row for it.",
		                   null_key),
		         errhint("Add a key that treats NULLs as equal with ALTER TABLE %s ADD UNIQUE NULLS NOT "
		                 "DISTINCT (%s), or let create_flow create the sink.",
		                 quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)), relname),
		                 keys.data)));
	if (!key_found && fq->shape == FLOW_SHAPE_COPY)
		ereport(ERROR,
		        (errcode(ERRCODE_INVALID_TABLE_DEFINITION),
		         errmsg("sink \"%s\" does not match the flow query: it has no unique key on exactly the "
		                "columns of the source's primary key (%s)",
		                relname, keys.data),
		         errhint("Add one with ALTER TABLE ... ADD PRIMARY KEY (%s), or let create_flow create the "
		                 "sink.",
		                 keys.data)));
	if (!key_found)
		ereport(ERROR,
		        (errcode(ERRCODE_INVALID_TABLE_DEFINITION),
		         errmsg("sink \"%s\" does not match the flow query: it has no unique key on exactly the "
		                "group keys (%s)",
		                relname, keys.data),
		         errhint("Add one with ALTER TABLE ... ADD PRIMARY KEY (%s), or let create_flow create the "
		                 "sink.",
		                 keys.data)));
}

void fn_check_sink(Oid relid, FlowQuery *fq) {
	Relation rel = table_open(relid, AccessShareLock);

	if (rel->rd_rel->relkind != RELKIND_RELATION)
		ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE),
		                errmsg("sink \"%s\" is not a plain table", RelationGetRelationName(rel))));
	check_sink_privileges(relid, RelationGetRelationName(rel));
	check_sink_columns(rel, fq);
	/* a flow of one row (aggregates without GROUP BY) has no key: its refresh
	 * compares the row itself */
	if (fq->key_positions != NIL)
		check_sink_key(rel, fq);
	table_close(rel, NoLock);
}

/*
 * A group key's type always has an equality (GROUP BY needs one), but it may be a
 * hash equality only (xid, cid, aclitem): the sink's unique key needs a btree one.
 * Said here, rather than by CREATE TABLE's hint about operator classes.
 */
static void check_key_types(const char *sink, FlowQuery *fq) {
	ListCell *lc;

	foreach (lc, fq->key_positions) {
		int pos = lfirst_int(lc);
		Oid type = list_nth_oid(fq->out_types, pos);

		if (!OidIsValid(GetDefaultOpClass(type, BTREE_AM_OID)))
			ereport(ERROR,
			        (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			         errmsg("cannot create sink \"%s\": group key \"%s\" has type %s, which has no default "
			                "btree operator class",
			                sink, out_name(fq, pos), format_type_be(type)),
			         errdetail("The sink's unique key on the group keys needs one."),
			         errhint("Group by a value of another type, for example cast to text or bigint.")));
	}
}

/* Each hidden key column says what it holds (\d+ shows it; pg_dump keeps it). */
static void comment_hidden_columns(const char *qualified, FlowQuery *fq) {
	for (int pos = fq->nvisible; pos < list_length(fq->out_names); pos++) {
		const char *column = fn_hidden_source_column(fq, pos);
		char *text = column != NULL
		                 ? psprintf("flownode hidden key: column %s of the source's primary key, "
		                            "which the flow query does not output",
		                            quote_identifier(column))
		                 : psprintf("flownode hidden key: GROUP BY key %d of the flow query, which "
		                            "the query does not output",
		                            fn_hidden_key_number(fq, pos));

		if (SPI_execute(psprintf("COMMENT ON COLUMN %s.%s IS %s", qualified,
		                         quote_identifier(out_name(fq, pos)), quote_literal_cstr(text)),
		                false, 0) != SPI_OK_UTILITY)
			elog(ERROR, "flownode: commenting a hidden key column of the sink failed");
	}
}

static Oid create_sink(RangeVar *rv, FlowQuery *fq) {
	Oid nspid = RangeVarGetCreationNamespace(rv);
	char *qualified = quote_qualified_identifier(get_namespace_name(nspid), rv->relname);
	int ncols = list_length(fq->out_names);
	bool all_notnull = true;
	StringInfoData sql;
	ListCell *lc;
	int i;
	Oid relid;

	foreach (lc, fq->key_notnull)
		all_notnull &= (lfirst_int(lc) != 0);
	check_key_types(rv->relname, fq);

	initStringInfo(&sql);
	appendStringInfo(&sql, "CREATE TABLE %s (", qualified);
	for (i = 0; i < ncols; i++) {
		Oid type = list_nth_oid(fq->out_types, i);
		Oid coll = list_nth_oid(fq->out_collations, i);
		int key_index = -1;
		int k = 0;
		ListCell *kc;

		foreach (kc, fq->key_positions) {
			if (lfirst_int(kc) == i)
				key_index = k;
			k++;
		}

		appendStringInfo(&sql, "%s%s %s", i ? ", " : "", quote_identifier(out_name(fq, i)),
		                 format_type_with_typemod(type, list_nth_int(fq->out_typmods, i)));
		if (OidIsValid(coll) && coll != get_typcollation(type))
			appendStringInfo(&sql, " COLLATE %s", generate_collation_name(coll));
		if (key_index >= 0 && list_nth_int(fq->key_notnull, key_index))
			appendStringInfoString(&sql, " NOT NULL");
	}
	if (fq->key_positions != NIL) { /* a flow of one row has no key */
		appendStringInfoString(&sql, all_notnull ? ", PRIMARY KEY (" : ", UNIQUE NULLS NOT DISTINCT (");
		i = 0;
		foreach (lc, fq->key_positions)
			appendStringInfo(&sql, "%s%s", i++ ? ", " : "", quote_identifier(out_name(fq, lfirst_int(lc))));
		appendStringInfoChar(&sql, ')');
	}
	appendStringInfoChar(&sql, ')');

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "flownode: SPI_connect failed");
	if (SPI_execute(sql.data, false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "flownode: creating the sink failed");
	comment_hidden_columns(qualified, fq);
	SPI_finish();
	CommandCounterIncrement();
	relid = get_relname_relid(rv->relname, nspid);
	if (!OidIsValid(relid))
		elog(ERROR, "flownode: sink \"%s\" vanished after creation", qualified);
	return relid;
}

/* Returns the sink's OID, creating it when absent. */
Oid fn_prepare_sink(const char *sink_name, FlowQuery *fq, Oid source_relid, bool *created) {
	RangeVar *rv = makeRangeVarFromNameList(fn_string_to_qualified_name_list(sink_name));
	Oid relid = RangeVarGetRelid(rv, NoLock, true);

	if (rv->relpersistence == RELPERSISTENCE_TEMP ||
	    (rv->schemaname && strcmp(rv->schemaname, "pg_temp") == 0))
		ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		                errmsg("sink \"%s\" must not be a temporary table", sink_name)));
	if (OidIsValid(relid)) {
		if (relid == source_relid)
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			                errmsg("sink table \"%s\" is the flow's source table", sink_name),
			                errhint("A flow writes its results into a different table.")));
		if (list_member_oid(get_partition_ancestors(relid), source_relid))
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			                errmsg("sink table \"%s\" is a partition of the flow's source table", sink_name),
			                errhint("A flow writes its results into a table outside its source.")));
		if (get_rel_persistence(relid) == RELPERSISTENCE_TEMP)
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			                errmsg("sink \"%s\" must not be a temporary table", sink_name)));
		fn_check_sink(relid, fq);
		*created = false;
		return relid;
	}
	*created = true;
	return create_sink(rv, fq);
}

/* ---- hidden key columns following a retyped source column ---- */

typedef struct HiddenRetype {
	const char *flow_name;
	const char *column;
	const char *sink;
} HiddenRetype;

static void hidden_retype_context(void *arg) {
	HiddenRetype *h = arg;

	errcontext("changing the type of hidden key column \"%s\" of sink \"%s\" of flow \"%s\"", h->column,
	           h->sink, h->flow_name);
}

/* ALTER TABLE sink ALTER COLUMN hidden TYPE <the query's> USING a cast of the value it
 * holds: as the sink's owner, who alone may alter it (the retyped table's owner may
 * be another role), in a restricted security context. */
static void retype_hidden_column(Oid sink_relid, FlowQuery *fq, int pos, const char *flow_name) {
	Oid type = list_nth_oid(fq->out_types, pos);
	Oid coll = list_nth_oid(fq->out_collations, pos);
	const char *column = quote_identifier(out_name(fq, pos));
	char *qualified = quote_qualified_identifier(get_namespace_name(get_rel_namespace(sink_relid)),
	                                             get_rel_name(sink_relid));
	HiddenRetype h = {flow_name, out_name(fq, pos), get_rel_name(sink_relid)};
	ErrorContextCallback context = {
	    .previous = error_context_stack, .callback = hidden_retype_context, .arg = &h};
	char *typename = format_type_with_typemod(type, list_nth_int(fq->out_typmods, pos));
	StringInfoData sql;
	HeapTuple tup = SearchSysCache1(RELOID, ObjectIdGetDatum(sink_relid));
	Oid owner;
	SpiAs as;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "flownode: cache lookup failed for relation %u", sink_relid);
	owner = ((Form_pg_class)GETSTRUCT(tup))->relowner;
	ReleaseSysCache(tup);
	initStringInfo(&sql);
	appendStringInfo(&sql, "ALTER TABLE %s ALTER COLUMN %s TYPE %s", qualified, column, typename);
	if (OidIsValid(coll) && coll != get_typcollation(type))
		appendStringInfo(&sql, " COLLATE %s", generate_collation_name(coll));
	appendStringInfo(&sql, " USING %s::%s", column, typename);
	error_context_stack = &context;
	fn_spi_begin_as(&as, owner, SECURITY_RESTRICTED_OPERATION);
	if (SPI_execute(sql.data, false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "flownode: changing the type of a hidden key column of the sink failed");
	fn_spi_end(&as);
	error_context_stack = context.previous;
}

int fn_sink_follow_hidden_types(Oid sink_relid, FlowQuery *fq, const char *flow_name) {
	int n = 0;

	for (int pos = fq->nvisible; pos < list_length(fq->out_names); pos++) {
		AttrNumber att = get_attnum(sink_relid, out_name(fq, pos));
		Oid type;
		int32 typmod;
		Oid coll;

		if (att == InvalidAttrNumber)
			continue; /* a declared sink without it: the refresh says what to add */
		get_atttypetypmodcoll(sink_relid, att, &type, &typmod, &coll);
		if (type == list_nth_oid(fq->out_types, pos) && typmod == list_nth_int(fq->out_typmods, pos) &&
		    coll == list_nth_oid(fq->out_collations, pos))
			continue;
		retype_hidden_column(sink_relid, fq, pos, flow_name);
		n++;
	}
	if (n > 0)
		CommandCounterIncrement();
	return n;
}
