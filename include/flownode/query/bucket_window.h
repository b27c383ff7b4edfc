/*
 * bucket_window.h: a flow's window written with flownode.time_bucket, or with
 * date_bin in a time zone (date_bin(w, ts AT TIME ZONE z, o) AT TIME ZONE z), read
 * into the FnWindowSpec its windows are computed from (bucket_window.c).
 */
#ifndef FLOWNODE_BUCKET_WINDOW_H
#define FLOWNODE_BUCKET_WINDOW_H

#include "postgres.h"

#include "nodes/primnodes.h"

#include "bridge/core_bridge.h"

/* Whether fe is time_bucket over a time (not over integers) or a zoned date_bin. */
extern bool fn_is_bucket_window(FuncExpr *fe);

/* The time argument: the column side (a date column as its cast to timestamp, as
 * time_bucket buckets a date). */
extern Node *fn_bucket_window_time_arg(FuncExpr *fe);

/* Fills spec's kind, width, origin, offset and zone (with_time_zone is the caller's):
 * a date_bin window where time_bucket is one (a fixed width without a zone), else
 * FN_WINDOW_TIME_BUCKET. ERROR, saying what to write, for a form that is no window. */
extern void fn_bucket_window_read(FuncExpr *fe, FnWindowSpec *spec);

#endif
