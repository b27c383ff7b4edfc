/*
 * flow_worker.h: the entry point of a flow's background worker (registered by
 * launcher.c; PostgreSQL looks it up by name in the library).
 */
#ifndef FLOWNODE_FLOW_WORKER_H
#define FLOWNODE_FLOW_WORKER_H

#include "postgres.h"

PGDLLEXPORT void flownode_flow_main(Datum arg);

#endif
