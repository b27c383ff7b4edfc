/*
 * ts_bucket_ng.h: timescaledb_experimental.time_bucket_ng read as the
 * flownode.time_bucket call that computes its buckets (ts_bucket_ng.c).
 */
#ifndef FLOWNODE_TS_BUCKET_NG_H
#define FLOWNODE_TS_BUCKET_NG_H

#include "postgres.h"

#include "nodes/parsenodes.h"

/* Rewrites the raw call in place: flownode.time_bucket with time_bucket_ng's origin
 * (its default written out, or the offset that gives it) and time zone. ERROR for
 * what cannot be known here (a width that is not a literal, a literal third argument
 * that is an origin or a time zone depending on the column's type), naming what to
 * write. */
extern void fn_ts_time_bucket_ng_call(FuncCall *fc);

#endif
