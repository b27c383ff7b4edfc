/*
 * determinism.c: refuses flow queries whose answer can change without a write to
 * the source. A flow refreshes a window only when rows of it are written, so the
 * sink stays exact only if the query gives the same answer for the same rows at any
 * time (docs/internals.md §2, invariant 1). Every refresh and the initial fill run
 * under the settings fn_pin_deparse_settings pins (TimeZone: the flow's, DateStyle,
 * IntervalStyle, extra_float_digits, search_path); nothing else is fixed.
 *
 * Every function the query calls is checked: called by name, behind an operator, a
 * cast (a type's text input and output functions) or an aggregate (and the
 * aggregate's support functions: a user-defined aggregate is IMMUTABLE whatever its
 * transition function does), and the grouping and ordering operators.
 *   IMMUTABLE: accepted (a user-defined function declared IMMUTABLE is taken at its
 *     word, as PostgreSQL does for an index expression);
 *   VOLATILE: refused;
 *   STABLE: refused unless it is one of PostgreSQL's own on the allow-list below
 *     (stable_allowed), under the condition the list gives. The list fails closed:
 *     a STABLE function nobody reviewed is refused.
 * Also refused: SQL value functions (CURRENT_DATE, CURRENT_USER, ...), system
 * columns other than tableoid, TABLESAMPLE, parameters, XML expressions.
 *
 * Row-level security policies are not checked: they are the owner's to keep
 * (docs/reference.md, "Known limits").
 */
#include "flownode.h"

#include "query/determinism.h"

#include "access/htup_details.h"
#include "access/sysattr.h"
#include "access/transam.h"
#include "catalog/heap.h"
#include "catalog/dependency.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/parse_coerce.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/syscache.h"
#include "utils/typcache.h"

/* Why one of PostgreSQL's STABLE functions may still be used in a flow query. */
typedef enum StableUse {
	/* its result depends only on its arguments and on settings every refresh pins */
	USE_PINNED,
	/* it turns its arguments into text or json with their types' output functions
	 * (STABLE because some of those are: dates): accepted when every argument's type
	 * turns into text by a function accepted here (checked down arrays, composites,
	 * ranges and domains) */
	USE_TEXT_OF_ARGS,
	/* to_char over a date or time: a constant template without TM (localized names
	 * follow lc_time, which a flow does not pin) */
	USE_DATETIME_TEMPLATE,
	/* to_char over a number: a constant template without D, G, L or S (the locale's
	 * decimal point, group separator, currency and sign follow lc_numeric and
	 * lc_monetary) */
	USE_NUMBER_TEMPLATE,
} StableUse;

typedef struct StableAllowed {
	Oid fn;
	StableUse use;
} StableAllowed;

/*
 * PostgreSQL's STABLE functions (SELECT oid::regprocedure FROM pg_proc WHERE
 * provolatile = 's' AND pronamespace = 'pg_catalog'::regnamespace: 619 in 15) that a
 * flow may use. Everything else is refused, among them: the clock (now,
 * current_timestamp, transaction_timestamp, statement_timestamp, one-argument age,
 * timetz(time) and timezone(text, timetz), which take today's offset); the text
 * input of date, time, timetz, timestamp and timestamptz (they read 'now', 'today',
 * 'tomorrow'); the session (current_user, session_user, current_schema(s),
 * current_setting, inet_client_*, pg_backend_pid, txid_current, pg_current_xact_id);
 * the catalogs (has_*_privilege, pg_has_role, to_reg*, the reg* types' input and
 * output, enum labels, which ALTER TYPE ... RENAME VALUE changes, pg_get_*,
 * pg_typeof, format_type, obj_description); current_database (ALTER DATABASE ...
 * RENAME changes it) and version (a minor upgrade changes it), which nothing in an
 * aggregation needs; settings a flow does not pin (money: lc_monetary; xml input:
 * xmloption; text search without a configuration: default_text_search_config;
 * convert_from/convert_to: the encoding conversions of the catalog); statistics
 * (pg_stat_*).
 */
static const StableAllowed stable_allowed[] = {
    /* the time windows: date_trunc over a timestamptz, in the flow's zone (pinned) or
     * in the zone the call names (an abbreviation among them follows
     * timezone_abbreviations, as the IMMUTABLE AT TIME ZONE does) */
    {F_DATE_TRUNC_TEXT_TIMESTAMPTZ, USE_PINNED},
    {F_DATE_TRUNC_TEXT_TIMESTAMPTZ_TEXT, USE_PINNED},
    /* fields of a timestamptz in TimeZone */
    {F_DATE_PART_TEXT_TIMESTAMPTZ, USE_PINNED},
    {F_EXTRACT_TEXT_TIMESTAMPTZ, USE_PINNED},
    /* conversions between timestamptz and date, time, timetz and timestamp, in
     * TimeZone (timetz takes the offset of that instant, not today's) */
    {F_DATE_TIMESTAMPTZ, USE_PINNED},
    {F_TIMESTAMPTZ_DATE, USE_PINNED},
    {F_TIMESTAMPTZ_DATE_TIME, USE_PINNED},
    {F_TIMESTAMPTZ_TIMESTAMP, USE_PINNED},
    {F_TIMESTAMP_TIMESTAMPTZ, USE_PINNED},
    {F_TIME_TIMESTAMPTZ, USE_PINNED},
    {F_TIMETZ_TIMESTAMPTZ, USE_PINNED},
    {F_MAKE_TIMESTAMPTZ_INT4_INT4_INT4_INT4_INT4_FLOAT8, USE_PINNED},
    {F_MAKE_TIMESTAMPTZ_INT4_INT4_INT4_INT4_INT4_FLOAT8_TEXT, USE_PINNED},
    /* timestamptz plus or minus an interval: a day's length in TimeZone */
    {F_TIMESTAMPTZ_PL_INTERVAL, USE_PINNED},
    {F_INTERVAL_PL_TIMESTAMPTZ, USE_PINNED},
    {F_TIMESTAMPTZ_MI_INTERVAL, USE_PINNED},
    {F_OVERLAPS_TIMESTAMPTZ_INTERVAL_TIMESTAMPTZ_INTERVAL, USE_PINNED},
    {F_OVERLAPS_TIMESTAMPTZ_TIMESTAMPTZ_TIMESTAMPTZ_INTERVAL, USE_PINNED},
    {F_OVERLAPS_TIMESTAMPTZ_INTERVAL_TIMESTAMPTZ_TIMESTAMPTZ, USE_PINNED},
    /* comparisons of a timestamptz with a date or a timestamp, in TimeZone */
    {F_DATE_EQ_TIMESTAMPTZ, USE_PINNED},
    {F_DATE_NE_TIMESTAMPTZ, USE_PINNED},
    {F_DATE_LT_TIMESTAMPTZ, USE_PINNED},
    {F_DATE_LE_TIMESTAMPTZ, USE_PINNED},
    {F_DATE_GT_TIMESTAMPTZ, USE_PINNED},
    {F_DATE_GE_TIMESTAMPTZ, USE_PINNED},
    {F_DATE_CMP_TIMESTAMPTZ, USE_PINNED},
    {F_TIMESTAMPTZ_EQ_DATE, USE_PINNED},
    {F_TIMESTAMPTZ_NE_DATE, USE_PINNED},
    {F_TIMESTAMPTZ_LT_DATE, USE_PINNED},
    {F_TIMESTAMPTZ_LE_DATE, USE_PINNED},
    {F_TIMESTAMPTZ_GT_DATE, USE_PINNED},
    {F_TIMESTAMPTZ_GE_DATE, USE_PINNED},
    {F_TIMESTAMPTZ_CMP_DATE, USE_PINNED},
    {F_TIMESTAMP_EQ_TIMESTAMPTZ, USE_PINNED},
    {F_TIMESTAMP_NE_TIMESTAMPTZ, USE_PINNED},
    {F_TIMESTAMP_LT_TIMESTAMPTZ, USE_PINNED},
    {F_TIMESTAMP_LE_TIMESTAMPTZ, USE_PINNED},
    {F_TIMESTAMP_GT_TIMESTAMPTZ, USE_PINNED},
    {F_TIMESTAMP_GE_TIMESTAMPTZ, USE_PINNED},
    {F_TIMESTAMP_CMP_TIMESTAMPTZ, USE_PINNED},
    {F_TIMESTAMPTZ_EQ_TIMESTAMP, USE_PINNED},
    {F_TIMESTAMPTZ_NE_TIMESTAMP, USE_PINNED},
    {F_TIMESTAMPTZ_LT_TIMESTAMP, USE_PINNED},
    {F_TIMESTAMPTZ_LE_TIMESTAMP, USE_PINNED},
    {F_TIMESTAMPTZ_GT_TIMESTAMP, USE_PINNED},
    {F_TIMESTAMPTZ_GE_TIMESTAMP, USE_PINNED},
    {F_TIMESTAMPTZ_CMP_TIMESTAMP, USE_PINNED},
    /* text output of dates, times and intervals: DateStyle, IntervalStyle and
     * TimeZone; text input of an interval: IntervalStyle (it reads no 'now') */
    {F_DATE_OUT, USE_PINNED},
    {F_TIMESTAMP_OUT, USE_PINNED},
    {F_TIMESTAMPTZ_OUT, USE_PINNED},
    {F_INTERVAL_OUT, USE_PINNED},
    {F_INTERVAL_IN, USE_PINNED},
    /* text and json built from values of any type (json writes dates in ISO, a
     * timestamptz in TimeZone); aggregates and their support functions */
    {F_TO_JSON, USE_TEXT_OF_ARGS},
    {F_TO_JSONB, USE_TEXT_OF_ARGS},
    {F_ROW_TO_JSON_RECORD, USE_TEXT_OF_ARGS},
    {F_ROW_TO_JSON_RECORD_BOOL, USE_TEXT_OF_ARGS},
    {F_ARRAY_TO_JSON_ANYARRAY, USE_TEXT_OF_ARGS},
    {F_ARRAY_TO_JSON_ANYARRAY_BOOL, USE_TEXT_OF_ARGS},
    {F_JSON_BUILD_ARRAY_ANY, USE_TEXT_OF_ARGS},
    {F_JSON_BUILD_ARRAY_, USE_TEXT_OF_ARGS},
    {F_JSON_BUILD_OBJECT_ANY, USE_TEXT_OF_ARGS},
    {F_JSON_BUILD_OBJECT_, USE_TEXT_OF_ARGS},
    {F_JSONB_BUILD_ARRAY_ANY, USE_TEXT_OF_ARGS},
    {F_JSONB_BUILD_ARRAY_, USE_TEXT_OF_ARGS},
    {F_JSONB_BUILD_OBJECT_ANY, USE_TEXT_OF_ARGS},
    {F_JSONB_BUILD_OBJECT_, USE_TEXT_OF_ARGS},
    {F_JSON_AGG, USE_TEXT_OF_ARGS},
    {F_JSON_AGG_TRANSFN, USE_TEXT_OF_ARGS},
    {F_JSON_OBJECT_AGG, USE_TEXT_OF_ARGS},
    {F_JSON_OBJECT_AGG_TRANSFN, USE_TEXT_OF_ARGS},
    {F_JSONB_AGG, USE_TEXT_OF_ARGS},
    {F_JSONB_AGG_TRANSFN, USE_TEXT_OF_ARGS},
    {F_JSONB_AGG_FINALFN, USE_TEXT_OF_ARGS},
    {F_JSONB_OBJECT_AGG_TRANSFN, USE_TEXT_OF_ARGS},
    {F_JSONB_OBJECT_AGG_FINALFN, USE_TEXT_OF_ARGS},
    {F_CONCAT, USE_TEXT_OF_ARGS},
    {F_CONCAT_WS, USE_TEXT_OF_ARGS},
    {F_ANYTEXTCAT, USE_TEXT_OF_ARGS}, /* anything || text */
    {F_TEXTANYCAT, USE_TEXT_OF_ARGS}, /* text || anything */
    {F_ARRAY_TO_STRING_ANYARRAY_TEXT, USE_TEXT_OF_ARGS},
    {F_ARRAY_TO_STRING_ANYARRAY_TEXT_TEXT, USE_TEXT_OF_ARGS},
    /* to_char with a template that names no locale-dependent field */
    {F_TO_CHAR_TIMESTAMP_TEXT, USE_DATETIME_TEMPLATE},
    {F_TO_CHAR_TIMESTAMPTZ_TEXT, USE_DATETIME_TEMPLATE},
    {F_TO_CHAR_INTERVAL_TEXT, USE_DATETIME_TEMPLATE},
    {F_TO_CHAR_INT4_TEXT, USE_NUMBER_TEMPLATE},
    {F_TO_CHAR_INT8_TEXT, USE_NUMBER_TEMPLATE},
    {F_TO_CHAR_FLOAT4_TEXT, USE_NUMBER_TEMPLATE},
    {F_TO_CHAR_FLOAT8_TEXT, USE_NUMBER_TEMPLATE},
    {F_TO_CHAR_NUMERIC_TEXT, USE_NUMBER_TEMPLATE},
};

#define HINT_ROWS                                                                                            \
	"A flow's result must depend only on the rows of its source: store such a value in the source when "     \
	"you write it; to keep only recent windows, filter when you read the sink (expire_after stops "          \
	"refreshing old ones)."
#define HINT_USER_FUNCTION                                                                                   \
	"Declare it IMMUTABLE if its result depends only on its arguments; if it reads other tables, store its " \
	"result in the source when you write it."
#define DETAIL_STABLE                                                                                        \
	"%s is STABLE: besides its arguments it reads the clock, the session, the catalogs or a setting a "      \
	"flow does not pin, and a flow refreshes a window only when rows of it are written."

typedef struct Walk {
	const char *sql;   /* the query's text, for error positions (NULL: a view's) */
	bool refuse_clock; /* a view's: now() has no meaning there */
} Walk;

/* What turns a value into text (or back) in a way that can change: the type and the
 * function, InvalidOid for a record whose columns are unknown. */
typedef struct TextProblem {
	Oid type;
	Oid fn;
} TextProblem;

static const StableAllowed *find_allowed(Oid fn) {
	for (size_t i = 0; i < lengthof(stable_allowed); i++)
		if (stable_allowed[i].fn == fn)
			return &stable_allowed[i];
	return NULL;
}

static int cursor_position(const Walk *w, int location) {
	if (location < 0 || w->sql == NULL)
		return 0;
	return errposition(pg_mbstrlen_with_len(w->sql, location) + 1);
}

/* Refuses the query: errmsg(...) and any errdetail(...) and errhint(...), each written
 * whole at the call, the cursor at `location` in the flow query. */
#define REFUSE(w, location, ...)                                                                             \
	ereport(ERROR, (errcode(ERRCODE_FEATURE_NOT_SUPPORTED), __VA_ARGS__, cursor_position(w, location)))

/* How what refuse_function names (`via`) uses the function. */
typedef enum ViaLink {
	VIA_NONE,        /* the query calls it by name */
	VIA_CALLS,       /* an operator or an aggregate calls it */
	VIA_READS_TEXT,  /* it reads a type from text for `via` */
	VIA_WRITES_TEXT, /* it turns a type into text for `via` */
} ViaLink;

/* The message of a function refused: it is not IMMUTABLE (a user's function), or it
 * can change without a write, named by itself or through what uses it. */
static int refused_function_message(ViaLink link, const char *via, const char *type, const char *name,
                                    bool not_immutable) {
	if (not_immutable)
		switch (link) {
		case VIA_NONE:
			return errmsg("invalid flow query: function %s is not IMMUTABLE", name);
		case VIA_CALLS:
			return errmsg("invalid flow query: function %s, called by %s, is not IMMUTABLE", name, via);
		case VIA_READS_TEXT:
			return errmsg("invalid flow query: function %s, which reads type %s from text for %s, is not "
			              "IMMUTABLE",
			              name, type, via);
		case VIA_WRITES_TEXT:
			return errmsg("invalid flow query: function %s, which turns type %s into text for %s, is not "
			              "IMMUTABLE",
			              name, type, via);
		}
	switch (link) {
	case VIA_NONE:
		return errmsg("invalid flow query: function %s can change without a write to the source", name);
	case VIA_CALLS:
		return errmsg("invalid flow query: function %s, called by %s, can change without a write to the "
		              "source",
		              name, via);
	case VIA_READS_TEXT:
		return errmsg("invalid flow query: function %s, which reads type %s from text for %s, can change "
		              "without a write to the source",
		              name, type, via);
	case VIA_WRITES_TEXT:
		return errmsg("invalid flow query: function %s, which turns type %s into text for %s, can change "
		              "without a write to the source",
		              name, type, via);
	}
	return 0;
}

/*
 * Refuses function `fn` (VOLATILE, or STABLE and not allowed), used by `via` ("operator
 * ~~~(text,text)", "the cast from mood to text"; NULL: called by name) as `link`
 * says, for type `type` (the text links only).
 */
pg_noreturn static void refuse_function(const Walk *w, int location, const char *via, ViaLink link,
                                        const char *type, Oid fn);
static void refuse_function(const Walk *w, int location, const char *via, ViaLink link, const char *type,
                            Oid fn) {
	char *name = format_procedure(fn);
	char vol = func_volatile(fn);

	if (fn >= FirstGenbkiObjectId)
		REFUSE(
		    w, location, refused_function_message(link, via, type, name, true),
		    vol == PROVOLATILE_VOLATILE
		        ? errdetail("A flow refreshes a window only when rows of it are written, so every function "
		                    "it calls must give the same result for the same arguments at any time; %s is "
		                    "VOLATILE.",
		                    name)
		        : errdetail("A flow refreshes a window only when rows of it are written, so every function "
		                    "it calls must give the same result for the same arguments at any time; %s is "
		                    "STABLE.",
		                    name),
		    errhint(HINT_USER_FUNCTION));
	switch (fn) {
	case F_DATE_IN:
	case F_TIME_IN:
	case F_TIMETZ_IN:
	case F_TIMESTAMP_IN:
	case F_TIMESTAMPTZ_IN:
		REFUSE(w, location, refused_function_message(link, via, type, name, false),
		       errdetail("%s reads 'now', 'today', 'tomorrow' and 'yesterday' as the current time.", name),
		       errhint("Store the value in the source with its own type, or write a constant as a typed "
		               "literal (timestamptz '2024-01-01 00:00'), which is read once, when the flow is "
		               "created."));
		break;
	default:
		break;
	}
	REFUSE(w, location, refused_function_message(link, via, type, name, false),
	       vol == PROVOLATILE_VOLATILE
	           ? errdetail("%s is VOLATILE: its result can change from one call to the next.", name)
	           : errdetail(DETAIL_STABLE, name),
	       errhint(HINT_ROWS));
}

/* A function that must be acceptable on its own (a type's input or output, a cast
 * to json): IMMUTABLE, or STABLE under pinned settings only. */
static bool function_fine_alone(Oid fn) {
	const StableAllowed *allowed;

	if (func_volatile(fn) == PROVOLATILE_IMMUTABLE)
		return true;
	allowed = find_allowed(fn);
	return allowed != NULL && allowed->use == USE_PINNED;
}

/*
 * Whether values of `type` turn into text (input: are read from text) by functions
 * that depend on the value alone: down domains, arrays, composites, ranges and
 * multiranges to base types, whose function must be fine alone. For a user-defined
 * base type, json uses its cast to json when there is one: that cast too.
 */
static bool type_text_fine(Oid type, bool input, TextProblem *problem) {
	HeapTuple tup;
	Form_pg_type t;
	char typtype;
	Oid elem, relid, fn;
	bool true_array;

	check_stack_depth();
	tup = SearchSysCache1(TYPEOID, ObjectIdGetDatum(type));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "flownode: cache lookup failed for type %u", type);
	t = (Form_pg_type)GETSTRUCT(tup);
	typtype = t->typtype;
	elem = typtype == TYPTYPE_DOMAIN ? t->typbasetype : t->typelem;
	relid = t->typrelid;
	true_array = IsTrueArrayType(t);
	fn = input ? t->typinput : t->typoutput;
	ReleaseSysCache(tup);

	if (typtype == TYPTYPE_DOMAIN || true_array)
		return type_text_fine(elem, input, problem);
	if (typtype == TYPTYPE_RANGE)
		return type_text_fine(get_range_subtype(type), input, problem);
	if (typtype == TYPTYPE_MULTIRANGE)
		return type_text_fine(get_multirange_range(type), input, problem);
	if (typtype == TYPTYPE_COMPOSITE && OidIsValid(relid)) {
		TupleDesc desc = lookup_rowtype_tupdesc(type, -1);
		bool fine = true;

		for (int i = 0; fine && i < desc->natts; i++)
			if (!TupleDescAttr(desc, i)->attisdropped)
				fine = type_text_fine(TupleDescAttr(desc, i)->atttypid, input, problem);
		ReleaseTupleDesc(desc);
		return fine;
	}
	problem->type = type;
	problem->fn = fn;
	if (typtype == TYPTYPE_PSEUDO) { /* a record of unknown columns, anyelement... */
		problem->type = InvalidOid;
		return false;
	}
	if (!function_fine_alone(fn))
		return false;
	if (!input && type >= FirstNormalObjectId) {
		Oid cast = InvalidOid;

		if (find_coercion_pathway(JSONOID, type, COERCION_EXPLICIT, &cast) == COERCION_PATH_FUNC &&
		    !function_fine_alone(cast)) {
			problem->fn = cast;
			return false;
		}
	}
	return true;
}

/* type_text_fine for an expression's value; a ROW(...) is checked column by column. */
static bool expr_text_fine(Node *expr, TextProblem *problem) {
	while (IsA(expr, NamedArgExpr))
		expr = (Node *)((NamedArgExpr *)expr)->arg;
	if (IsA(expr, RowExpr) && exprType(expr) == RECORDOID) {
		ListCell *lc;

		foreach (lc, ((RowExpr *)expr)->args)
			if (!expr_text_fine(lfirst(lc), problem))
				return false;
		return true;
	}
	return type_text_fine(exprType(expr), false, problem);
}

/* Refuses what `via` does with a value's text (see TextProblem). */
pg_noreturn static void refuse_text(const Walk *w, int location, const char *via, const TextProblem *problem,
                                    bool input);
static void refuse_text(const Walk *w, int location, const char *via, const TextProblem *problem,
                        bool input) {
	if (!OidIsValid(problem->type))
		REFUSE(w, location,
		       errmsg("invalid flow query: a record of unknown columns is turned into text by %s", via),
		       errdetail("Its columns' types, and so whether their text depends on the values alone, are not "
		                 "known."),
		       errhint("Aggregate named columns, or a row of the source table."));
	refuse_function(w, location, via, input ? VIA_READS_TEXT : VIA_WRITES_TEXT, format_type_be(problem->type),
	                problem->fn);
}

/* Whether a template names a field that follows a locale setting: TM (names in
 * lc_time) for dates and times; D, G, L, S (lc_numeric, lc_monetary) for numbers,
 * but not in SG, SP and PL. Quoted text and escaped characters are skipped. */
static bool template_localized(const char *tmpl, bool numbers) {
	bool quoted = false;

	for (const char *p = tmpl; *p; p++) {
		char c = pg_ascii_tolower((unsigned char)*p);
		char next = pg_ascii_tolower((unsigned char)p[1]);

		if (*p == '\\' && p[1] != '\0') {
			p++;
			continue;
		}
		if (*p == '"')
			quoted = !quoted;
		if (quoted)
			continue;
		if (!numbers && c == 't' && next == 'm')
			return true;
		if (numbers && ((c == 's' && (next == 'g' || next == 'p')) || (c == 'p' && next == 'l'))) {
			p++;
			continue;
		}
		if (numbers && (c == 'd' || c == 'g' || c == 'l' || c == 's'))
			return true;
	}
	return false;
}

static void check_template(const Walk *w, int location, const char *what, Oid fn, List *args, bool numbers) {
	Node *arg = args != NIL && list_length(args) >= 2 ? (Node *)lsecond(args) : NULL;
	Node *folded;

	while (arg != NULL && IsA(arg, NamedArgExpr))
		arg = (Node *)((NamedArgExpr *)arg)->arg;
	folded = arg != NULL ? eval_const_expressions(NULL, arg) : NULL;
	while (folded != NULL && (IsA(folded, RelabelType) || IsA(folded, CollateExpr)))
		folded = IsA(folded, RelabelType) ? (Node *)((RelabelType *)folded)->arg
		                                  : (Node *)((CollateExpr *)folded)->arg;
	if (folded == NULL || !IsA(folded, Const))
		REFUSE(w, location, errmsg("invalid flow query: the template of %s must be a constant", what),
		       errdetail("Whether a template names a field that follows a setting a flow does not pin "
		                 "(lc_time, lc_numeric, lc_monetary) can be checked only on a constant."));
	if (((Const *)folded)->constisnull)
		return;
	if (!template_localized(TextDatumGetCString(((Const *)folded)->constvalue), numbers))
		return;
	if (numbers)
		REFUSE(w, location,
		       errmsg("invalid flow query: the template of %s uses D, G, L or S, which follow lc_numeric and "
		              "lc_monetary",
		              what),
		       errdetail("%s then depends on a setting a flow does not pin.", format_procedure(fn)),
		       errhint("Write '.' and ',' instead of D and G, and MI, PL or SG instead of S."));
	REFUSE(w, location, errmsg("invalid flow query: the template of %s uses TM, which follows lc_time", what),
	       errdetail("%s then depends on a setting a flow does not pin.", format_procedure(fn)),
	       errhint("Leave out TM: day and month names are then in English."));
}

/*
 * Checks function `fn`, called with `args` by `via` ("operator ...", "aggregate
 * ..."; NULL when called by name).
 */
static void check_function(const Walk *w, int location, const char *via, Oid fn, List *args) {
	const StableAllowed *allowed;
	const char *subject;
	ListCell *lc;

	if (func_volatile(fn) == PROVOLATILE_IMMUTABLE)
		return;
	allowed = find_allowed(fn);
	if (allowed == NULL || func_volatile(fn) != PROVOLATILE_STABLE)
		refuse_function(w, location, via, via != NULL ? VIA_CALLS : VIA_NONE, NULL, fn);
	subject = via ? via : psprintf("function %s", format_procedure(fn));
	switch (allowed->use) {
	case USE_PINNED:
		return;
	case USE_TEXT_OF_ARGS:
		foreach (lc, args) {
			TextProblem problem;

			if (!expr_text_fine(lfirst(lc), &problem))
				refuse_text(w, location, subject, &problem, false);
		}
		return;
	case USE_DATETIME_TEMPLATE:
	case USE_NUMBER_TEMPLATE:
		check_template(w, location, psprintf("function %s", format_procedure(fn)), fn, args,
		               allowed->use == USE_NUMBER_TEMPLATE);
		return;
	}
}

static void check_operator(const Walk *w, int location, Oid opno, Oid fn, List *args) {
	check_function(w, location, psprintf("operator %s", format_operator(opno)), fn, args);
}

/* An aggregate and its support functions, all with the aggregate's arguments. */
static void check_aggregate(const Walk *w, Aggref *agg) {
	char *what = psprintf("aggregate %s", format_procedure(agg->aggfnoid));
	List *args = NIL;
	HeapTuple tup;
	Form_pg_aggregate form;
	Oid support[5];
	ListCell *lc;

	foreach (lc, agg->aggdirectargs)
		args = lappend(args, lfirst(lc));
	foreach (lc, agg->args)
		args = lappend(args, lfirst_node(TargetEntry, lc)->expr);
	check_function(w, agg->location, NULL, agg->aggfnoid, args);

	/* An installed extension's aggregate is trusted as PostgreSQL trusts it, by its
	 * own volatility: extensions such as hll and tdigest leave their support
	 * functions at the default VOLATILE although they depend only on their
	 * arguments. Aggregates defined in the database are checked through. */
	if (OidIsValid(getExtensionOfObject(ProcedureRelationId, agg->aggfnoid)))
		return;
	tup = SearchSysCache1(AGGFNOID, ObjectIdGetDatum(agg->aggfnoid));
	if (!HeapTupleIsValid(tup))
		elog(ERROR, "flownode: cache lookup failed for aggregate %u", agg->aggfnoid);
	form = (Form_pg_aggregate)GETSTRUCT(tup);
	support[0] = form->aggtransfn;
	support[1] = form->aggfinalfn;
	support[2] = form->aggcombinefn;
	support[3] = form->aggserialfn;
	support[4] = form->aggdeserialfn;
	ReleaseSysCache(tup);
	for (size_t i = 0; i < lengthof(support); i++)
		if (OidIsValid(support[i]))
			check_function(w, agg->location, what, support[i], args);
}

static const char *sql_value_name(SQLValueFunction *svf) {
	switch (svf->op) {
	case SVFOP_CURRENT_DATE:
		return "CURRENT_DATE";
	case SVFOP_CURRENT_TIME:
	case SVFOP_CURRENT_TIME_N:
		return "CURRENT_TIME";
	case SVFOP_CURRENT_TIMESTAMP:
	case SVFOP_CURRENT_TIMESTAMP_N:
		return "CURRENT_TIMESTAMP";
	case SVFOP_LOCALTIME:
	case SVFOP_LOCALTIME_N:
		return "LOCALTIME";
	case SVFOP_LOCALTIMESTAMP:
	case SVFOP_LOCALTIMESTAMP_N:
		return "LOCALTIMESTAMP";
	case SVFOP_CURRENT_ROLE:
		return "CURRENT_ROLE";
	case SVFOP_CURRENT_USER:
		return "CURRENT_USER";
	case SVFOP_USER:
		return "USER";
	case SVFOP_SESSION_USER:
		return "SESSION_USER";
	case SVFOP_CURRENT_CATALOG:
		return "CURRENT_CATALOG";
	case SVFOP_CURRENT_SCHEMA:
		return "CURRENT_SCHEMA";
	}
	return "a SQL value function";
}

bool fn_is_clock_now(Node *node) {
	if (node == NULL)
		return false;
	if (IsA(node, FuncExpr))
		return ((FuncExpr *)node)->funcid == F_NOW || ((FuncExpr *)node)->funcid == F_TRANSACTION_TIMESTAMP;
	if (IsA(node, SQLValueFunction))
		return ((SQLValueFunction *)node)->op == SVFOP_CURRENT_TIMESTAMP ||
		       ((SQLValueFunction *)node)->op == SVFOP_LOCALTIMESTAMP;
	return false;
}

int fn_clock_now_location(Node *node) {
	return IsA(node, FuncExpr) ? ((FuncExpr *)node)->location : ((SQLValueFunction *)node)->location;
}

/* A cast through text (CoerceViaIO): both types' text forms must be fixed. */
static void check_io_cast(Walk *w, CoerceViaIO *io) {
	char *what = psprintf("the cast from %s to %s", format_type_be(exprType((Node *)io->arg)),
	                      format_type_be(io->resulttype));
	TextProblem problem;

	if (!expr_text_fine((Node *)io->arg, &problem))
		refuse_text(w, io->location, what, &problem, false);
	if (!type_text_fine(io->resulttype, true, &problem))
		refuse_text(w, io->location, what, &problem, true);
}

/* The constructs refused whatever they call: system columns, SQL value functions,
 * TABLESAMPLE, parameters, sequences, XML expressions. */
static void check_construct(Node *node, Walk *w) {
	switch (nodeTag(node)) {
	case T_Var: {
		Var *var = (Var *)node;

		if (var->varattno < 0 && var->varattno != TableOidAttributeNumber)
			REFUSE(w, var->location,
			       errmsg("invalid flow query: system column %s can change without a write to the source",
			              NameStr(SystemAttributeDefinition(var->varattno)->attname)),
			       errdetail("VACUUM, row locks and table rewrites change it while the row's values stay."),
			       errhint("Use the table's own columns."));
		break;
	}
	case T_SQLValueFunction:
		REFUSE(
		    w, ((SQLValueFunction *)node)->location,
		    errmsg("invalid flow query: SQL value function %s can change without a write to the source",
		           sql_value_name((SQLValueFunction *)node)),
		    errdetail("It follows the clock or the session, and a flow refreshes a window only when rows of "
		              "it are written."),
		    errhint(HINT_ROWS));
		break;
	case T_TableSampleClause:
		REFUSE(w, -1, errmsg("invalid flow query: TABLESAMPLE can change without a write to the source"),
		       errdetail("Each refresh would read another sample of the rows."),
		       errhint("Aggregate every row, or filter on the rows' values."));
		break;
	case T_Param:
		REFUSE(w, ((Param *)node)->location, errmsg("invalid flow query: parameters are not allowed"));
		break;
	case T_NextValueExpr:
		REFUSE(w, -1, errmsg("invalid flow query: sequences are not allowed"), errhint(HINT_ROWS));
		break;
	case T_XmlExpr:
		REFUSE(w, ((XmlExpr *)node)->location,
		       errmsg("invalid flow query: XML expressions are not supported"),
		       errdetail("flownode does not check which of them depend only on their arguments."));
		break;
	default:
		break;
	}
}

/* What a node calls, checked: functions, operators (those of a GROUP BY's or ORDER
 * BY's clause too), aggregates, window functions, casts through text. */
static void check_calls(Node *node, Walk *w) {
	switch (nodeTag(node)) {
	case T_FuncExpr: {
		FuncExpr *fe = (FuncExpr *)node;

		check_function(w, fe->location, NULL, fe->funcid, fe->args);
		break;
	}
	case T_OpExpr:
	case T_DistinctExpr:
	case T_NullIfExpr: {
		OpExpr *op = (OpExpr *)node; /* the three share OpExpr's layout */

		set_opfuncid(op);
		check_operator(w, op->location, op->opno, op->opfuncid, op->args);
		break;
	}
	case T_ScalarArrayOpExpr: {
		ScalarArrayOpExpr *op = (ScalarArrayOpExpr *)node;

		set_sa_opfuncid(op);
		check_operator(w, op->location, op->opno, op->opfuncid, op->args);
		break;
	}
	case T_RowCompareExpr: {
		RowCompareExpr *rc = (RowCompareExpr *)node;
		ListCell *op, *l, *r;

		forthree(op, rc->opnos, l, rc->largs, r, rc->rargs) check_operator(
		    w, -1, lfirst_oid(op), get_opcode(lfirst_oid(op)), list_make2(lfirst(l), lfirst(r)));
		break;
	}
	case T_SortGroupClause: {
		SortGroupClause *sgc = (SortGroupClause *)node;

		if (OidIsValid(sgc->eqop))
			check_operator(w, -1, sgc->eqop, get_opcode(sgc->eqop), NIL);
		if (OidIsValid(sgc->sortop))
			check_operator(w, -1, sgc->sortop, get_opcode(sgc->sortop), NIL);
		break;
	}
	case T_Aggref:
		check_aggregate(w, (Aggref *)node);
		break;
	case T_WindowFunc: {
		WindowFunc *wf = (WindowFunc *)node;

		check_function(w, wf->location, NULL, wf->winfnoid, wf->args);
		break;
	}
	case T_CoerceViaIO:
		check_io_cast(w, (CoerceViaIO *)node);
		break;
	default:
		break;
	}
}

static void check_query(Query *query, Walk *w);

static bool determinism_walker(Node *node, Walk *w) {
	if (node == NULL)
		return false;
	if (IsA(node, Query)) { /* a subquery in FROM, or a view's */
		check_query((Query *)node, w);
		return false;
	}
	if (fn_is_clock_now(node)) {
		if (w->refuse_clock)
			REFUSE(w, fn_clock_now_location(node),
			       errmsg("invalid flow query: a view the flow joins reads the clock"),
			       errdetail("Its rows change as time passes, without a write flownode can see."),
			       errhint("Compare the time column with now() in the flow query's WHERE clause instead."));
		return false; /* where it may be is flow_query.c's to say */
	}
	check_construct(node, w);
	check_calls(node, w);
	return expression_tree_walker(node, determinism_walker, (void *)w);
}

static void check_query(Query *query, Walk *w) {
	(void)query_tree_walker(query, determinism_walker, (void *)w, 0);
	/* the grouping and ordering operators, which query_tree_walker does not visit */
	(void)determinism_walker((Node *)query->groupClause, w);
	(void)determinism_walker((Node *)query->sortClause, w);
}

void fn_check_deterministic(Query *query, const char *sql) {
	Walk w = {.sql = sql, .refuse_clock = false};

	check_query(query, &w);
}

void fn_check_deterministic_view(Query *view_query) {
	Walk w = {.sql = NULL, .refuse_clock = true};

	check_query(view_query, &w);
}
