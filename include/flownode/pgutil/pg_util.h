/*
 * pg_util.h: small helpers over PostgreSQL that every layer uses: SPI under another
 * role, qualified names, required arguments, interval lengths.
 */
#ifndef FLOWNODE_PG_UTIL_H
#define FLOWNODE_PG_UTIL_H

#include "postgres.h"

#include "access/attnum.h"
#include "datatype/timestamp.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "utils/snapshot.h"

/* SPI as another role (the catalog's owner, or a flow's owner). An ERROR in between
 * needs no cleanup: the (sub)transaction abort restores the user and SPI. */
typedef struct SpiAs {
	Oid save_userid;
	int save_sec;
} SpiAs;

extern void fn_spi_begin_as(SpiAs *scope, Oid role, int sec_flags);
extern void fn_spi_end(SpiAs *scope);
/* A statement prepared and kept for the session (SPI_keepplan); ERROR on failure. */
extern SPIPlanPtr fn_spi_prepare_kept(const char *sql, int nargs, Oid *argtypes, int cursor_options);
/* Runs a plan in the given snapshot (its command id advanced, so it sees the
 * statements before it); ERROR unless the result is `expect`. Returns the first
 * column of its one row (a SELECT of one row), or the number of rows processed. */
extern int64 fn_spi_run_plan(SPIPlanPtr plan, Datum *values, Snapshot snap, int expect);

/* "schema"."table", quoted as needed; ERROR if the relation is gone. */
extern char *fn_qualified_relname(Oid relid);
/* A required text argument: NULL or empty is an error naming the argument. */
extern char *fn_text_arg(FunctionCallInfo fcinfo, int argno, const char *argname);
/* Whether a btree index of the relation leads with the column (a partitioned
 * table's partitioned index counts). */
extern bool fn_btree_index_leads_with(Oid relid, AttrNumber attnum);
/* Inside CREATE or ALTER EXTENSION flownode's script: its catalog is half-built, and
 * flownode's hooks leave the script's statements alone. */
extern bool fn_in_own_script(void);
/* The name of an enabled subscription of this database that writes the table, or
 * NULL: one that lists it in pg_subscription_rel, in any state (its tablesync worker
 * copies into it, its apply worker applies to it). Neither writes through the
 * executor's hooks. */
extern char *fn_enabled_subscription_of(Oid relid);
/* An interval's length in microseconds (a month counts 30 days). */
extern int64 fn_interval_usec(const Interval *iv);
/* The scheduled time of the evaluation running at `now`: the last multiple of the
 * eval_interval since the Unix epoch (GreptimeDB's schedule) not after `now`. */
extern TimestampTz fn_scheduled_time(TimestampTz now, const Interval *eval_interval);

#endif
