/*
 * pg_compat.h: every difference between the PostgreSQL versions flownode builds
 * against (15, 17 and 18; 16 is covered by the same guards) behind one name each,
 * so that no other file tests PG_VERSION_NUM (docs/internals.md §8). Each item is
 * named after what flownode does with it and expands to the call of the version
 * being built; the guard is the release that changed it. Included by flownode.h
 * (so every C file of the extension sees it) and by the bridge (C++).
 */
#ifndef FLOWNODE_PG_COMPAT_H
#define FLOWNODE_PG_COMPAT_H

#include "postgres.h"

#include "nodes/parsenodes.h"
#include "parser/parsetree.h"
#include "utils/datetime.h"
#if PG_VERSION_NUM >= 160000
#include "parser/parse_relation.h"
#endif
#if PG_VERSION_NUM >= 180000
#include "optimizer/optimizer.h"
#endif

#if PG_VERSION_NUM < 150000 || PG_VERSION_NUM >= 190000
#error "flownode builds against PostgreSQL 15 to 18"
#endif

/* ---- c.h ---- */

/* 18 replaced the attribute after a declaration, pg_attribute_noreturn(), by a
 * specifier before it, pg_noreturn (C11's _Noreturn). Write the new form:
 *   pg_noreturn static void f(void);
 * Before 18 it is GCC's attribute, which may also lead a declaration. */
#ifndef pg_noreturn
#define pg_noreturn pg_attribute_noreturn()
#endif

/* ---- storage/proc.h ---- */

/* The local transaction id of this backend's top-level transaction: 17 moved it
 * into PGPROC.vxid. */
#if PG_VERSION_NUM >= 170000
#define fn_my_lxid() (MyProc->vxid.lxid)
#else
#define fn_my_lxid() (MyProc->lxid)
#endif

/* This backend's index in ProcGlobal->allProcs: 17 dropped PGPROC.pgprocno for
 * GetNumberFromPGProc. */
#if PG_VERSION_NUM >= 170000
#define fn_my_procno() ((int)GetNumberFromPGProc(MyProc))
#else
#define fn_my_procno() (MyProc->pgprocno)
#endif

/* ---- storage/lock.h ---- */

/* Whether this backend holds the lock in exactly that mode: 17 added `orstronger`. */
#if PG_VERSION_NUM >= 170000
#define fn_lock_held_by_me(tag, mode) LockHeldByMe((tag), (mode), false)
#else
#define fn_lock_held_by_me(tag, mode) LockHeldByMe((tag), (mode))
#endif

/* ---- utils/acl.h ---- */

/* A role's privilege on a function: 16 folded pg_proc_aclcheck into object_aclcheck
 * (the caller includes utils/acl.h and catalog/pg_proc.h). */
#if PG_VERSION_NUM >= 160000
#define fn_proc_aclcheck(proc, role, mode) object_aclcheck(ProcedureRelationId, (proc), (role), (mode))
#else
#define fn_proc_aclcheck(proc, role, mode) pg_proc_aclcheck((proc), (role), (mode))
#endif

/* ---- functions that gained a soft-error context (16) ---- */

/* utils/regproc.h: a qualified name's list of String nodes; errors are thrown */
#if PG_VERSION_NUM >= 160000
#define fn_string_to_qualified_name_list(string) stringToQualifiedNameList((string), NULL)
#else
#define fn_string_to_qualified_name_list(string) stringToQualifiedNameList(string)
#endif

/* utils/rangetypes.h: a range from its bounds; errors are thrown */
#if PG_VERSION_NUM >= 160000
#define fn_range_serialize(typcache, lower, upper, empty)                                                    \
	range_serialize((typcache), (lower), (upper), (empty), NULL)
#else
#define fn_range_serialize(typcache, lower, upper, empty)                                                    \
	range_serialize((typcache), (lower), (upper), (empty))
#endif

/* ---- optimizer/optimizer.h ---- */

/* A join's alias Vars replaced by what they stand for, outside the planner: 16 added
 * the planner's root first (NULL from the parser's side, as parse_agg.c passes). */
#if PG_VERSION_NUM >= 160000
#define fn_flatten_join_alias_vars(query, node) flatten_join_alias_vars(NULL, (query), (node))
#else
#define fn_flatten_join_alias_vars(query, node) flatten_join_alias_vars((query), (node))
#endif

/* ---- the grouping step's range table entry (18) ---- */

/* 18's parse analysis adds an RTE_GROUP to the range table and replaces the
 * grouped expressions in the target list and HAVING by Vars of it (the planner
 * puts them back first thing). flownode reads a flow query's outputs as they are
 * written (its window, its keys, its aggregates): this puts them back right after
 * analysis, as the planner does; the entry itself stays, unused. */
#if PG_VERSION_NUM >= 180000
static inline void fn_flatten_group_exprs(Query *query) {
	if (!query->hasGroupRTE)
		return;
	query->targetList = (List *)flatten_group_exprs(NULL, query, (Node *)query->targetList);
	query->havingQual = flatten_group_exprs(NULL, query, query->havingQual);
}
#else
#define fn_flatten_group_exprs(query) ((void)(query))
#endif

/* ---- commands/trigger.h ---- */

/* ALTER TABLE ... ENABLE [ALWAYS|REPLICA] TRIGGER of one table's trigger: 16 added
 * the parent trigger and recursion into partitions (none here: flownode keeps each
 * partition's triggers itself). */
#if PG_VERSION_NUM >= 160000
#define fn_enable_disable_trigger(rel, tgname, fires_when, skip_system, lockmode)                            \
	EnableDisableTrigger((rel), (tgname), InvalidOid, (fires_when), (skip_system), false, (lockmode))
#else
#define fn_enable_disable_trigger(rel, tgname, fires_when, skip_system, lockmode)                            \
	EnableDisableTrigger((rel), (tgname), (fires_when), (skip_system), (lockmode))
#endif

/* ---- parser/gram.h ---- */

/* The core scanner's token codes (core_yylex). 16 stopped installing gram.h; the
 * codes are part of the scanner's interface all the same (parser/scanner.h: these
 * tokens are declared first by every grammar built on the scanner, IDENT = 258 and
 * so on, as plpgsql's grammar does), so they are spelled out here in that order, for
 * every version alike (gram.h would also bring every keyword's token into every
 * file). */
enum FnCoreScannerToken {
	IDENT = 258,
	UIDENT,
	FCONST,
	SCONST,
	USCONST,
	BCONST,
	XCONST,
	Op,
	ICONST,
	PARAM,
	TYPECAST,
	DOT_DOT,
	COLON_EQUALS,
	EQUALS_GREATER,
	LESS_EQUALS,
	GREATER_EQUALS,
	NOT_EQUALS,
};

/* ---- utils/relcache.h ---- */

/* The relation's primary key index (InvalidOid: none), deferrable or not as before
 * 18, which added the choice. */
#if PG_VERSION_NUM >= 180000
#define fn_rel_primary_key_index(rel) RelationGetPrimaryKeyIndex((rel), true)
#else
#define fn_rel_primary_key_index(rel) RelationGetPrimaryKeyIndex(rel)
#endif

/* ---- utils/acl.h ---- */

/* Whether the role owns the relation: 16 folded pg_class_ownercheck and its kin
 * into object_ownercheck. The caller includes utils/acl.h (and, from 16,
 * catalog/pg_class.h). */
#if PG_VERSION_NUM >= 160000
#define fn_rel_ownercheck(relid, roleid) object_ownercheck(RelationRelationId, (relid), (roleid))
#else
#define fn_rel_ownercheck(relid, roleid) pg_class_ownercheck((relid), (roleid))
#endif

/* ---- a range table entry's permissions ----
 * 16 moved them (requiredPerms, checkAsUser, selectedCols, insertedCols,
 * updatedCols) from RangeTblEntry into an RTEPermissionInfo in the query's
 * rteperminfos, which the entry names by perminfoindex (0: none). These take the
 * query that holds the entry. */

/* The columns the query reads of the entry's relation (offset by
 * FirstLowInvalidHeapAttributeNumber; 0 there is the whole row); NULL when none are
 * checked. */
static inline Bitmapset *fn_rte_selected_cols(const Query *query, const RangeTblEntry *rte) {
#if PG_VERSION_NUM >= 160000
	return rte->perminfoindex == 0
	           ? NULL
	           : getRTEPermissionInfo(query->rteperminfos, (RangeTblEntry *)rte)->selectedCols;
#else
	(void)query;
	return rte->selectedCols;
#endif
}

/* The role the entry's permissions are checked as (InvalidOid: the current user). */
static inline Oid fn_rte_check_as_user(const Query *query, const RangeTblEntry *rte) {
#if PG_VERSION_NUM >= 160000
	return rte->perminfoindex == 0
	           ? InvalidOid
	           : getRTEPermissionInfo(query->rteperminfos, (RangeTblEntry *)rte)->checkAsUser;
#else
	(void)query;
	return rte->checkAsUser;
#endif
}

/* The entry checks no permission any more (it is turned into a subquery that checks
 * its own). From 16 its RTEPermissionInfo leaves the query's list, and the entries
 * after it are renumbered, so that every one left is still named by one entry. */
static inline void fn_rte_clear_permissions(Query *query, RangeTblEntry *rte) {
#if PG_VERSION_NUM >= 160000
	Index gone = rte->perminfoindex;
	ListCell *lc;

	if (gone == 0)
		return;
	query->rteperminfos = list_delete_nth_cell(query->rteperminfos, (int)gone - 1);
	rte->perminfoindex = 0;
	foreach (lc, query->rtable) {
		RangeTblEntry *other = lfirst_node(RangeTblEntry, lc);

		if (other->perminfoindex > gone)
			other->perminfoindex--;
	}
#else
	(void)query;
	rte->requiredPerms = 0;
	rte->checkAsUser = InvalidOid;
	rte->selectedCols = rte->insertedCols = rte->updatedCols = rte->extraUpdatedCols = NULL;
#endif
}

/* Whether the current user has the permissions the query's entry needs, as
 * executing the query would check them (ExecCheckRTPerms before 16,
 * ExecCheckPermissions from 16), without an error. The caller includes
 * executor/executor.h. */
#if PG_VERSION_NUM >= 160000
#define fn_rte_permitted(query, rte)                                                                         \
	((rte)->perminfoindex == 0 ||                                                                            \
	 ExecCheckPermissions(list_make1(fn_rte_alone(rte)),                                                     \
	                      list_make1(getRTEPermissionInfo((query)->rteperminfos, (rte))), false))
/* A copy of the entry as the only one of a range table, with the only permissions. */
static inline RangeTblEntry *fn_rte_alone(const RangeTblEntry *rte) {
	RangeTblEntry *one = (RangeTblEntry *)palloc(sizeof(RangeTblEntry));

	memcpy(one, rte, sizeof(RangeTblEntry));
	one->perminfoindex = 1;
	return one;
}
#else
#define fn_rte_permitted(query, rte) ((void)(query), ExecCheckRTPerms(list_make1(rte), false))
#endif

/* ---- utils/datetime.h ---- */

/* The kind of a time zone abbreviation (TZ or DTZ with its offset, DYNTZ with its
 * zone; anything else: not an abbreviation): 16 returns an error code, and the kind
 * through an argument. */
static inline int fn_decode_timezone_abbrev(char *lowtoken, int *offset, pg_tz **tz) {
#if PG_VERSION_NUM >= 160000
	int type = UNKNOWN_FIELD;
	DateTimeErrorExtra extra;

	if (DecodeTimezoneAbbrev(0, lowtoken, &type, offset, tz, &extra) != 0)
		return UNKNOWN_FIELD;
	return type;
#else
	return DecodeTimezoneAbbrev(0, lowtoken, offset, tz);
#endif
}

/* ---- replication/walreceiver.h ---- */

/* A connection to a subscription's publisher, as its apply worker makes it (the
 * caller includes replication/walreceiver.h): 16 added whether it must use a password
 * (a subscription owned by a non-superuser that requires one), 17 whether it is a
 * replication connection. */
#if PG_VERSION_NUM >= 170000
#define fn_walrcv_connect_sub(sub, appname, err)                                                             \
	walrcv_connect((sub)->conninfo, true, true, (sub)->passwordrequired && !superuser_arg((sub)->owner),     \
	               appname, err)
#elif PG_VERSION_NUM >= 160000
#define fn_walrcv_connect_sub(sub, appname, err)                                                             \
	walrcv_connect((sub)->conninfo, true, (sub)->passwordrequired && !superuser_arg((sub)->owner), appname,  \
	               err)
#else
#define fn_walrcv_connect_sub(sub, appname, err) walrcv_connect((sub)->conninfo, true, appname, err)
#endif

#endif /* FLOWNODE_PG_COMPAT_H */
