/*
 * gt_execute.c: flownode.execute(statement). Each of GreptimeDB's flow statements
 * (gt_parser.c reads them) runs on the SQL API: CREATE FLOW on create_flow (its query
 * read in GreptimeDB's dialect, its errors pointing into the statement), DROP FLOW on
 * drop_flow, ADMIN FLUSH_FLOW on flush_flow; SHOW FLOWS reads the flows view, SHOW
 * CREATE FLOW writes the statement that recreates a flow. The result is one column of
 * text: a row per flow for SHOW FLOWS, the statement for SHOW CREATE FLOW, the windows
 * refreshed for ADMIN FLUSH_FLOW, no row for CREATE and DROP. TimescaleDB's
 * continuous-aggregate statements go to timescale/ts_execute.c, recognized by their
 * first words.
 */
#include "flownode.h"

#include "greptime/gt_execute.h"

#include "api/flow_api.h"
#include "api/flow_caps.h"
#include "greptime/gt_dialect.h"
#include "greptime/gt_parser.h"
#include "greptime/gt_waiting.h"
#include "pgutil/pg_util.h"
#include "pgutil/subxact_try.h"
#include "query/query_rewrite.h"
#include "timescale/ts_execute.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/timestamp.h"
#include "utils/tuplestore.h"

PG_FUNCTION_INFO_V1(flownode_execute);
PG_FUNCTION_INFO_V1(flownode_flow_definition);

#define OPTION_DEFER "defer_on_missing_source"

/* ---- SHOW CREATE FLOW ---- */

/* An interval as a string constant, in the pinned IntervalStyle (postgres). */
static char *interval_text(Interval *iv) {
	int nest = fn_pin_deparse_settings(NULL);
	char *text = DatumGetCString(DirectFunctionCall1(interval_out, IntervalPGetDatum(iv)));

	fn_unpin_settings(nest);
	return quote_literal_cstr(text);
}

/* WITH (name = 'value', ...) from the options' jsonb text, or "" when there are none. */
static char *options_clause(const char *options) {
	Jsonb *jb;
	JsonbIterator *it;
	JsonbValue v;
	JsonbIteratorToken tok;
	StringInfoData s;
	bool key = true;

	if (options == NULL)
		return "";
	jb = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum(options)));
	if (JB_ROOT_COUNT(jb) == 0)
		return "";
	initStringInfo(&s);
	it = JsonbIteratorInit(&jb->root);
	while ((tok = JsonbIteratorNext(&it, &v, false)) != WJB_DONE) {
		if (tok == WJB_KEY) {
			appendStringInfo(&s, "%s%s = ", s.len ? ", " : "WITH (",
			                 quote_identifier(pnstrdup(v.val.string.val, v.val.string.len)));
			key = false;
		} else if (tok == WJB_VALUE && !key) {
			char *value = v.type == jbvString ? pnstrdup(v.val.string.val, v.val.string.len)
			                                  : JsonbToCString(NULL, &jb->root, 0); /* not written by us */

			appendStringInfoString(&s, quote_literal_cstr(value));
			key = true;
		}
	}
	appendStringInfoString(&s, ")\n");
	return s.data;
}

/*
 * The query as the statement shows it: the user's own text when it still reads as the
 * flow's stored query here (analysed now and deparsed, it gives the same text), else
 * the stored query, which follows renames and names every table with its schema. The
 * user's text is tried in a subtransaction: it may not analyse any more at all.
 */
typedef struct SameTry {
	TaskConfig *cfg;
	bool same;
} SameTry;

static bool same_work(void *arg) {
	SameTry *t = arg;
	FlowQuery *fq = fn_analyze_flow_query_read(t->cfg->user_query, t->cfg->timezone,
	                                           fn_gt_reading(t->cfg->dialect), NULL);
	int nest = fn_pin_deparse_settings(t->cfg->timezone);

	t->same = strcmp(fn_deparse_query(fq->as_written), t->cfg->query) == 0;
	fn_unpin_settings(nest);
	return true;
}

static const char *definition_query(TaskConfig *cfg) {
	SameTry t = {cfg, false};
	ErrorData *edata;

	if (cfg->waiting)
		return cfg->user_query;
	edata = fn_try_in_subxact(same_work, &t);
	if (edata != NULL) {
		FreeErrorData(edata);
		return cfg->query;
	}
	return t.same ? cfg->user_query : cfg->query;
}

char *fn_gt_flow_definition(TaskConfig *cfg) {
	StringInfoData s;

	initStringInfo(&s);
	appendStringInfo(&s, "CREATE FLOW IF NOT EXISTS %s\n", quote_identifier(cfg->flow_name));
	appendStringInfo(&s, "SINK TO %s\n",
	                 cfg->waiting ? cfg->sink_name : fn_qualified_relname(cfg->sink_relid));
	if (cfg->expire_after != NULL)
		appendStringInfo(&s, "EXPIRE AFTER %s\n", interval_text(cfg->expire_after));
	if (cfg->eval_interval != NULL)
		appendStringInfo(&s, "EVAL INTERVAL %s\n", interval_text(cfg->eval_interval));
	if (cfg->comment != NULL)
		appendStringInfo(&s, "COMMENT %s\n", quote_literal_cstr(cfg->comment));
	appendStringInfoString(&s, options_clause(cfg->options));
	appendStringInfo(&s, "AS %s", definition_query(cfg));
	return s.data;
}

/* flownode.flow_definition(flow_id): NULL for a flow of a role the caller is not. */
Datum flownode_flow_definition(PG_FUNCTION_ARGS) {
	TaskConfig *cfg = fn_load_task_config(PG_GETARG_INT64(0), true);

	if (cfg == NULL || !has_privs_of_role(GetUserId(), cfg->owner))
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(fn_gt_flow_definition(cfg)));
}

/* ---- the statements ---- */

static void emit(FunctionCallInfo fcinfo, const char *value) {
	ReturnSetInfo *rsinfo = (ReturnSetInfo *)fcinfo->resultinfo;
	Datum d = CStringGetTextDatum(value);
	bool null = false;

	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &d, &null);
}

/*
 * The WITH options, as jsonb text; *defer: defer_on_missing_source. It is the one
 * option flownode takes; GreptimeDB's others are refused by name, anything else as
 * unknown, each pointing at its name.
 */
static char *read_options(GtStatement *st, bool *defer) {
	StringInfoData s;
	ListCell *lc, *lc2;

	*defer = false;
	if (st->options == NIL)
		return NULL;
	initStringInfo(&s);
	appendStringInfoChar(&s, '{');
	foreach (lc, st->options) {
		GtOption *o = lfirst(lc);
		bool value;

		foreach (lc2, st->options) {
			GtOption *before = lfirst(lc2);

			if (before == o)
				break;
			if (strcmp(before->name, o->name) == 0)
				ereport(ERROR,
				        (errcode(ERRCODE_SYNTAX_ERROR), errmsg("option \"%s\" is given twice", o->name),
				         fn_gt_errposition(st->shown, o->location)));
		}
		if (strcmp(o->name, OPTION_DEFER) != 0) {
			bool greptime = strcmp(o->name, "experimental_enable_incremental_read") == 0 ||
			                strcmp(o->name, "flow_type") == 0 || strcmp(o->name, "eval_offset") == 0;

			ereport(
			    ERROR,
			    (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			     greptime ? errmsg("flow option \"%s\" is not supported by flownode", o->name)
			              : errmsg("unknown flow option \"%s\"", o->name),
			     greptime
			         ? errdetail("flownode refreshes the windows written, whatever the source, in one mode.")
			         : 0,
			     errhint("The one flow option flownode takes is " OPTION_DEFER "."),
			     fn_gt_errposition(st->shown, o->location)));
		}
		if (!parse_bool(o->value, &value))
			ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			                errmsg("option \"%s\" requires a Boolean value, not \"%s\"", o->name, o->value),
			                errhint("Write " OPTION_DEFER " = true or " OPTION_DEFER " = false."),
			                fn_gt_errposition(st->shown, o->location)));
		*defer = value;
		appendStringInfo(&s, "%s\"%s\": \"%s\"", s.len > 1 ? ", " : "", o->name, value ? "true" : "false");
	}
	appendStringInfoChar(&s, '}');
	return s.data;
}

static void execute_create(GtStatement *st) {
	CreateFlowArgs a;
	bool waiting;

	/* the right create_flow asks for, whatever the statement says (OR REPLACE, IF NOT
	 * EXISTS): flownode.execute itself stays executable by all, for DROP FLOW, ADMIN
	 * FLUSH_FLOW and SHOW of one's own flows */
	fn_check_create_privilege();
	memset(&a, 0, sizeof(a));
	a.flow_name = st->flow_name;
	a.sink_name = st->sink_name;
	a.query = st->query;
	a.eval_interval = st->eval_interval;
	a.expire_after = st->expire_after;
	a.comment = st->comment;
	a.if_not_exists = st->if_not_exists;
	a.or_replace = st->or_replace;
	a.dialect = FLOW_DIALECT_GREPTIME;
	a.reading = fn_gt_reading(FLOW_DIALECT_GREPTIME);
	a.options = read_options(st, &a.defer_on_missing_source);
	a.origin.statement = st->shown;
	a.origin.offset = st->query_location;
	a.clauses = true;
	if (!a.defer_on_missing_source) {
		/* GreptimeDB's error, where the name is, with the way out */
		RangeVar *source = fn_flow_query_source(a.query, &a.origin);

		if (source != NULL && !OidIsValid(RangeVarGetRelid(source, NoLock, true)))
			ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
			                errmsg("relation \"%s\" does not exist",
			                       source->schemaname ? psprintf("%s.%s", source->schemaname, source->relname)
			                                          : source->relname),
			                errhint("To create the flow before its source table, add WITH (" OPTION_DEFER
			                        " = true): it starts when the table is created."),
			                fn_gt_errposition(st->shown, st->query_location + source->location)));
	}
	(void)fn_create_flow(&a, &waiting);
}

/* ADMIN FLUSH_FLOW: a flow waiting for its source starts first if it can. */
static int64 execute_flush(GtStatement *st) {
	TaskConfig *cfg = fn_load_task_config_by_name(st->flow_name, true);

	if (cfg != NULL && cfg->waiting && has_privs_of_role(GetUserId(), cfg->owner) &&
	    fn_gt_start_waiting_flow(cfg))
		ereport(NOTICE, (errmsg("flow \"%s\" started: its source table exists now", cfg->flow_name)));
	return fn_flush_flow(st->flow_name);
}

static void execute_show_flows(FunctionCallInfo fcinfo, GtStatement *st) {
	Oid types[1] = {TEXTOID};
	Datum values[1] = {st->like_pattern ? CStringGetTextDatum(st->like_pattern) : (Datum)0};
	char nulls[1] = {st->like_pattern ? ' ' : 'n'};
	MemoryContext caller = CurrentMemoryContext;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "flownode: SPI_connect failed");
	if (SPI_execute_with_args("SELECT flow_name FROM " FLOWNODE_SCHEMA ".flows"
	                          " WHERE $1 IS NULL OR flow_name LIKE $1 ORDER BY flow_name",
	                          1, types, values, nulls, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "flownode: reading the flows view failed");
	for (uint64 i = 0; i < SPI_processed; i++) {
		MemoryContext spi = MemoryContextSwitchTo(caller);

		emit(fcinfo, SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1));
		MemoryContextSwitchTo(spi);
	}
	SPI_finish();
}

static void execute_show_create(FunctionCallInfo fcinfo, GtStatement *st) {
	TaskConfig *cfg = fn_load_task_config_by_name(st->flow_name, true);

	if (cfg == NULL)
		ereport(ERROR,
		        (errcode(ERRCODE_UNDEFINED_OBJECT), errmsg("flow \"%s\" does not exist", st->flow_name),
		         fn_gt_errposition(st->shown, st->flow_name_location)));
	if (!has_privs_of_role(GetUserId(), cfg->owner))
		ereport(ERROR, (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
		                errmsg("must be owner of flow \"%s\"", cfg->flow_name)));
	emit(fcinfo, fn_gt_flow_definition(cfg));
}

Datum flownode_execute(PG_FUNCTION_ARGS) {
	char *statement = text_to_cstring(PG_GETARG_TEXT_PP(0));
	GtStatement *st;

	/* one text column: the function is declared RETURNS TABLE (result text) */
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	(void)fn_catalog_relid(false);
	if (fn_ts_statement(statement)) {
		/* TimescaleDB's (timescale/): no result rows; errors point into the statement */
		GtErrorScope scope;

		fn_gt_error_scope_push(&scope, statement, -1);
		fn_ts_execute(statement);
		fn_gt_error_scope_pop(&scope);
		PG_RETURN_VOID();
	}
	st = fn_gt_parse(statement);
	switch (st->kind) {
	case GT_CREATE_FLOW:
		execute_create(st);
		break;
	case GT_DROP_FLOW:
		fn_drop_flow(st->flow_name, st->if_exists);
		break;
	case GT_FLUSH_FLOW:
		emit(fcinfo, psprintf(INT64_FORMAT, execute_flush(st)));
		break;
	case GT_SHOW_FLOWS:
		execute_show_flows(fcinfo, st);
		break;
	case GT_SHOW_CREATE_FLOW:
		execute_show_create(fcinfo, st);
		break;
	}
	PG_RETURN_VOID();
}
