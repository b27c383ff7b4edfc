/*
 * pg_util.c: small helpers over PostgreSQL shared by every layer.
 */
#include "pgutil/pg_util.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_am.h"
#include "catalog/pg_index.h"
#include "catalog/pg_subscription.h"
#include "catalog/pg_subscription_rel.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/catcache.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/syscache.h"

void fn_spi_begin_as(SpiAs *scope, Oid role, int sec_flags) {
	GetUserIdAndSecContext(&scope->save_userid, &scope->save_sec);
	SetUserIdAndSecContext(role, scope->save_sec | SECURITY_LOCAL_USERID_CHANGE | sec_flags);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "flownode: SPI_connect failed");
}

void fn_spi_end(SpiAs *scope) {
	SPI_finish();
	SetUserIdAndSecContext(scope->save_userid, scope->save_sec);
}

char *fn_qualified_relname(Oid relid) {
	char *nsp = get_namespace_name(get_rel_namespace(relid));
	char *rel = get_rel_name(relid);

	if (nsp == NULL || rel == NULL)
		ereport(ERROR,
		        (errcode(ERRCODE_UNDEFINED_TABLE), errmsg("relation with OID %u does not exist", relid)));
	return quote_qualified_identifier(nsp, rel);
}

char *fn_text_arg(FunctionCallInfo fcinfo, int argno, const char *argname) {
	char *s;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
		        (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("argument %s must not be NULL", argname)));
	s = text_to_cstring(PG_GETARG_TEXT_PP(argno));
	if (s[0] == '\0')
		ereport(ERROR,
		        (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("argument %s must not be empty", argname)));
	return s;
}

int64 fn_interval_usec(const Interval *iv) {
	return iv->time + (int64)iv->day * USECS_PER_DAY + (int64)iv->month * DAYS_PER_MONTH * USECS_PER_DAY;
}

static Oid index_am(Oid indexoid) {
	HeapTuple tup = SearchSysCache1(RELOID, ObjectIdGetDatum(indexoid));
	Oid am = InvalidOid;

	if (HeapTupleIsValid(tup)) {
		am = ((Form_pg_class)GETSTRUCT(tup))->relam;
		ReleaseSysCache(tup);
	}
	return am;
}

bool fn_btree_index_leads_with(Oid relid, AttrNumber attnum) {
	Relation rel = table_open(relid, AccessShareLock);
	List *indexes = RelationGetIndexList(rel);
	ListCell *lc;
	bool found = false;

	foreach (lc, indexes) {
		HeapTuple tup = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(lfirst_oid(lc)));

		if (!HeapTupleIsValid(tup))
			continue;
		/* a partial index serves only some ranges; an invalid one none */
		found |= ((Form_pg_index)GETSTRUCT(tup))->indkey.values[0] == attnum &&
		         ((Form_pg_index)GETSTRUCT(tup))->indisvalid &&
		         heap_attisnull(tup, Anum_pg_index_indpred, NULL) && index_am(lfirst_oid(lc)) == BTREE_AM_OID;
		ReleaseSysCache(tup);
	}
	table_close(rel, AccessShareLock);
	return found;
}

TimestampTz fn_scheduled_time(TimestampTz now, const Interval *eval_interval) {
	const int64 unix_epoch = (int64)(UNIX_EPOCH_JDATE - POSTGRES_EPOCH_JDATE) * USECS_PER_DAY;
	int64 step = fn_interval_usec(eval_interval);
	int64 since, k;

	if (step <= 0 || TIMESTAMP_NOT_FINITE(now))
		return now;
	since = now - unix_epoch; /* no overflow: both within PostgreSQL's range */
	k = since / step - (since % step < 0 ? 1 : 0);
	return unix_epoch + k * step;
}

SPIPlanPtr fn_spi_prepare_kept(const char *sql, int nargs, Oid *argtypes, int cursor_options) {
	SPIPlanPtr plan = SPI_prepare_cursor(sql, nargs, argtypes, cursor_options);

	if (plan == NULL)
		elog(ERROR, "flownode: preparing a refresh statement failed: %s", SPI_result_code_string(SPI_result));
	if (SPI_keepplan(plan) != 0)
		elog(ERROR, "flownode: keeping a refresh statement failed");
	return plan;
}

int64 fn_spi_run_plan(SPIPlanPtr plan, Datum *values, Snapshot snap, int expect) {
	int rc = SPI_execute_snapshot(plan, values, NULL, snap, InvalidSnapshot, false, true, 0);
	bool isnull;

	if (rc != expect)
		elog(ERROR, "flownode: refresh statement failed: %s", SPI_result_code_string(rc));
	if (rc == SPI_OK_SELECT && SPI_processed == 1)
		return DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	return (int64)SPI_processed;
}

bool fn_in_own_script(void) {
	return creating_extension && CurrentExtensionObject == get_extension_oid("flownode", true);
}

char *fn_enabled_subscription_of(Oid relid) {
	CatCList *rels;
	char *name = NULL;

	/* the subscriptions as committed now, not as this transaction last looked */
	AcceptInvalidationMessages();
	rels = SearchSysCacheList1(SUBSCRIPTIONRELMAP, ObjectIdGetDatum(relid));
	for (int i = 0; i < rels->n_members && name == NULL; i++) {
		Form_pg_subscription_rel sr = (Form_pg_subscription_rel)GETSTRUCT(&rels->members[i]->tuple);
		HeapTuple tup = SearchSysCache1(SUBSCRIPTIONOID, ObjectIdGetDatum(sr->srsubid));
		Form_pg_subscription sub;

		if (!HeapTupleIsValid(tup))
			continue; /* dropped meanwhile */
		sub = (Form_pg_subscription)GETSTRUCT(tup);
		if (sub->subenabled && sub->subdbid == MyDatabaseId)
			name = pstrdup(NameStr(sub->subname));
		ReleaseSysCache(tup);
	}
	ReleaseSysCacheList(rels);
	return name;
}
