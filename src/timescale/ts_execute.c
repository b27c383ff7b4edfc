/*
 * ts_execute.c: TimescaleDB's continuous-aggregate statements, read by PostgreSQL's
 * own parser (raw_parser) and run on the SQL API:
 *
 *   CREATE MATERIALIZED VIEW [IF NOT EXISTS] v [(columns)]
 *     WITH (timescaledb.continuous [, timescaledb.option = value ...])
 *     AS query [WITH [NO] DATA]       a flow named v whose sink is the table v
 *   DROP MATERIALIZED VIEW [IF EXISTS] v [, ...]      the flow and its sink
 *   ALTER MATERIALIZED VIEW v SET (timescaledb.materialized_only = ...)
 *   CALL refresh_continuous_aggregate(...)            ts_calls.c
 *   SELECT add_/remove_continuous_aggregate_policy(...)  ts_calls.c
 *
 * The query goes to create_flow as written (its text, between AS and WITH [NO]
 * DATA, found with PostgreSQL's scanner), read through ts_dialect.c.
 */
#include "flownode.h"

#include "timescale/ts_execute.h"

#include "api/flow_api.h"
#include "api/flow_caps.h"
#include "timescale/ts_calls.h"
#include "timescale/ts_dialect.h"

#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "commands/defrem.h"
#include "executor/spi.h"
#include "mb/pg_wchar.h"
#include "parser/parser.h"
#include "parser/scanner.h"
#include "pgtime.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#define TS_NAMESPACE "timescaledb"

/* ---- the statement's tokens (PostgreSQL's scanner, PostgreSQL's keywords) ---- */

typedef struct TsTokens {
	int *kinds;
	int *locations;
	int n;
} TsTokens;

/* The first `max` tokens (-1: all). */
static TsTokens scan(const char *statement, int max) {
	core_yy_extra_type extra;
	core_yyscan_t scanner = scanner_init(statement, &extra, &ScanKeywords, ScanKeywordTokens);
	TsTokens t = {palloc(sizeof(int) * 16), palloc(sizeof(int) * 16), 0};
	int cap = 16;

	for (;;) {
		core_YYSTYPE val;
		YYLTYPE loc = 0;
		int kind = core_yylex(&val, &loc, scanner);

		if (kind == 0 || t.n == max)
			break;
		if (t.n == cap) {
			cap *= 2;
			t.kinds = repalloc(t.kinds, sizeof(int) * cap);
			t.locations = repalloc(t.locations, sizeof(int) * cap);
		}
		t.kinds[t.n] = kind;
		t.locations[t.n++] = loc;
	}
	scanner_finish(scanner);
	return t;
}

static int keyword(const char *word) {
	int n = ScanKeywordLookup(word, &ScanKeywords);

	return n >= 0 ? ScanKeywordTokens[n] : -1;
}

bool fn_ts_statement(const char *statement) {
	TsTokens t = scan(statement, 3);
	int second = t.n >= 3 && t.kinds[0] == keyword("create") && t.kinds[1] == keyword("unlogged") ? 2 : 1;

	if (t.n >= 1 && (t.kinds[0] == keyword("call") || t.kinds[0] == keyword("select")))
		return true;
	return t.n > second &&
	       (t.kinds[0] == keyword("create") || t.kinds[0] == keyword("drop") ||
	        t.kinds[0] == keyword("alter")) &&
	       t.kinds[second] == keyword("materialized");
}

/* The query's text of CREATE MATERIALIZED VIEW: from the token after the first AS
 * outside parentheses to WITH [NO] DATA at the end (or a final semicolon). */
static char *view_query(const char *statement, int *start) {
	TsTokens t = scan(statement, -1);
	int end = t.n, depth = 0, as = -1;

	for (int i = 0; i < t.n && as < 0; i++) {
		if (t.kinds[i] == '(')
			depth++;
		else if (t.kinds[i] == ')')
			depth--;
		else if (depth == 0 && t.kinds[i] == keyword("as"))
			as = i;
	}
	if (end > 0 && t.kinds[end - 1] == ';')
		end--;
	if (end >= 2 && t.kinds[end - 1] == keyword("data")) {
		if (t.kinds[end - 2] == keyword("with"))
			end -= 2;
		else if (end >= 3 && t.kinds[end - 2] == keyword("no") && t.kinds[end - 3] == keyword("with"))
			end -= 3;
	}
	Assert(as >= 0 && as + 1 < end); /* raw_parser read a query after AS */
	*start = t.locations[as + 1];
	return pnstrdup(statement + *start, (end < t.n ? t.locations[end] : (int)strlen(statement)) - *start);
}

/* ---- CREATE MATERIALIZED VIEW ---- */

static int ts_position(const char *statement, int location) {
	return location >= 0 ? errposition(pg_mbstrlen_with_len(statement, location) + 1) : 0;
}

/* A timescaledb.* option that changes how TimescaleDB stores the view, not its rows. */
static bool is_storage_option(const char *name) {
	static const char *const names[] = {"create_group_indexes", "chunk_interval", "chunk_time_interval",
	                                    "invalidate_using"};

	for (int i = 0; i < (int)lengthof(names); i++)
		if (strcmp(name, names[i]) == 0)
			return true;
	return false;
}

static bool is_compression_option(const char *name) {
	return strncmp(name, "compress", 8) == 0 || strcmp(name, "enable_columnstore") == 0 ||
	       strcmp(name, "segmentby") == 0 || strcmp(name, "orderby") == 0;
}

/* The WITH options: timescaledb.continuous must be true; *materialized_only. */
static void read_options(const char *statement, List *options, bool *materialized_only) {
	bool continuous = false;
	ListCell *lc;

	*materialized_only = true; /* TimescaleDB's default since 2.13 */
	foreach (lc, options) {
		DefElem *d = lfirst_node(DefElem, lc);
		const char *name = d->defname;

		if (d->defnamespace == NULL || strcmp(d->defnamespace, TS_NAMESPACE) != 0)
			ereport(ERROR,
			        (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			         errmsg("storage parameter \"%s\" is not supported in a continuous aggregate", name),
			         errhint("Leave it out, and set it on the sink table with ALTER TABLE afterwards."),
			         ts_position(statement, d->location)));
		if (strcmp(name, "continuous") == 0)
			continuous = defGetBoolean(d);
		else if (strcmp(name, "materialized_only") == 0)
			*materialized_only = defGetBoolean(d);
		else if (strcmp(name, "finalized") == 0 && !defGetBoolean(d))
			ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			                errmsg("option \"timescaledb.finalized = false\" is not supported"),
			                errdetail("It asks for TimescaleDB's old format of partial aggregates; a flow's "
			                          "sink holds the finished values."),
			                errhint("Leave the option out."), ts_position(statement, d->location)));
		else if (is_compression_option(name))
			ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			                errmsg("option \"timescaledb.%s\" is not supported", name),
			                errdetail("The sink of a flow is a plain PostgreSQL table, never compressed."),
			                errhint("Leave the option out."), ts_position(statement, d->location)));
		else if (strcmp(name, "finalized") != 0 && !is_storage_option(name))
			ereport(
			    ERROR,
			    (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			     errmsg("unrecognized option \"timescaledb.%s\"", name),
			     errhint("The options taken are timescaledb.continuous and timescaledb.materialized_only."),
			     ts_position(statement, d->location)));
	}
	if (!continuous)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("flownode.execute creates only continuous aggregates"),
		                errhint("Add WITH (timescaledb.continuous), or run a plain CREATE MATERIALIZED VIEW "
		                        "outside flownode.execute.")));
}

/* The flow's name: the view's, with its schema when the statement names one. */
static char *flow_name_of(RangeVar *rel) {
	return rel->schemaname != NULL ? psprintf("%s.%s", rel->schemaname, rel->relname) : pstrdup(rel->relname);
}

/* Whether the view's name is free; false (with a NOTICE) for IF NOT EXISTS. */
static bool name_is_free(CreateTableAsStmt *ctas, const char *flow_name) {
	RangeVar *rel = ctas->into->rel;

	if (OidIsValid(RangeVarGetRelid(rel, NoLock, true))) {
		if (ctas->if_not_exists) {
			ereport(NOTICE, (errcode(ERRCODE_DUPLICATE_TABLE),
			                 errmsg("relation \"%s\" already exists, skipping", rel->relname)));
			return false;
		}
		ereport(ERROR,
		        (errcode(ERRCODE_DUPLICATE_TABLE), errmsg("relation \"%s\" already exists", rel->relname),
		         errhint("Drop it first, or give the continuous aggregate another name.")));
	}
	if (fn_load_task_config_by_name(flow_name, true) != NULL)
		ereport(ERROR, (errcode(ERRCODE_DUPLICATE_OBJECT), errmsg("flow \"%s\" already exists", flow_name),
		                errdetail("A continuous aggregate is a flow of the view's name."),
		                errhint("Drop the flow with flownode.drop_flow('%s') first, or give the continuous "
		                        "aggregate another name.",
		                        flow_name)));
	return true;
}

/*
 * A query without a time window (integer buckets group numbers) is recomputed whole
 * at each evaluation, so its flow needs an eval_interval: the default one, said in a
 * NOTICE with the way to change it.
 */
static Interval *windowless_eval_interval(const CreateFlowArgs *a) {
	FlowQuery *fq =
	    fn_analyze_flow_query_read(a->query, pg_get_timezone_name(session_timezone), a->reading, &a->origin);

	if (fq->window.kind != FN_WINDOW_NONE)
		return NULL;
	ereport(NOTICE,
	        (errmsg("continuous aggregate \"%s\" has no time window: its flow recomputes it whole after "
	                "a change, with eval_interval '%s'",
	                a->flow_name, TS_WINDOWLESS_EVAL_INTERVAL),
	         errhint("add_continuous_aggregate_policy's schedule_interval sets how often.")));
	return DatumGetIntervalP(DirectFunctionCall3(interval_in, CStringGetDatum(TS_WINDOWLESS_EVAL_INTERVAL),
	                                             ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1)));
}

/* materialized_only = false: TimescaleDB's view then adds the rows not materialized
 * yet; flownode.read_flow is that answer. */
static void real_time_notice(const char *flow_name, Oid sink) {
	const char *name =
	    RelationIsVisible(sink)
	        ? quote_identifier(get_rel_name(sink))
	        : quote_qualified_identifier(get_namespace_name(get_rel_namespace(sink)), get_rel_name(sink));

	ereport(
	    NOTICE,
	    (errmsg("the real-time answer of continuous aggregate \"%s\" is flownode.read_flow(NULL::%s)",
	            flow_name, name),
	     errdetail("The table %s holds the materialized rows; read_flow adds the windows written since they "
	               "were refreshed.",
	               name),
	     errhint("flownode.create_read_view('%s', 'view name') makes a view of it.", flow_name)));
}

static void execute_create(const char *statement, CreateTableAsStmt *ctas) {
	IntoClause *into = ctas->into;
	RangeVar *rel = into->rel;
	CreateFlowArgs a;
	bool materialized_only, waiting;

	read_options(statement, into->options, &materialized_only);
	if (into->accessMethod != NULL || into->tableSpaceName != NULL)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("USING and TABLESPACE are not supported in a continuous aggregate"),
		                errhint("Leave them out, and move the sink table with ALTER TABLE afterwards.")));
	if (rel->relpersistence != RELPERSISTENCE_PERMANENT)
		ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
		                errmsg("UNLOGGED is not supported in a continuous aggregate"),
		                errhint("Leave it out, and make the sink unlogged with ALTER TABLE ... SET UNLOGGED "
		                        "afterwards.")));
	memset(&a, 0, sizeof(a));
	a.flow_name = flow_name_of(rel);
	if (!name_is_free(ctas, a.flow_name))
		return;
	fn_check_create_privilege();
	a.sink_name = rel->schemaname != NULL ? quote_qualified_identifier(rel->schemaname, rel->relname)
	                                      : quote_identifier(rel->relname);
	a.query = view_query(statement, &a.origin.offset);
	a.origin.statement = statement;
	a.dialect = FLOW_DIALECT_POSTGRES;
	a.reading = fn_ts_reading(into->colNames);
	/* WITH NO DATA: nothing filled now. A real-time view (materialized_only = false)
	 * still answers in full: its sink fills in the background, and read_flow computes
	 * the windows not filled yet from the query meanwhile */
	a.no_fill = into->skipData && materialized_only;
	a.background = into->skipData && !materialized_only;
	a.eval_interval = windowless_eval_interval(&a);
	(void)fn_create_flow(&a, &waiting);
	if (!materialized_only)
		real_time_notice(a.flow_name, RangeVarGetRelid(rel, NoLock, false));
}

/* ---- DROP MATERIALIZED VIEW ---- */

static void drop_sink(const char *qualified, DropBehavior behavior) {
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "flownode: SPI_connect failed");
	if (SPI_execute(psprintf("DROP TABLE %s%s", qualified, behavior == DROP_CASCADE ? " CASCADE" : ""), false,
	                0) != SPI_OK_UTILITY)
		elog(ERROR, "flownode: dropping the sink %s failed", qualified);
	SPI_finish();
}

static void execute_drop(DropStmt *ds) {
	ListCell *lc;

	foreach (lc, ds->objects) {
		List *names = lfirst(lc);
		RangeVar *rv = makeRangeVarFromNameList(names);
		Oid relid = RangeVarGetRelid(rv, NoLock, true);
		TaskConfig *cfg;

		if (!OidIsValid(relid)) {
			if (!ds->missing_ok)
				ereport(ERROR, (errcode(ERRCODE_UNDEFINED_TABLE),
				                errmsg("materialized view \"%s\" does not exist", NameListToString(names))));
			ereport(NOTICE,
			        (errmsg("materialized view \"%s\" does not exist, skipping", NameListToString(names))));
			continue;
		}
		cfg = fn_ts_flow_of(relid, NameListToString(names));
		fn_drop_flow(cfg->flow_name, false);
		drop_sink(
		    quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)), get_rel_name(relid)),
		    ds->behavior);
	}
}

/* ---- ALTER MATERIALIZED VIEW v SET (timescaledb.materialized_only = ...) ---- */

pg_noreturn static void alter_refused(void);
static void alter_refused(void) {
	ereport(ERROR,
	        (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
	         errmsg("flownode.execute alters only timescaledb.materialized_only of a continuous aggregate"),
	         errhint("Alter the sink table with ALTER TABLE, and the flow with flownode.alter_flow.")));
}

static void execute_alter(AlterTableStmt *ats) {
	Oid relid = RangeVarGetRelid(ats->relation, NoLock, ats->missing_ok);
	TaskConfig *cfg;
	ListCell *lc, *lc2;

	if (!OidIsValid(relid)) {
		ereport(NOTICE,
		        (errmsg("materialized view \"%s\" does not exist, skipping", ats->relation->relname)));
		return;
	}
	cfg = fn_ts_flow_of(relid, ats->relation->relname);
	foreach (lc, ats->cmds) {
		AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);

		if (cmd->subtype != AT_SetRelOptions)
			alter_refused();
		foreach (lc2, (List *)cmd->def) {
			DefElem *d = lfirst_node(DefElem, lc2);

			if (d->defnamespace == NULL || strcmp(d->defnamespace, TS_NAMESPACE) != 0 ||
			    strcmp(d->defname, "materialized_only") != 0)
				alter_refused();
			if (!defGetBoolean(d))
				real_time_notice(cfg->flow_name, relid);
		}
	}
}

/* ---- dispatch ---- */

static void execute_select(const char *statement, SelectStmt *sel) {
	ResTarget *rt = list_length(sel->targetList) == 1 ? linitial_node(ResTarget, sel->targetList) : NULL;

	if (rt != NULL && IsA(rt->val, FuncCall) && sel->fromClause == NIL && sel->whereClause == NULL &&
	    sel->op == SETOP_NONE && sel->withClause == NULL && sel->intoClause == NULL &&
	    sel->groupClause == NIL && sel->havingClause == NULL && sel->sortClause == NIL &&
	    sel->limitCount == NULL && sel->limitOffset == NULL && sel->distinctClause == NIL) {
		fn_ts_call(statement, (FuncCall *)rt->val, false);
		return;
	}
	ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
	                errmsg("flownode.execute runs a SELECT only to call a policy function of a continuous "
	                       "aggregate"),
	                errhint("Write SELECT add_continuous_aggregate_policy(...) or SELECT "
	                        "remove_continuous_aggregate_policy(...) alone; run other queries directly.")));
}

void fn_ts_execute(const char *statement) {
	List *raw = raw_parser(statement, RAW_PARSE_DEFAULT);
	Node *stmt;

	if (list_length(raw) != 1)
		ereport(ERROR,
		        (errcode(ERRCODE_SYNTAX_ERROR), errmsg("flownode.execute runs one statement at a time"),
		         errhint("Call flownode.execute once for each statement.")));
	stmt = linitial_node(RawStmt, raw)->stmt;
	if (IsA(stmt, CreateTableAsStmt) && ((CreateTableAsStmt *)stmt)->objtype == OBJECT_MATVIEW)
		execute_create(statement, (CreateTableAsStmt *)stmt);
	else if (IsA(stmt, DropStmt) && ((DropStmt *)stmt)->removeType == OBJECT_MATVIEW)
		execute_drop((DropStmt *)stmt);
	else if (IsA(stmt, AlterTableStmt) && ((AlterTableStmt *)stmt)->objtype == OBJECT_MATVIEW)
		execute_alter((AlterTableStmt *)stmt);
	else if (IsA(stmt, CallStmt))
		fn_ts_call(statement, ((CallStmt *)stmt)->funccall, true);
	else if (IsA(stmt, SelectStmt))
		execute_select(statement, (SelectStmt *)stmt);
	else
		ereport(
		    ERROR,
		    (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), errmsg("flownode.execute does not run this statement"),
		     errhint("It runs CREATE MATERIALIZED VIEW ... WITH (timescaledb.continuous), DROP "
		             "MATERIALIZED VIEW, ALTER MATERIALIZED VIEW ... SET "
		             "(timescaledb.materialized_only = ...), CALL refresh_continuous_aggregate and SELECT "
		             "add_continuous_aggregate_policy or remove_continuous_aggregate_policy.")));
}
