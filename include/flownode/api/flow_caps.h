/*
 * flow_caps.h: who may take the server's resources by creating flows
 * (docs/operations.md, "Privileges and caps"). The right to create flows is EXECUTE on
 * flownode.create_flow, which flownode.execute's CREATE FLOW asks for too; how many
 * flows a database, and a role in it, may hold is capped by
 * flownode.max_flows_per_database and flownode.max_flows_per_role.
 */
#ifndef FLOWNODE_FLOW_CAPS_H
#define FLOWNODE_FLOW_CAPS_H

#include "postgres.h"

/* ERROR unless the current user may execute flownode.create_flow: the entry points
 * that create flows without calling it (flownode.execute's CREATE FLOW) ask for the
 * same right. */
extern void fn_check_create_privilege(void);

/*
 * ERROR if one more flow owned by `owner` would go over a cap that applies to this
 * session. Takes, to the end of the transaction, a lock per cap that applies (the
 * database's, the owner's in this database), so that two transactions creating flows
 * count one after the other and cannot both pass a cap: the second counts once the
 * first has committed or aborted.
 */
extern void fn_check_flow_caps(Oid owner);

#endif
