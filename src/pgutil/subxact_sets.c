/*
 * subxact_sets.c: a subtransaction's sets ended with it (subxact_sets.h).
 */
#include "flownode.h"

#include "pgutil/subxact_sets.h"

/* The parent's set of the child's key, or NULL. */
static SubxactSet *parent_set(List *sets, const SubxactSetKind *kind, const SubxactSet *child,
                              SubTransactionId parentSubid) {
	ListCell *lc;

	if (kind->same_key == NULL)
		return NULL;
	foreach (lc, sets) {
		SubxactSet *p = lfirst(lc);

		if (p->subid == parentSubid && kind->same_key(p, child))
			return p;
	}
	return NULL;
}

bool fn_subxact_sets_end(List **sets, const SubxactSetKind *kind, SubXactEvent event,
                         SubTransactionId mySubid, SubTransactionId parentSubid) {
	bool freed = false;
	ListCell *lc;

	if (event != SUBXACT_EVENT_ABORT_SUB && event != SUBXACT_EVENT_COMMIT_SUB)
		return false;
	foreach (lc, *sets) {
		SubxactSet *s = lfirst(lc);
		SubxactSet *parent;

		if (s->subid != mySubid)
			continue;
		if (event == SUBXACT_EVENT_COMMIT_SUB) {
			parent = parent_set(*sets, kind, s, parentSubid);
			if (parent == NULL || !kind->merge(s, parent)) {
				s->subid = parentSubid;
				continue;
			}
		}
		*sets = foreach_delete_current(*sets, lc);
		kind->free(s);
		freed = true;
	}
	return freed;
}
