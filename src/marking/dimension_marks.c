/*
 * dimension_marks.c: a write to a dimension table marks the windows of the fact rows
 * that join the rows it changed (docs/internals.md §3, Dimension tables).
 *
 * - Per row, the WHEN clause of the dimension's triggers (source_triggers.c) hands
 *   mark_dimension_row the join column's old and new value; they are kept per
 *   (dimension, column, subtransaction) in backend memory, at most
 *   MAX_DIMENSION_VALUES of them, beyond which (and after a TRUNCATE) the set stands
 *   for every row. A table any write to which marks every window (joined by no
 *   equality, or under a view or a subquery: query/flow_joins.c) has triggers of
 *   column 0 that collect the value `true` under attnum 0, beside TRUNCATE's set.
 * - At PRE_COMMIT (fn_dimension_marks_resolve, called by commit_marks.c after the
 *   writer registered in flight), for each flow joining the dimension, the windows
 *   of the fact rows whose join column holds one of the values, read in a fresh
 *   snapshot through an index leading with that column; without such an index, or
 *   for every row, every window from the first to the last fact row. Windows frozen
 *   by expire_after are not read. The windows go into a set of the flow's own,
 *   flagged `removes` (a group can vanish: a host moved to another region), and
 *   are recorded and published with the writer's other marks.
 *
 * Why the lookup waits for PRE_COMMIT and a fresh snapshot: a fact row committed
 * after the dimension write's statement but before its commit joins the changed row,
 * and a refresh whose snapshot predates the dimension's commit may already have
 * written that row's window with the old dimension row. Looking up after the writer
 * is registered in flight closes it: a refresh that takes a window waits for every
 * writer in flight before its snapshot, so either it sees the dimension write, or the
 * writer registered after that wait and its lookup sees every fact row the refresh
 * saw (docs/internals.md §5; isolation spec dimension_race).
 */
#include "flownode.h"

#include "marking/dimension_marks.h"

#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "catalog/pg_operator.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "marking/mark_triggers.h"
#include "marking/source_cache.h"
#include "miscadmin.h"
#include "parser/parse_coerce.h"
#include "pgutil/pg_util.h"
#include "pgutil/subxact_sets.h"
#include "query/time_column.h"
#include "registry/flow_dimensions.h"
#include "registry/flow_registry.h"
#include "storage/proc.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(flownode_mark_dimension_row);
PG_FUNCTION_INFO_V1(flownode_mark_dimension);
PG_FUNCTION_INFO_V1(flownode_mark_dimension_truncate);

/* Values kept per (dimension, column) and transaction before the set stands for every
 * row: a lookup of more values would read most of a fact table anyway, and the
 * memory stays bounded. */
#define MAX_DIMENSION_VALUES 10000

/* The changed rows' values of one join column in one (sub)transaction. */
typedef struct DimensionValues {
	SubxactSet set; /* the subtransaction it belongs to (first: pgutil/subxact_sets.h) */
	Oid relid;
	AttrNumber attnum; /* 0: the TRUNCATE set */
	Oid typid;
	int16 typlen;
	bool typbyval;
	bool every_row; /* TRUNCATE, or more than MAX_DIMENSION_VALUES values */
	int count;
	int capacity;
	Datum *values; /* TopTransactionContext */
} DimensionValues;

static List *xact_values = NIL; /* DimensionValues *, TopTransactionContext */

/* The set used last, trusted within one transaction and epoch (a subtransaction's
 * abort frees sets, and bumps the epoch). */
static DimensionValues *last_set = NULL;
static LocalTransactionId last_lxid = InvalidLocalTransactionId;
static uint64 values_epoch = 0, last_epoch = 0;

/* A role found allowed to write a dimension, and which (rows of a statement repeat). */
static Oid writer_relid = InvalidOid, writer_role = InvalidOid;

static DimensionValues *values_for(Oid relid, AttrNumber attnum, Oid typid) {
	SubTransactionId subid = GetCurrentSubTransactionId();
	DimensionValues *v;
	ListCell *lc;
	MemoryContext old;

	if (last_set != NULL && last_lxid == fn_my_lxid() && last_epoch == values_epoch &&
	    last_set->relid == relid && last_set->attnum == attnum && last_set->set.subid == subid &&
	    last_set->typid == typid)
		return last_set;
	foreach (lc, xact_values) {
		v = lfirst(lc);
		if (v->relid == relid && v->attnum == attnum && v->set.subid == subid && v->typid == typid)
			goto found;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	v = palloc0(sizeof(DimensionValues));
	v->relid = relid;
	v->attnum = attnum;
	v->set.subid = subid;
	v->typid = typid;
	if (OidIsValid(typid))
		get_typlenbyval(typid, &v->typlen, &v->typbyval);
	xact_values = lappend(xact_values, v);
	MemoryContextSwitchTo(old);
found:
	last_set = v;
	last_lxid = fn_my_lxid();
	last_epoch = values_epoch;
	return v;
}

static void stand_for_every_row(DimensionValues *v) {
	v->every_row = true;
	if (v->values != NULL)
		pfree(v->values);
	v->values = NULL;
	v->count = v->capacity = 0;
}

/* Keeps a copy of the value (detoasted) in the transaction's memory. */
static void add_value(DimensionValues *v, Datum d) {
	MemoryContext old;

	if (v->every_row)
		return;
	if (v->typlen == -1)
		d = PointerGetDatum(PG_DETOAST_DATUM_PACKED(d));
	/* the rows of one statement often share a value (an UPDATE of one key's rows) */
	if (v->count > 0 && datumIsEqual(v->values[v->count - 1], d, v->typbyval, v->typlen))
		return;
	if (v->count == MAX_DIMENSION_VALUES) {
		stand_for_every_row(v);
		return;
	}
	old = MemoryContextSwitchTo(TopTransactionContext);
	if (v->count == v->capacity) {
		v->capacity = v->capacity == 0 ? 16 : Min(v->capacity * 2, MAX_DIMENSION_VALUES);
		v->values = v->values == NULL ? palloc(sizeof(Datum) * v->capacity)
		                              : repalloc(v->values, sizeof(Datum) * v->capacity);
	}
	v->values[v->count++] = datumCopy(d, v->typbyval, v->typlen);
	MemoryContextSwitchTo(old);
}

/*
 * mark_dimension_row(dimension, column, old value, new value), from the WHEN clause of
 * a dimension's row triggers; always false. Callable by anyone (a WHEN clause runs
 * with the writer's EXECUTE right), so it collects only for a role that may write the
 * table, and nothing on a hot standby.
 */
Datum flownode_mark_dimension_row(PG_FUNCTION_ARGS) {
	Oid relid;
	AttrNumber attnum;
	Oid user = GetUserId();
	DimensionValues *v;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || (PG_ARGISNULL(2) && PG_ARGISNULL(3)))
		PG_RETURN_BOOL(false); /* a NULL joins nothing */
	relid = PG_GETARG_OID(0);
	attnum = PG_GETARG_INT16(1);
	if (relid != writer_relid || user != writer_role) {
		if (RecoveryInProgress() || !fn_may_write_table(relid, user))
			PG_RETURN_BOOL(false);
		writer_relid = relid;
		writer_role = user;
	}
	v = values_for(relid, attnum, get_fn_expr_argtype(fcinfo->flinfo, 2));
	if (!OidIsValid(v->typid))
		stand_for_every_row(v); /* the values' type is unknown: every row */
	if (!PG_ARGISNULL(2))
		add_value(v, PG_GETARG_DATUM(2));
	if (!PG_ARGISNULL(3))
		add_value(v, PG_GETARG_DATUM(3)); /* equal to the old value: skipped */
	PG_RETURN_BOOL(false);
}

/* The row triggers' function: their WHEN clause is always false, so it never runs. */
Datum flownode_mark_dimension(PG_FUNCTION_ARGS) {
	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
		                errmsg("flownode.mark_dimension() must be called as a trigger")));
	return PointerGetDatum(NULL);
}

/* AFTER TRUNCATE of a dimension: every fact row that joined one of its rows. */
Datum flownode_mark_dimension_truncate(PG_FUNCTION_ARGS) {
	TriggerData *td = (TriggerData *)fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo) || !TRIGGER_FIRED_BY_TRUNCATE(td->tg_event))
		ereport(ERROR, (errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
		                errmsg("flownode.mark_dimension_truncate() must be called as a TRUNCATE trigger")));
	stand_for_every_row(values_for(RelationGetRelid(td->tg_relation), 0, InvalidOid));
	return PointerGetDatum(NULL);
}

/* ---- subtransactions, the end of the transaction ---- */

static void values_free(SubxactSet *s) {
	DimensionValues *v = (DimensionValues *)s;

	if (v->values != NULL)
		pfree(v->values);
	pfree(v);
}

/* A committed subtransaction's sets move up as they are: the lookup unites the sets
 * of a column. */
static const SubxactSetKind values_kind = {NULL, NULL, values_free};

void fn_dimension_marks_subxact(SubXactEvent event, SubTransactionId mySubid, SubTransactionId parentSubid) {
	if (fn_subxact_sets_end(&xact_values, &values_kind, event, mySubid, parentSubid))
		values_epoch++;
}

bool fn_dimension_marks_pending(void) {
	return xact_values != NIL;
}

void fn_dimension_marks_forget(void) {
	xact_values = NIL;
	last_set = NULL;
	values_epoch++;
}

/* ---- PRE_COMMIT: the lookups ---- */

/* Every value the transaction collected for the column (NULL: none), and whether
 * they stand for every row. */
static List *values_of(Oid relid, AttrNumber attnum, bool *every_row) {
	List *out = NIL;
	ListCell *lc;

	foreach (lc, xact_values) {
		DimensionValues *v = lfirst(lc);

		if (v->relid != relid || v->attnum != attnum)
			continue;
		*every_row |= v->every_row;
		out = lappend(out, v);
	}
	return out;
}

static bool truncated(Oid relid) {
	bool every_row = false;

	(void)values_of(relid, 0, &every_row);
	return every_row;
}

/* The values as one array of the operator's right-hand type (the column's type is
 * binary-coercible to it: checked by the caller). */
static Datum values_array(List *sets, Oid elemtype) {
	int16 len;
	bool byval;
	char align;
	int n = 0, total = 0;
	Datum *all;
	ListCell *lc;

	foreach (lc, sets)
		total += ((DimensionValues *)lfirst(lc))->count;
	all = palloc(sizeof(Datum) * Max(total, 1));
	foreach (lc, sets) {
		DimensionValues *v = lfirst(lc);

		for (int i = 0; i < v->count; i++)
			all[n++] = v->values[i];
	}
	get_typlenbyvalalign(elemtype, &len, &byval, &align);
	return PointerGetDatum(construct_array(all, n, elemtype, len, byval, align));
}

/* What a lookup through one key needs, when it can be made: the fact column still
 * there with a type the operator takes, the dimension column's type too, and an
 * index leading with the fact column. */
static bool key_usable(const DimensionKey *k, Oid dim_typid, Oid *righttype) {
	HeapTuple tup = SearchSysCache2(ATTNUM, ObjectIdGetDatum(k->source_relid), Int16GetDatum(k->fact_attnum));
	Oid fact_typid = InvalidOid;
	Oid lefttype;

	if (!HeapTupleIsValid(tup))
		return false;
	if (!((Form_pg_attribute)GETSTRUCT(tup))->attisdropped)
		fact_typid = ((Form_pg_attribute)GETSTRUCT(tup))->atttypid;
	ReleaseSysCache(tup);
	if (!OidIsValid(fact_typid) || !OidIsValid(get_opcode(k->opno)))
		return false;
	op_input_types(k->opno, &lefttype, righttype);
	return IsBinaryCoercible(fact_typid, lefttype) && IsBinaryCoercible(dim_typid, *righttype) &&
	       fn_btree_index_leads_with(k->source_relid, k->fact_attnum);
}

/* The flow's time column in the fact table, aliased f as the lookups name it. */
static FnTimeColumn fact_times(const FlowMarker *m) {
	return (FnTimeColumn){
	    fn_time_column_from(m->source_relid, "f"),
	    psprintf("f.%s", quote_identifier(get_attname(m->source_relid, m->time_attnum, false))),
	    m->spec.with_time_zone ? TIMESTAMPTZOID : TIMESTAMPOID,
	    (FnTimeInput *)&m->input /* only its memo changes */};
}

typedef struct JoinedRows {
	LocalMarks *lm;
	const FlowMarker *m;
} JoinedRows;

static void mark_joined_time(int64 ts, void *arg) {
	JoinedRows *j = arg;

	fn_marks_add_time(j->lm, j->m, ts);
}

/*
 * The windows of the fact rows at or after `from` whose join column holds one of the
 * values (`f.col OPERATOR(op) ANY ($3)`, through the index on the join column), read
 * by the time column's cursor.
 */
static void mark_joined_rows(LocalMarks *lm, const FlowMarker *m, const DimensionKey *k, Datum values,
                             Oid righttype, int64 from) {
	FnTimeColumn c = fact_times(m);
	Oid type = get_array_type(righttype);
	HeapTuple optup = SearchSysCache1(OPEROID, ObjectIdGetDatum(k->opno));
	JoinedRows j = {lm, m};
	Form_pg_operator op;
	char *cond;

	if (!HeapTupleIsValid(optup))
		elog(ERROR, "flownode: operator %u vanished", k->opno);
	op = (Form_pg_operator)GETSTRUCT(optup);
	cond = psprintf("f.%s OPERATOR(%s.%s) ANY ($3)",
	                quote_identifier(get_attname(k->source_relid, k->fact_attnum, false)),
	                quote_identifier(get_namespace_name(op->oprnamespace)), NameStr(op->oprname));
	ReleaseSysCache(optup);
	fn_time_column_scan(&c, (FnTimeRange){from, DT_NOEND}, cond, 1, &type, &values, mark_joined_time, &j);
}

/* Every window from the first to the last fact row at or after `from`: a TRUNCATE, too
 * many values, or no index to look them up through. Two probes through the time
 * index (one read of the table without it). */
static void mark_every_window(LocalMarks *lm, const FlowMarker *m, int64 from) {
	FnTimeColumn c = fact_times(m);
	int64 lo, hi;

	if (fn_time_column_extent(&c, (FnTimeRange){from, DT_NOEND}, &lo, &hi))
		fn_marks_add_range(lm, (FnTimeRange){fn_flow_window_at(m, lo).start, fn_flow_window_at(m, hi).end});
}

/* The type of the values collected for the column (InvalidOid if none). */
static Oid values_type(List *sets) {
	return sets == NIL ? InvalidOid : ((DimensionValues *)linitial(sets))->typid;
}

/*
 * The flow's windows for the writes to one dimension it joins (keys: the flow's keys
 * on that dimension): through the first key whose values were collected and whose
 * fact column leads an index; every window when the dimension was truncated, when a
 * key's values stand for every row, when no key can be looked up, or when the flow
 * marks every window on any write to it (a key of column 0).
 */
static void mark_flow(const FlowMarker *m, List *keys, TimestampTz now) {
	const DimensionKey *first = linitial(keys);
	int64 line = fn_expiry_start(m->expire_after, m->spec.with_time_zone, m->timezone, m->window, now);
	int64 from = line != 0 ? line : FN_TS_MIN;
	bool any_values = false;
	bool every_write = false; /* a key of attnum 0: no lookup, every window */
	LocalMarks *lm;
	ListCell *lc;

	foreach (lc, keys) {
		bool every_row = false;

		any_values |=
		    values_of(first->dimension, ((DimensionKey *)lfirst(lc))->dim_attnum, &every_row) != NIL;
		every_write |= ((DimensionKey *)lfirst(lc))->dim_attnum == 0;
	}
	if (!any_values && !truncated(first->dimension))
		return; /* no row written since the flow's triggers were there */
	lm = fn_marks_for_flow(m);
	lm->removes = true; /* a group may vanish: a host moved to another region */
	if (m->window == NULL) {
		fn_marks_add_time(lm, m, 0);
		return;
	}
	if (!truncated(first->dimension) && !every_write)
		foreach (lc, keys) {
			const DimensionKey *k = lfirst(lc);
			bool every_row = false;
			List *sets = values_of(k->dimension, k->dim_attnum, &every_row);
			Oid righttype;

			if (sets == NIL || every_row || !key_usable(k, values_type(sets), &righttype))
				continue;
			mark_joined_rows(lm, m, k, values_array(sets, righttype), righttype, from);
			return;
		}
	mark_every_window(lm, m, from);
}

void fn_dimension_marks_resolve(void) {
	TimestampTz now = GetCurrentTimestamp();
	List *relids = NIL;
	ListCell *lc;
	SpiAs scope;

	if (xact_values == NIL)
		return;
	foreach (lc, xact_values)
		relids = list_append_unique_oid(relids, ((DimensionValues *)lfirst(lc))->relid);
	/* after the caller registered in flight: every fact row a refresh that does not
	 * wait for this writer may see is in it */
	PushActiveSnapshot(GetLatestSnapshot());
	foreach (lc, relids) {
		List *keys = fn_load_dimension_keys(lfirst_oid(lc));
		ListCell *lc2;

		while (keys != NIL) {
			/* the keys of one flow (they come ordered by flow) */
			DimensionKey *k = linitial(keys);
			List *mine = list_make1(k);
			SourceEntry *e;
			FlowMarker *m;

			for_each_from(lc2, keys, 1) {
				if (((DimensionKey *)lfirst(lc2))->flow_id == k->flow_id)
					mine = lappend(mine, lfirst(lc2));
			}
			keys = list_difference_ptr(keys, mine);
			e = fn_source_entry(k->source_relid);
			m = fn_find_flow(e, k->flow_id);
			if (m == NULL)
				continue;
			/* as the catalog's owner, so row-level security hides no fact row */
			fn_spi_begin_as(&scope, fn_catalog_owner(), SECURITY_RESTRICTED_OPERATION);
			mark_flow(m, mine, now);
			fn_spi_end(&scope);
		}
	}
	PopActiveSnapshot();
}
