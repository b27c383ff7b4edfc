/*
 * subxact_try.h: a piece of work tried in an internal subtransaction, its error
 * caught and handed back instead of aborting the caller's transaction.
 */
#ifndef FLOWNODE_SUBXACT_TRY_H
#define FLOWNODE_SUBXACT_TRY_H

#include "postgres.h"

/* The work: returns true to keep what it did (the subtransaction commits), false to
 * undo it (rolled back, as after an error, but no error is returned). */
typedef bool (*FnSubxactWork)(void *arg);

/*
 * Runs work(arg) in an internal subtransaction. Returns NULL when it returned (its
 * subtransaction committed or rolled back as it said), or its error, copied into the
 * caller's memory context, when it raised one (the subtransaction rolled back).
 * Either way the caller's memory context and resource owner are current again.
 * Whatever work writes through arg survives the error: arg is the caller's.
 */
extern ErrorData *fn_try_in_subxact(FnSubxactWork work, void *arg);

#endif
