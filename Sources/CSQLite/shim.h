#include <sqlite3.h>

/// SQLITE_TRANSIENT does not import into Swift: it is a cast of -1 to a function pointer.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }
