/*
 * launcher.h: starting flow workers: at commit of create_flow, from flush_flow, and
 * from the launcher after a server start or when a worker went away.
 */
#ifndef FLOWNODE_LAUNCHER_H
#define FLOWNODE_LAUNCHER_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "shmem/flow_slots.h"

/* Registers the static launcher (from _PG_init, when preloaded). */
extern void fn_register_launcher(void);
/* Asks the pool for a worker for the flow. Cannot fail (it runs at COMMIT): when
 * none can serve it, the flow waits for one (waiting_for_worker) and the launcher
 * retries. */
extern bool fn_start_flow_worker(Oid dboid, Oid catalog_relid, int64 flow_id);
/* One more pool worker for the database, while it has fewer than `wanted`. */
extern bool fn_pool_grow(Oid dboid, int wanted);
/* A WARNING when flownode.max_workers leaves PostgreSQL's own workers no room. */
extern void fn_check_worker_settings(void);
/* DROP DATABASE: stops that database's flow workers and holds their restart. */
extern void fn_before_drop_database(const char *dbname);
/* After DROP DATABASE succeeded: the slots of its flows freed. */
extern void fn_after_drop_database(Oid dboid);

/* The launcher asks for this database's starter again only after `usec`. */
extern void fn_hold_database(Oid dboid, int64 usec);

PGDLLEXPORT void flownode_launcher_main(Datum arg);

#endif
