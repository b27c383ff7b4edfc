/*
 * time_column.c: a flow's time column read from a table (time_column.h). Every
 * statement here has the same two first arguments, the inclusive (date, epoch) or
 * half-open (timestamp) bounds of the column values whose times lie in the range
 * asked for, written on the column itself: so an index on the column serves it,
 * and a date or an epoch column is compared with values of its own type, never with
 * a timestamp (which a bigint has no operator for, and which would turn a date into
 * a time the query does not make of it).
 */
#include "flownode.h"

#include "query/time_column.h"

#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/lsyscache.h"

#include "pgutil/pg_util.h"

struct FnTimeProbe {
	SPIPlanPtr plan;
	FnTimeInput *input;
};

/* A sink's window column: its values are the window's timestamps. */
static FnTimeInput plain_input = {.kind = FN_INPUT_TIMESTAMP};

static FnTimeInput *input_of(const FnTimeColumn *c) {
	return c->input != NULL ? c->input : &plain_input;
}

char *fn_time_column_from(Oid relid, const char *alias) {
	const char *only = get_rel_relkind(relid) == RELKIND_PARTITIONED_TABLE ? "" : "ONLY ";

	return psprintf("%s%s%s%s", only, fn_qualified_relname(relid), alias ? " " : "", alias ? alias : "");
}

/* "FROM <from> WHERE <column in [$1, $2]>" */
static char *range_clause(const FnTimeColumn *c) {
	return psprintf("FROM %s WHERE %s", c->from, fn_time_input_where(input_of(c), c->column, 1));
}

/* The statement's types: those of the two bounds, then the caller's. */
static Oid *statement_types(const FnTimeColumn *c, int nargs, const Oid *types) {
	Oid *all = palloc(sizeof(Oid) * (2 + nargs));

	all[0] = all[1] = fn_time_input_bound_type(input_of(c), c->window_type);
	for (int i = 0; i < nargs; i++)
		all[2 + i] = types[i];
	return all;
}

static SPIPlanPtr prepare(const char *sql, int nargs, Oid *types) {
	SPIPlanPtr plan = SPI_prepare(sql, nargs, types);

	if (plan == NULL)
		elog(ERROR, "flownode: preparing a read of a table's times failed: %s",
		     SPI_result_code_string(SPI_result));
	return plan;
}

FnTimeProbe *fn_time_probe_prepare(const FnTimeColumn *c, bool last) {
	FnTimeProbe *p = palloc(sizeof(FnTimeProbe));
	const char *value = fn_time_input_select(input_of(c), c->column);

	p->input = input_of(c);
	p->plan = prepare(psprintf("SELECT pg_catalog.%s(%s) %s", last ? "max" : "min", value, range_clause(c)),
	                  2, statement_types(c, 0, NULL));
	return p;
}

bool fn_time_probe(FnTimeProbe *p, FnTimeRange within, int64 *out) {
	Datum args[2];
	bool isnull;
	Datum d;

	if (!fn_time_input_args(p->input, within, &args[0], &args[1]))
		return false;
	if (SPI_execute_plan(p->plan, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "flownode: reading a table's times failed");
	if (SPI_processed == 0)
		return false;
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (isnull)
		return false;
	*out = fn_time_input_time_of(p->input, d);
	return true;
}

void fn_time_probe_free(FnTimeProbe *p) {
	SPI_freeplan(p->plan);
	pfree(p);
}

bool fn_time_column_extent(const FnTimeColumn *c, FnTimeRange within, int64 *first, int64 *last) {
	FnTimeProbe *lo = fn_time_probe_prepare(c, false);
	FnTimeProbe *hi = fn_time_probe_prepare(c, true);
	bool found = fn_time_probe(lo, within, first) && fn_time_probe(hi, within, last);

	fn_time_probe_free(lo);
	fn_time_probe_free(hi);
	return found;
}

void fn_time_column_scan(const FnTimeColumn *c, FnTimeRange within, const char *cond, int nargs,
                         const Oid *types, const Datum *args, FnTimeVisit visit, void *arg) {
	FnTimeInput *in = input_of(c);
	Datum *all = palloc(sizeof(Datum) * (2 + nargs));
	SPIPlanPtr plan;
	Portal portal;

	if (!fn_time_input_args(in, within, &all[0], &all[1]))
		return;
	for (int i = 0; i < nargs; i++)
		all[2 + i] = args[i];
	plan = prepare(psprintf("SELECT %s %s%s%s", fn_time_input_select(in, c->column), range_clause(c),
	                        cond ? " AND " : "", cond ? cond : ""),
	               2 + nargs, statement_types(c, nargs, types));
	portal = SPI_cursor_open(NULL, plan, all, NULL, true);
	for (;;) {
		SPI_cursor_fetch(portal, true, 1000);
		if (SPI_processed == 0)
			break;
		for (uint64 i = 0; i < SPI_processed; i++) {
			bool isnull;
			Datum d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);

			if (!isnull)
				visit(fn_time_input_time_of(in, d), arg);
		}
	}
	SPI_cursor_close(portal);
	SPI_freeplan(plan);
	pfree(all);
}
