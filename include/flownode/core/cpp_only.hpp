// Included first by every file of the pure C++ core: the core must compile and be
// unit-tested without a server, so it may not see a PostgreSQL header (whose
// longjmp-based errors would silently skip C++ destructors).
#pragma once
// The boundary file (core_bridge.cpp) may use both: it defines FLOWNODE_PG_BOUNDARY.
#if defined(POSTGRES_H) && !defined(FLOWNODE_PG_BOUNDARY)
#error "flownode's pure C++ core must not include PostgreSQL headers"
#endif
