#include <sqlite3.h>

/// SQLITE_TRANSIENT does not import into Swift: it is a cast of -1 to a function pointer.
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

/// sqlite3_db_config is variadic: SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE through a fixed signature.
static inline int csqlite_set_no_checkpoint_on_close(sqlite3 *db, int on) {
    return sqlite3_db_config(db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, on, (int *)0);
}
