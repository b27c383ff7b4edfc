/*
 * time_bucket.h: flownode.time_bucket, TimescaleDB's bucketing function, over
 * PostgreSQL's own date functions (time_bucket.c). The window calendar of a flow
 * grouped by time_bucket (core_bridge.cpp) evaluates the same function.
 */
#ifndef FLOWNODE_TIME_BUCKET_H
#define FLOWNODE_TIME_BUCKET_H

#include "postgres.h"

#include "datatype/timestamp.h"

/* TimescaleDB's default origin: Monday 2000-01-03 (month widths count from its
 * month, 2000-01). */
#define FN_TIME_BUCKET_ORIGIN ((Timestamp)(2 * USECS_PER_DAY))

/*
 * The bucket of a timestamp (or of a timestamptz taken in UTC): widths without
 * months are `origin + k * width`, month widths the first of every width-th month
 * counted from the origin's month (its day and time ignored). An infinite ts is
 * returned as it is. ERROR for a width that is not positive or mixes months with
 * days or time.
 */
extern Timestamp fn_time_bucket_timestamp(const Interval *width, Timestamp ts, Timestamp origin);

/* The same after moving ts back by `offset` (and the bucket forward by it). */
extern Timestamp fn_time_bucket_offset(const Interval *width, Timestamp ts, Timestamp origin,
                                       const Interval *offset);

#endif
