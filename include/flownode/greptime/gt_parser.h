/*
 * gt_parser.h: GreptimeDB's flow statements (CREATE FLOW, DROP FLOW, ADMIN
 * FLUSH_FLOW, SHOW FLOWS, SHOW CREATE FLOW) read by a recursive-descent parser over
 * PostgreSQL's own scanner (core_yylex): tokens with their kinds and locations, so
 * every error points at the token it is about. The query after AS is not parsed
 * here: it goes to PostgreSQL's parser as it is.
 */
#ifndef FLOWNODE_GT_PARSER_H
#define FLOWNODE_GT_PARSER_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "nodes/pg_list.h"

typedef enum GtStatementKind {
	GT_CREATE_FLOW,
	GT_DROP_FLOW,
	GT_FLUSH_FLOW, /* ADMIN FLUSH_FLOW('name') */
	GT_SHOW_FLOWS,
	GT_SHOW_CREATE_FLOW
} GtStatementKind;

/* A WITH option as written: name = value. */
typedef struct GtOption {
	char *name;
	char *value; /* a string's contents, or the text of an identifier or number */
	int location;
} GtOption;

typedef struct GtStatement {
	GtStatementKind kind;
	const char *text;  /* the statement, with GreptimeDB's spellings PostgreSQL reads otherwise
	                    * normalized at the same positions (gt_parser.c) */
	const char *shown; /* the statement as given, which errors show */
	bool or_replace;
	bool if_not_exists;
	bool if_exists;
	char *flow_name;
	int flow_name_location;
	char *sink_name; /* quoted and qualified as SQL writes a table name */
	int sink_location;
	Interval *expire_after; /* NULL when absent */
	int expire_location;
	Interval *eval_interval;
	int eval_location;
	char *comment;
	List *options; /* GtOption * */
	char *query;   /* the text after AS, without a final semicolon */
	int query_location;
	char *like_pattern; /* SHOW FLOWS LIKE '...', NULL when absent */
} GtStatement;

/* Parses one statement; ERROR at the offending token. */
extern GtStatement *fn_gt_parse(const char *statement);

/* Errors raised while `statement` is being run point into it: an errposition
 * (the scanner's) becomes a position in it; an error without any position points at
 * byte `location` when it is not -1 (the token a conversion reads). */
typedef struct GtErrorScope {
	ErrorContextCallback callback;
	const char *statement;
	int location;
} GtErrorScope;

extern void fn_gt_error_scope_push(GtErrorScope *scope, const char *statement, int location);
extern void fn_gt_error_scope_pop(GtErrorScope *scope);
/* An ERROR's cursor at byte `location` of the statement. */
extern int fn_gt_errposition(const char *statement, int location);

#endif
