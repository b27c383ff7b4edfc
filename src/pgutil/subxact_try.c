/*
 * subxact_try.c: the one copy of PostgreSQL's internal-subtransaction pattern
 * (BeginInternalSubTransaction, PG_TRY, then release or roll back), for the callers
 * that try something which may fail without failing themselves: binding a restored
 * flow, analysing a query that may no longer analyse, starting a waiting flow.
 */
#include "flownode.h"

#include "pgutil/subxact_try.h"

#include "access/xact.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

ErrorData *fn_try_in_subxact(FnSubxactWork work, void *arg) {
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	ErrorData *volatile edata = NULL;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		if (work(arg))
			ReleaseCurrentSubTransaction();
		else
			RollbackAndReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
	return edata;
}
