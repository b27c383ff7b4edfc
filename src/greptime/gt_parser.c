/*
 * gt_parser.c: GreptimeDB's flow statements, parsed by recursive descent over the
 * tokens of PostgreSQL's own scanner (core_yylex). The scanner is given no keywords,
 * so every word is an IDENT (downcased unless double-quoted) and the grammar below
 * decides what is a keyword where; strings, numbers, operators and locations are
 * PostgreSQL's. Each clause of CREATE FLOW is read in GreptimeDB's order
 * (src/sql/src/parsers/create_parser.rs):
 *
 *   CREATE [OR REPLACE] FLOW [IF NOT EXISTS] name SINK TO table
 *     [EXPIRE AFTER interval] [EVAL INTERVAL interval] [COMMENT 'text']
 *     [WITH (option = value, ...)] AS query
 *   DROP FLOW [IF EXISTS] name
 *   ADMIN FLUSH_FLOW('name')
 *   SHOW FLOWS [LIKE 'pattern']
 *   SHOW CREATE FLOW name
 *
 * An interval is '5 minutes', '5 minutes'::INTERVAL, INTERVAL '5 minutes' or
 * INTERVAL '5' MINUTE. The query after AS is not parsed here: it is the text from
 * its first token to the end (a final semicolon left out), for PostgreSQL's parser.
 *
 * Two spellings of GreptimeDB's SQL parser (sqlparser-rs) that PostgreSQL's reads
 * otherwise are normalized first, in place, so every position stays the same:
 * `backquoted` identifiers become "double-quoted", and a comma ending the SELECT list
 * right before FROM becomes a space.
 */
#include "flownode.h"

#include "greptime/gt_parser.h"

#include "api/flow_api.h"

#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "catalog/pg_collation.h"
#include "commands/dbcommands.h"
#include "common/keywords.h"
#include "parser/scanner.h"
#include "utils/builtins.h"
#include "utils/formatting.h"
#include "utils/timestamp.h"

/* ---- errors that point into the statement ---- */

int fn_gt_errposition(const char *statement, int location) {
	internalerrquery(statement);
	return internalerrposition(pg_mbstrlen_with_len(statement, location) + 1);
}

static void gt_error_callback(void *arg) {
	GtErrorScope *scope = (GtErrorScope *)arg;
	int pos = geterrposition();

	if (pos > 0) { /* the scanner's, in the statement it scans */
		errposition(0);
		internalerrposition(pos);
		internalerrquery(scope->statement);
	} else if (getinternalerrposition() == 0 && scope->location >= 0)
		(void)fn_gt_errposition(scope->statement, scope->location);
}

void fn_gt_error_scope_push(GtErrorScope *scope, const char *statement, int location) {
	scope->statement = statement;
	scope->location = location;
	scope->callback.callback = gt_error_callback;
	scope->callback.arg = (void *)scope;
	scope->callback.previous = error_context_stack;
	error_context_stack = &scope->callback;
}

void fn_gt_error_scope_pop(GtErrorScope *scope) {
	error_context_stack = scope->callback.previous;
}

/* ---- tokens ---- */

typedef struct GtToken {
	int kind;     /* IDENT, SCONST, Op, ... or a one-character token's character; 0 at the end */
	int location; /* byte offset in the statement */
	char *str;    /* IDENT (downcased unless quoted), a string's contents, a number's or operator's text */
	bool quoted;  /* an IDENT written in double quotes */
} GtToken;

typedef struct GtParser {
	const char *text;  /* normalized */
	const char *shown; /* as given: errors show it (at the same positions) */
	GtToken *tokens;
	int ntokens;
	int pos;
} GtParser;

/* No keywords: the scanner returns every word as an IDENT. */
static int no_keyword_hash(const void *key pg_attribute_unused(), size_t keylen pg_attribute_unused()) {
	return 0;
}
static const uint16 no_keyword_offsets[1] = {0};
static const ScanKeywordList no_keywords = {"", no_keyword_offsets, no_keyword_hash, 0, 0};
static const uint16 no_keyword_tokens[1] = {0};

static GtToken *tokenize(const char *text, int *ntokens) {
	core_yy_extra_type extra;
	core_yyscan_t scanner = scanner_init(text, &extra, &no_keywords, no_keyword_tokens);
	int cap = 64, n = 0;
	GtToken *tokens = palloc(sizeof(GtToken) * cap);

	for (;;) {
		core_YYSTYPE val;
		YYLTYPE loc = 0;
		int kind = core_yylex(&val, &loc, scanner);
		GtToken *t;

		if (n == cap) {
			cap *= 2;
			tokens = repalloc(tokens, sizeof(GtToken) * cap);
		}
		t = &tokens[n++];
		t->kind = kind;
		t->location = kind == 0 ? (int)strlen(text) : loc;
		t->str = NULL;
		t->quoted = false;
		switch (kind) {
		case IDENT:
			t->str = val.str;
			t->quoted = text[loc] == '"';
			break;
		case SCONST:
		case FCONST:
		case BCONST:
		case XCONST:
		case Op:
			t->str = val.str;
			break;
		case ICONST:
			t->str = psprintf("%d", val.ival);
			break;
		case UIDENT:
		case USCONST:
			ereport(ERROR,
			        (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			         errmsg("Unicode escapes (U&) are not supported in a flow statement's own clauses"),
			         fn_gt_errposition(text, loc)));
			break;
		default:
			break;
		}
		if (kind == 0)
			break;
	}
	scanner_finish(scanner);
	*ntokens = n;
	return tokens;
}

static bool is_word(const GtToken *t, const char *word) {
	return t->kind == IDENT && !t->quoted && strcmp(t->str, word) == 0;
}

/*
 * GreptimeDB's spellings, made PostgreSQL's at the same positions: a `backquoted`
 * name becomes "double-quoted" (outside strings, comments and quoted names a
 * backquote can only be read by PostgreSQL's scanner as part of an operator, so the
 * backquotes are found in the operator tokens), and a comma right before the FROM of
 * the SELECT list of CREATE FLOW ... AS SELECT becomes a space.
 */
static char *normalize(const char *text) {
	char *out = pstrdup(text);
	int n;
	GtToken *tokens = tokenize(text, &n);
	int *quotes = palloc(sizeof(int) * (strlen(text) + 1));
	int nquotes = 0;
	int depth = 0;
	bool in_select = false;

	for (int i = 0; i < n; i++)
		if (tokens[i].kind == Op)
			for (int k = 0; tokens[i].str[k]; k++)
				if (tokens[i].str[k] == '`')
					quotes[nquotes++] = tokens[i].location + k;
	for (int k = 0; k + 1 < nquotes; k += 2) {
		int a = quotes[k], b = quotes[k + 1];
		bool plain = b > a + 1;

		for (int c = a + 1; c < b; c++)
			plain &= text[c] != '"' && text[c] != '\n';
		if (plain)
			out[a] = out[b] = '"';
	}
	if (n > 0 && is_word(&tokens[0], "create"))
		for (int i = 0; i + 1 < n; i++) {
			if (!in_select) {
				in_select = is_word(&tokens[i], "select");
				continue;
			}
			if (tokens[i].kind == '(' || tokens[i].kind == '[')
				depth++;
			else if (tokens[i].kind == ')' || tokens[i].kind == ']')
				depth--;
			else if (depth == 0 && tokens[i].kind == ',' && is_word(&tokens[i + 1], "from")) {
				out[tokens[i].location] = ' ';
				break;
			} else if (depth == 0 && is_word(&tokens[i], "from"))
				break;
		}
	return out;
}

/* ---- the grammar ---- */

static GtToken *peek(GtParser *p) {
	return &p->tokens[p->pos];
}

static GtToken *next(GtParser *p) {
	GtToken *t = peek(p);

	if (t->kind != 0)
		p->pos++;
	return t;
}

static bool accept_word(GtParser *p, const char *word) {
	if (!is_word(peek(p), word))
		return false;
	p->pos++;
	return true;
}

static bool accept_char(GtParser *p, int c) {
	if (peek(p)->kind != c)
		return false;
	p->pos++;
	return true;
}

/* How a token reads in an error message. */
static char *token_text(GtParser *p, GtToken *t) {
	switch (t->kind) {
	case IDENT:
		return t->quoted ? psprintf("\"%s\"", t->str) : pnstrdup(p->text + t->location, strlen(t->str));
	case SCONST:
		return quote_literal_cstr(t->str);
	case TYPECAST:
		return pstrdup("::");
	case Op:
	case ICONST:
	case FCONST:
		return pstrdup(t->str);
	default:
		return t->kind > 0 && t->kind < 256 ? psprintf("%c", (char)t->kind)
		                                    : pnstrdup(p->text + t->location, 1);
	}
}

pg_noreturn static void syntax_error(GtParser *p, GtToken *t, const char *expected);
static void syntax_error(GtParser *p, GtToken *t, const char *expected) {
	if (t->kind == 0)
		ereport(ERROR, (errcode(ERRCODE_SYNTAX_ERROR), errmsg("syntax error at end of input"),
		                errdetail("Expected %s.", expected), fn_gt_errposition(p->shown, t->location)));
	ereport(ERROR, (errcode(ERRCODE_SYNTAX_ERROR), errmsg("syntax error at or near \"%s\"", token_text(p, t)),
	                errdetail("Expected %s.", expected), fn_gt_errposition(p->shown, t->location)));
}

static void expect_word(GtParser *p, const char *word, const char *expected) {
	if (!accept_word(p, word))
		syntax_error(p, peek(p), expected);
}

static void expect_char(GtParser *p, int c, const char *expected) {
	if (!accept_char(p, c))
		syntax_error(p, peek(p), expected);
}

/* A statement ends here, with or without a semicolon. */
static void expect_end(GtParser *p) {
	(void)accept_char(p, ';');
	if (peek(p)->kind != 0)
		syntax_error(p, peek(p), "the end of the statement");
}

/* A word PostgreSQL reserves (AS, SELECT, FROM...) is a name only when quoted, as in
 * SQL: SINK TO AS ... lacks the table's name. */
static bool is_reserved(const GtToken *t) {
	int kw;

	if (t->kind != IDENT || t->quoted)
		return false;
	kw = ScanKeywordLookup(t->str, &ScanKeywords);
	return kw >= 0 && ScanKeywordCategories[kw] == RESERVED_KEYWORD;
}

static char *parse_identifier(GtParser *p, const char *expected, int *location) {
	GtToken *t = next(p);

	if (t->kind != IDENT || is_reserved(t))
		syntax_error(p, t, expected);
	if (location)
		*location = t->location;
	return t->str;
}

/* A flow's name: one identifier (flows belong to the database, as in GreptimeDB to
 * its catalog). */
static char *parse_flow_name(GtParser *p, int *location) {
	char *name = parse_identifier(p, "a flow name", location);

	if (peek(p)->kind == '.')
		ereport(ERROR, (errcode(ERRCODE_SYNTAX_ERROR), errmsg("a flow name cannot be qualified"),
		                errdetail("A flow belongs to the database, not to a schema."),
		                fn_gt_errposition(p->shown, peek(p)->location)));
	return name;
}

/* [catalog.][schema.]table, as SQL writes a table name (quoted where needed); a
 * catalog must be this database, as in PostgreSQL. */
static char *parse_table_name(GtParser *p, int *location) {
	char *parts[3];
	int locs[3];
	int n = 0;

	do {
		if (n == 3)
			ereport(ERROR,
			        (errcode(ERRCODE_SYNTAX_ERROR), errmsg("improper qualified name (too many dotted names)"),
			         fn_gt_errposition(p->shown, locs[0])));
		parts[n] = parse_identifier(p, "a table name", &locs[n]);
		n++;
	} while (accept_char(p, '.'));
	*location = locs[0];
	if (n == 3) {
		if (strcmp(parts[0], get_database_name(MyDatabaseId)) != 0)
			ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			                errmsg("cross-database references are not implemented: %s.%s.%s", parts[0],
			                       parts[1], parts[2]),
			                fn_gt_errposition(p->shown, locs[0])));
		return quote_qualified_identifier(parts[1], parts[2]);
	}
	return n == 2 ? quote_qualified_identifier(parts[0], parts[1]) : pstrdup(quote_identifier(parts[0]));
}

static bool is_interval_unit(const GtToken *t) {
	static const char *const units[] = {
	    "microsecond", "microseconds", "millisecond", "milliseconds", "second", "seconds",
	    "minute",      "minutes",      "hour",        "hours",        "day",    "days",
	    "week",        "weeks",        "month",       "months",       "year",   "years"};

	for (size_t i = 0; i < lengthof(units); i++)
		if (is_word(t, units[i]))
			return true;
	return false;
}

/*
 * An interval in GreptimeDB's forms: '5 minutes', '5 minutes'::INTERVAL, INTERVAL
 * '5 minutes', INTERVAL '5' MINUTE; read by PostgreSQL's interval input. Months and
 * years are refused, as GreptimeDB refuses them here: they have no fixed length.
 */
static Interval *parse_interval(GtParser *p, const char *clause, int64 min_usec, int *location) {
	GtToken *t = peek(p);
	char *value;
	GtErrorScope scope;
	Interval *iv;

	*location = t->location;
	if (accept_word(p, "interval")) {
		t = next(p);
		if (t->kind != SCONST)
			syntax_error(p, t, "a string constant after INTERVAL");
		value = t->str;
		if (is_interval_unit(peek(p)))
			value = psprintf("%s %s", value, next(p)->str);
	} else if (t->kind == SCONST) {
		value = next(p)->str;
		if (accept_char(p, TYPECAST) && !accept_word(p, "interval"))
			syntax_error(p, peek(p), "INTERVAL after ::");
	} else
		syntax_error(p, t, "an interval: '5 minutes', '5 minutes'::INTERVAL or INTERVAL '5 minutes'");
	fn_gt_error_scope_push(&scope, p->shown, *location);
	iv = DatumGetIntervalP(DirectFunctionCall3(interval_in, CStringGetDatum(value),
	                                           ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1)));
	if (iv->month != 0)
		ereport(ERROR,
		        (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
		         errmsg("the interval of %s must not contain months or years", clause),
		         errdetail("A month or a year has no fixed length."), errhint("Write days: '30 days'.")));
	fn_check_flow_interval(iv, clause, min_usec);
	fn_gt_error_scope_pop(&scope);
	return iv;
}

/* WITH (name = value, ...): a name is a word or a string, a value a string, a word
 * (true, false) or a number. Which names are taken is gt_execute.c's to say. */
static List *parse_options(GtParser *p) {
	List *options = NIL;

	expect_char(p, '(', "( after WITH");
	do {
		GtOption *o = palloc0(sizeof(GtOption));
		GtToken *t = next(p);

		if (t->kind != IDENT && t->kind != SCONST)
			syntax_error(p, t, "an option name");
		o->name = t->kind == SCONST ? str_tolower(t->str, strlen(t->str), DEFAULT_COLLATION_OID) : t->str;
		o->location = t->location;
		expect_char(p, '=', "= after the option name");
		t = next(p);
		if (t->kind != SCONST && t->kind != IDENT && t->kind != ICONST && t->kind != FCONST)
			syntax_error(p, t, "an option value: a string, true or false, or a number");
		o->value = t->str;
		options = lappend(options, o);
	} while (accept_char(p, ','));
	expect_char(p, ')', ", or ) after an option");
	return options;
}

static void parse_create(GtParser *p, GtStatement *st) {
	GtToken *t;
	int end;

	st->kind = GT_CREATE_FLOW;
	if (accept_word(p, "or")) {
		expect_word(p, "replace", "REPLACE after OR");
		st->or_replace = true;
	}
	expect_word(p, "flow", "FLOW");
	t = peek(p);
	if (accept_word(p, "if")) {
		expect_word(p, "not", "NOT after IF");
		expect_word(p, "exists", "EXISTS after IF NOT");
		if (st->or_replace)
			ereport(ERROR, (errcode(ERRCODE_SYNTAX_ERROR),
			                errmsg("CREATE OR REPLACE FLOW cannot have IF NOT EXISTS"),
			                errhint("Replace the flow, or keep an existing one: not both."),
			                fn_gt_errposition(p->shown, t->location)));
		st->if_not_exists = true;
	}
	st->flow_name = parse_flow_name(p, &st->flow_name_location);
	expect_word(p, "sink", "SINK TO");
	expect_word(p, "to", "TO after SINK");
	st->sink_name = parse_table_name(p, &st->sink_location);
	if (accept_word(p, "expire")) {
		expect_word(p, "after", "AFTER after EXPIRE");
		st->expire_after = parse_interval(p, "EXPIRE AFTER", 1, &st->expire_location);
	}
	if (accept_word(p, "eval")) {
		expect_word(p, "interval", "INTERVAL after EVAL");
		st->eval_interval = parse_interval(p, "EVAL INTERVAL", MIN_EVAL_INTERVAL_USEC, &st->eval_location);
	}
	if (accept_word(p, "comment")) {
		t = next(p);
		if (t->kind != SCONST)
			syntax_error(p, t, "a string constant after COMMENT");
		st->comment = t->str;
	}
	if (accept_word(p, "with"))
		st->options = parse_options(p);
	if (!accept_word(p, "as"))
		syntax_error(
		    p, peek(p),
		    "AS, or the clauses of CREATE FLOW in their order: EXPIRE AFTER, EVAL INTERVAL, COMMENT, WITH");
	t = peek(p);
	if (t->kind == 0)
		syntax_error(p, t, "the flow's query after AS");
	st->query_location = t->location;
	/* to the end, a final semicolon left out */
	end = p->tokens[p->ntokens - 1].location;
	if (p->ntokens >= 2 && p->tokens[p->ntokens - 2].kind == ';' && p->ntokens - 2 > p->pos)
		end = p->tokens[p->ntokens - 2].location;
	while (end > st->query_location && isspace((unsigned char)p->text[end - 1]))
		end--;
	st->query = pnstrdup(p->text + st->query_location, end - st->query_location);
}

static void parse_drop(GtParser *p, GtStatement *st) {
	st->kind = GT_DROP_FLOW;
	expect_word(p, "flow", "FLOW after DROP");
	if (accept_word(p, "if")) {
		expect_word(p, "exists", "EXISTS after IF");
		st->if_exists = true;
	}
	st->flow_name = parse_flow_name(p, &st->flow_name_location);
	expect_end(p);
}

/* ADMIN FLUSH_FLOW('name'): the name is a string, as GreptimeDB writes it. */
static void parse_admin(GtParser *p, GtStatement *st) {
	GtToken *t;

	st->kind = GT_FLUSH_FLOW;
	expect_word(p, "flush_flow", "FLUSH_FLOW after ADMIN");
	expect_char(p, '(', "( after FLUSH_FLOW");
	t = next(p);
	if (t->kind != SCONST)
		syntax_error(p, t, "the flow's name as a string constant");
	st->flow_name = t->str;
	st->flow_name_location = t->location;
	expect_char(p, ')', ") after the flow's name");
	expect_end(p);
}

static void parse_show(GtParser *p, GtStatement *st) {
	if (accept_word(p, "flows")) {
		st->kind = GT_SHOW_FLOWS;
		if (accept_word(p, "like")) {
			GtToken *t = next(p);

			if (t->kind != SCONST)
				syntax_error(p, t, "a string constant after LIKE");
			st->like_pattern = t->str;
		}
	} else if (accept_word(p, "create")) {
		st->kind = GT_SHOW_CREATE_FLOW;
		expect_word(p, "flow", "FLOW after SHOW CREATE");
		st->flow_name = parse_flow_name(p, &st->flow_name_location);
	} else
		syntax_error(p, peek(p), "FLOWS or CREATE FLOW after SHOW");
	expect_end(p);
}

GtStatement *fn_gt_parse(const char *statement) {
	GtStatement *st = palloc0(sizeof(GtStatement));
	GtParser p;
	GtErrorScope scope;

	fn_gt_error_scope_push(&scope, statement, -1); /* the scanner's own errors */
	p.text = normalize(statement);
	p.shown = statement;
	p.tokens = tokenize(p.text, &p.ntokens);
	p.pos = 0;
	st->text = p.text;
	st->shown = statement;
	if (accept_word(&p, "create"))
		parse_create(&p, st);
	else if (accept_word(&p, "drop"))
		parse_drop(&p, st);
	else if (accept_word(&p, "admin"))
		parse_admin(&p, st);
	else if (accept_word(&p, "show"))
		parse_show(&p, st);
	else
		syntax_error(&p, peek(&p),
		             "CREATE FLOW, DROP FLOW, ADMIN FLUSH_FLOW, SHOW FLOWS or SHOW CREATE FLOW");
	fn_gt_error_scope_pop(&scope);
	return st;
}
