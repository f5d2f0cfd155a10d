// The fuzz targets' own view of SQLite (Graft's CSQLite is not a product): only for the sqlite-values
// target, which edits a copy of a real store before Graft reads it.
#include <sqlite3.h>

/// SQLITE_TRANSIENT does not import into Swift: it is a cast of -1 to a function pointer.
static inline sqlite3_destructor_type csqlitefuzz_transient(void) { return SQLITE_TRANSIENT; }
