#pragma once
// The database schema, versioned with PRAGMA user_version and migrated forward one
// step at a time. A database from a newer loopwarden is refused before anything is
// written to it.

#include "core/status.h"
#include "store/sqlite.h"

namespace loopwarden::store {

inline constexpr int kSchemaVersion = 9;

// Applies every migration after the database's version up to `target` (tests migrate
// to earlier versions to build old databases). Each step runs in its own transaction
// and sets user_version, so a crash between steps resumes where it stopped.
Status Migrate(Db& db, int target = kSchemaVersion);

}  // namespace loopwarden::store
