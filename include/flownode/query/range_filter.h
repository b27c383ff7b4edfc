/*
 * range_filter.h: flownode.in_ranges(t, lo[], hi[]), the filter of a refresh that
 * reads a source without an index on its time column (FN_FILTER_CONTAINS): whether t
 * lies in one of the ranges [lo[i], hi[i]).
 */
#ifndef FLOWNODE_RANGE_FILTER_H
#define FLOWNODE_RANGE_FILTER_H

/* The function's name as the rewritten statements call it (schema-qualified: the
 * statements run under the owner's search_path). */
#define FN_IN_RANGES_FUNCTION "flownode.in_ranges"

#endif
