/*
 * ts_calls.c: TimescaleDB's functions on a continuous aggregate, as flownode.execute
 * runs them (positional or named arguments, as TimescaleDB declares them; each
 * argument an expression PostgreSQL evaluates once):
 *
 *   CALL refresh_continuous_aggregate(cagg, window_start, window_end [, force])
 *       refresh_flow over [window_start, window_end) (NULL: open); a flow without
 *       time window is recomputed whole
 *   SELECT add_continuous_aggregate_policy(cagg, start_offset, end_offset,
 *                                          schedule_interval [, ...])
 *       alter_flow: schedule_interval is eval_interval, start_offset expire_after
 *       (older windows are frozen: the policy's window has no start otherwise);
 *       end_offset is not needed (a flow keeps the newest windows current too: a
 *       NOTICE says so)
 *   SELECT remove_continuous_aggregate_policy(cagg [, if_not_exists, if_exists])
 *       alter_flow: both back to what CREATE MATERIALIZED VIEW gave
 *
 * refresh_flow and alter_flow run through SPI, as their SQL functions, with their
 * own checks (ownership, the intervals' bounds).
 */
#include "flownode.h"

#include "timescale/ts_calls.h"

#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "mb/pg_wchar.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parse_coerce.h"
#include "parser/parse_collate.h"
#include "parser/parse_expr.h"
#include "parser/parse_node.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#define MAX_PARAMS 11

/* A function as TimescaleDB declares it: its parameters' names in order. */
typedef struct TsFunction {
	const char *name;
	const char *const *params;
	int nparams;
} TsFunction;

static const char *const refresh_params[] = {"continuous_aggregate", "window_start", "window_end", "force",
                                             "options"};
static const char *const add_params[] = {"continuous_aggregate",
                                         "start_offset",
                                         "end_offset",
                                         "schedule_interval",
                                         "if_not_exists",
                                         "initial_start",
                                         "timezone",
                                         "include_tiered_data",
                                         "buckets_per_batch",
                                         "max_batches_per_execution",
                                         "refresh_newest_first"};
static const char *const remove_params[] = {"continuous_aggregate", "if_not_exists", "if_exists"};

static const TsFunction refresh_function = {"refresh_continuous_aggregate", refresh_params,
                                            lengthof(refresh_params)};
static const TsFunction add_function = {"add_continuous_aggregate_policy", add_params, lengthof(add_params)};
static const TsFunction remove_function = {"remove_continuous_aggregate_policy", remove_params,
                                           lengthof(remove_params)};

/* A call being run: the statement (errors point into it) and its bound arguments. */
typedef struct TsCall {
	const char *statement;
	const TsFunction *function;
	FuncCall *fc;
	Node *args[MAX_PARAMS]; /* NULL: not given */
} TsCall;

/* ---- arguments ---- */

static void bind_arguments(TsCall *c) {
	ParseState *pstate = make_parsestate(NULL);
	int positional = 0;
	ListCell *lc;

	pstate->p_sourcetext = c->statement;
	foreach (lc, c->fc->args) {
		Node *arg = lfirst(lc);
		int i = positional;

		if (IsA(arg, NamedArgExpr)) {
			NamedArgExpr *na = (NamedArgExpr *)arg;

			for (i = 0; i < c->function->nparams; i++)
				if (strcmp(na->name, c->function->params[i]) == 0)
					break;
			if (i == c->function->nparams)
				ereport(ERROR,
				        (errcode(ERRCODE_UNDEFINED_PARAMETER),
				         errmsg("function %s has no parameter \"%s\"", c->function->name, na->name),
				         errhint("Its parameters are those of TimescaleDB 2: %s ... %s.",
				                 c->function->params[0], c->function->params[c->function->nparams - 1]),
				         parser_errposition(pstate, na->location)));
			arg = (Node *)na->arg;
		} else if (positional++ >= c->function->nparams)
			ereport(ERROR, (errcode(ERRCODE_UNDEFINED_FUNCTION),
			                errmsg("function %s takes at most %d arguments", c->function->name,
			                       c->function->nparams),
			                parser_errposition(pstate, exprLocation(arg))));
		if (c->args[i] != NULL)
			ereport(ERROR, (errcode(ERRCODE_SYNTAX_ERROR),
			                errmsg("argument \"%s\" of function %s is given twice", c->function->params[i],
			                       c->function->name),
			                parser_errposition(pstate, exprLocation(arg))));
		c->args[i] = arg;
	}
	if (c->args[0] == NULL)
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_FUNCTION),
		                errmsg("function %s needs the continuous aggregate as its first argument",
		                       c->function->name),
		                parser_errposition(pstate, c->fc->location)));
	free_parsestate(pstate);
}

static int param_index(const TsCall *c, const char *name) {
	for (int i = 0; i < c->function->nparams; i++)
		if (strcmp(c->function->params[i], name) == 0)
			return i;
	elog(ERROR, "flownode: %s has no parameter %s", c->function->name, name);
	pg_unreachable();
}

/* The argument evaluated as `type` (InvalidOid: its own type, text for a literal);
 * *isnull when it is NULL or not given. */
static Datum argument(const TsCall *c, const char *name, Oid type, bool *isnull) {
	Node *raw = c->args[param_index(c, name)];
	ParseState *pstate;
	Node *expr, *coerced;
	EState *estate;
	Datum d;
	int16 typlen;
	bool byval;

	*isnull = true;
	if (raw == NULL)
		return (Datum)0;
	pstate = make_parsestate(NULL);
	pstate->p_sourcetext = c->statement;
	expr = transformExpr(pstate, copyObject(raw), EXPR_KIND_CALL_ARGUMENT);
	if (!OidIsValid(type))
		type = exprType(expr) == UNKNOWNOID ? TEXTOID : exprType(expr);
	coerced = coerce_to_target_type(pstate, expr, exprType(expr), type, -1, COERCION_ASSIGNMENT,
	                                COERCE_IMPLICIT_CAST, -1);
	if (coerced == NULL)
		ereport(ERROR, (errcode(ERRCODE_DATATYPE_MISMATCH),
		                errmsg("argument \"%s\" of %s must be of type %s, not %s", name, c->function->name,
		                       format_type_be(type), format_type_be(exprType(expr))),
		                errhint("A continuous aggregate over time takes times and intervals here."),
		                parser_errposition(pstate, exprLocation(raw))));
	assign_expr_collations(pstate, coerced);
	free_parsestate(pstate);
	estate = CreateExecutorState();
	d = ExecEvalExprSwitchContext(ExecPrepareExpr((Expr *)coerced, estate), GetPerTupleExprContext(estate),
	                              isnull);
	get_typlenbyval(type, &typlen, &byval);
	if (!*isnull)
		d = datumCopy(d, byval, typlen);
	FreeExecutorState(estate);
	return d;
}

/* An error's position: at the argument `name` (it was given). */
static int arg_position(const TsCall *c, const char *name) {
	Node *raw = c->args[param_index(c, name)];

	return errposition(pg_mbstrlen_with_len(c->statement, exprLocation(raw)) + 1);
}

/* An argument flownode has no use for: refused by name unless NULL or not given. */
static void refuse_argument(const TsCall *c, const char *name, const char *detail, const char *hint) {
	bool isnull;

	(void)argument(c, name, InvalidOid, &isnull);
	if (!isnull)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("argument \"%s\" of %s is not supported by flownode", name, c->function->name),
		                errdetail("%s", detail), errhint("%s", hint), arg_position(c, name)));
}

/* ---- the continuous aggregate ---- */

TaskConfig *fn_ts_flow_of(Oid relid, const char *shown) {
	ListCell *lc;

	foreach (lc, fn_load_flows_of_relation(relid)) {
		TaskConfig *cfg = lfirst(lc);

		if (cfg->sink_relid == relid)
			return cfg;
	}
	ereport(ERROR, (errcode(ERRCODE_WRONG_OBJECT_TYPE), errmsg("\"%s\" is not a continuous aggregate", shown),
	                errdetail("A continuous aggregate of flownode.execute is a flow and its sink table."),
	                errhint("Name the sink table of a flow (flownode.flows lists them), or one created by "
	                        "CREATE MATERIALIZED VIEW ... WITH (timescaledb.continuous).")));
	pg_unreachable();
}

static TaskConfig *cagg_flow(const TsCall *c) {
	bool isnull;
	Oid relid = DatumGetObjectId(argument(c, "continuous_aggregate", REGCLASSOID, &isnull));

	if (isnull)
		ereport(ERROR,
		        (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
		         errmsg("argument \"continuous_aggregate\" of %s must not be NULL", c->function->name)));
	return fn_ts_flow_of(relid, get_rel_name(relid));
}

/* ---- the calls ---- */

static void run(const char *sql, int nargs, Oid *types, Datum *values, const bool *isnull) {
	char nulls[MAX_PARAMS];

	for (int i = 0; i < nargs; i++)
		nulls[i] = isnull[i] ? 'n' : ' ';
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "flownode: SPI_connect failed");
	if (SPI_execute_with_args(sql, nargs, types, values, nulls, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "flownode: %s failed", sql);
	SPI_finish();
}

static void call_refresh(const TsCall *c) {
	TaskConfig *cfg = cagg_flow(c);
	Oid types[3] = {TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID};
	Datum values[3] = {CStringGetTextDatum(cfg->flow_name), 0, 0};
	bool isnull[3] = {false, true, true};

	/* a flow without time window has one window: the bounds (integers, for
	 * TimescaleDB's integer buckets) say nothing to it */
	if (cfg->window.kind != FN_WINDOW_NONE) {
		values[1] = argument(c, "window_start", TIMESTAMPTZOID, &isnull[1]);
		values[2] = argument(c, "window_end", TIMESTAMPTZOID, &isnull[2]);
	}
	run("SELECT " FLOWNODE_SCHEMA ".refresh_flow($1, $2, $3)", 3, types, values, isnull);
}

static Datum windowless_interval(void) {
	return DirectFunctionCall3(interval_in, CStringGetDatum(TS_WINDOWLESS_EVAL_INTERVAL),
	                           ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
}

/* alter_flow(flow, eval_interval, expire_after): NULL resets each (a flow without
 * time window gets the default eval_interval back instead). */
static void alter(TaskConfig *cfg, Datum eval_interval, bool eval_null, Datum expire_after,
                  bool expire_null) {
	Oid types[5] = {TEXTOID, INTERVALOID, INTERVALOID, BOOLOID, BOOLOID};
	Datum values[5];
	bool isnull[5] = {false, eval_null, expire_null, false, false};

	if (eval_null && cfg->window.kind == FN_WINDOW_NONE) {
		eval_interval = windowless_interval();
		isnull[1] = false;
	}
	values[0] = CStringGetTextDatum(cfg->flow_name);
	values[1] = eval_interval;
	values[2] = expire_after;
	values[3] = BoolGetDatum(isnull[1]);
	values[4] = BoolGetDatum(isnull[2]);
	run("SELECT " FLOWNODE_SCHEMA ".alter_flow($1, eval_interval => $2, expire_after => $3,"
	    " reset_eval_interval => $4, reset_expire_after => $5)",
	    5, types, values, isnull);
}

static void call_add_policy(const TsCall *c) {
	TaskConfig *cfg = cagg_flow(c);
	bool windowed = cfg->window.kind != FN_WINDOW_NONE;
	bool start_null, end_null, schedule_null;
	Datum start = argument(c, "start_offset", windowed ? INTERVALOID : InvalidOid, &start_null);
	Datum schedule = argument(c, "schedule_interval", INTERVALOID, &schedule_null);

	(void)argument(c, "end_offset", windowed ? INTERVALOID : InvalidOid, &end_null);
	/* TimescaleDB leaves the newest windows to its real-time view; a flow refreshes
	 * them at each evaluation like the others, so the sink only holds more than the
	 * policy asked for */
	if (!end_null)
		ereport(NOTICE, (errmsg("end_offset is not needed by flow \"%s\"", cfg->flow_name),
		                 errdetail("A flow keeps every window current up to now, the newest included: the "
		                           "windows after now() - end_offset are refreshed as well.")));
	if (!windowed && !start_null)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("start_offset cannot be mapped onto a continuous aggregate without a time "
		                       "window"),
		                errdetail("Its query groups by no time_bucket over a time column: it is recomputed "
		                          "whole, and has no old windows to leave alone."),
		                errhint("Write start_offset => NULL."), arg_position(c, "start_offset")));
	refuse_argument(c, "initial_start", "A flow evaluates at multiples of its eval_interval since 1970.",
	                "Leave initial_start out.");
	refuse_argument(c, "timezone", "A flow's evaluations do not depend on a time zone.",
	                "Leave timezone out.");
	alter(cfg, schedule, schedule_null, start, start_null);
}

void fn_ts_call(const char *statement, FuncCall *fc, bool is_call) {
	const char *name = strVal(llast(fc->funcname));
	TsCall c;

	memset(&c, 0, sizeof(c));
	c.statement = statement;
	c.fc = fc;
	if (is_call && strcmp(name, refresh_function.name) == 0)
		c.function = &refresh_function;
	else if (!is_call && strcmp(name, add_function.name) == 0)
		c.function = &add_function;
	else if (!is_call && strcmp(name, remove_function.name) == 0)
		c.function = &remove_function;
	else
		ereport(ERROR, (errcode(ERRCODE_UNDEFINED_FUNCTION),
		                errmsg("flownode.execute does not run %s", NameListToString(fc->funcname)),
		                errhint(is_call ? "It runs CALL refresh_continuous_aggregate(...)."
		                                : "It runs SELECT add_continuous_aggregate_policy(...) and SELECT "
		                                  "remove_continuous_aggregate_policy(...)."),
		                errposition(pg_mbstrlen_with_len(statement, fc->location) + 1)));
	bind_arguments(&c);
	if (c.function == &refresh_function)
		call_refresh(&c);
	else if (c.function == &add_function)
		call_add_policy(&c);
	else
		alter(cagg_flow(&c), (Datum)0, true, (Datum)0, true);
}
