// SQLite (libsqlite3-dev), for the search index.
#ifndef COFFER_CSQLITE_SHIM_H
#define COFFER_CSQLITE_SHIM_H

#include <sqlite3.h>

/// SQLITE_TRANSIENT is a cast macro Swift cannot import: SQLite copies the bound value.
static inline sqlite3_destructor_type coffer_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

#endif
