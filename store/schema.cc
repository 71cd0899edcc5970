#include "store/schema.h"

#include <string>
#include <vector>

namespace loopwarden::store {
namespace {

struct Migration {
  int version;
  const char* sql;
};

// Times are Unix microseconds; money is integer micro-USD.
const std::vector<Migration>& Migrations() {
  static const std::vector<Migration> kMigrations = {
      {1, R"sql(
CREATE TABLE resources (
  key           TEXT PRIMARY KEY,
  provider      TEXT NOT NULL,
  account       TEXT NOT NULL,
  kind          TEXT NOT NULL,
  native_id     TEXT NOT NULL,
  name          TEXT NOT NULL DEFAULT '',
  owner         TEXT NOT NULL DEFAULT '',
  base_model    TEXT NOT NULL DEFAULT '',
  lifecycle     TEXT NOT NULL,
  native_status TEXT NOT NULL DEFAULT '',
  created_at    INTEGER,
  first_seen    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  deleted_at    INTEGER,
  fingerprint   TEXT NOT NULL,
  data          TEXT NOT NULL
) STRICT;
CREATE INDEX resources_by_provider ON resources(provider, kind, lifecycle);

CREATE TABLE transitions (
  id             INTEGER PRIMARY KEY,
  resource       TEXT NOT NULL REFERENCES resources(key) ON DELETE CASCADE,
  at             INTEGER NOT NULL,
  from_lifecycle TEXT,
  to_lifecycle   TEXT NOT NULL,
  from_status    TEXT,
  to_status      TEXT NOT NULL
) STRICT;
CREATE INDEX transitions_by_time ON transitions(at);
CREATE INDEX transitions_by_resource ON transitions(resource);

CREATE TABLE activity (
  resource        TEXT PRIMARY KEY REFERENCES resources(key) ON DELETE CASCADE,
  known           INTEGER NOT NULL,
  traffic_known   INTEGER NOT NULL,
  fingerprint     TEXT NOT NULL DEFAULT '',
  last_active_at  INTEGER,
  last_traffic_at INTEGER,
  updated_at      INTEGER NOT NULL,
  detail          TEXT NOT NULL DEFAULT ''
) STRICT;

CREATE TABLE ledger (
  id            INTEGER PRIMARY KEY,
  resource      TEXT NOT NULL REFERENCES resources(key) ON DELETE CASCADE,
  meter         TEXT NOT NULL,
  start_at      INTEGER NOT NULL,
  end_at        INTEGER,
  quantity_rate INTEGER NOT NULL,
  quantity      INTEGER NOT NULL,
  unit_price    INTEGER NOT NULL,
  cost          INTEGER NOT NULL,
  idle          INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX ledger_by_resource ON ledger(resource, end_at);
CREATE INDEX ledger_by_start ON ledger(start_at);

CREATE TABLE marks (
  policy      TEXT NOT NULL,
  resource    TEXT NOT NULL,
  marked_at   INTEGER NOT NULL,
  act_after   INTEGER NOT NULL,
  notified_at INTEGER,
  reason      TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (policy, resource)
) STRICT;

CREATE TABLE exemptions (
  id         INTEGER PRIMARY KEY,
  resource   TEXT NOT NULL,
  policy     TEXT NOT NULL DEFAULT '',
  until      INTEGER,
  reason     TEXT NOT NULL,
  by         TEXT NOT NULL DEFAULT '',
  created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE intents (
  id              INTEGER PRIMARY KEY,
  idempotency_key TEXT NOT NULL UNIQUE,
  resource        TEXT NOT NULL,
  policy          TEXT NOT NULL,
  action          TEXT NOT NULL,
  request         TEXT NOT NULL,
  created_at      INTEGER NOT NULL,
  state           TEXT NOT NULL,
  outcome         TEXT NOT NULL DEFAULT '',
  response        TEXT NOT NULL DEFAULT '',
  error           TEXT NOT NULL DEFAULT '',
  finished_at     INTEGER,
  dry_run         INTEGER NOT NULL DEFAULT 0
) STRICT;
)sql"},
      {2, R"sql(
CREATE TABLE notifications (
  dedupe_key TEXT PRIMARY KEY,
  notifier   TEXT NOT NULL,
  sent_at    INTEGER NOT NULL,
  status     TEXT NOT NULL
) STRICT;

CREATE TABLE counters (
  resource   TEXT NOT NULL REFERENCES resources(key) ON DELETE CASCADE,
  meter      TEXT NOT NULL,
  value      INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (resource, meter)
) STRICT;

-- Roll-ups are keyed by time first: queries select time ranges, and the key doubles as
-- the index. Daily totals are per reporting attributes, not per resource, so they stay
-- small (a row per provider, account, kind, model, owner and meter a day); each
-- resource's rolled-up spend is kept in spend_totals instead.
CREATE TABLE ledger_hourly (
  hour      INTEGER NOT NULL,
  resource  TEXT NOT NULL,
  meter     TEXT NOT NULL,
  quantity  INTEGER NOT NULL,
  cost      INTEGER NOT NULL,
  idle_cost INTEGER NOT NULL,
  PRIMARY KEY (hour, resource, meter)
) STRICT, WITHOUT ROWID;

CREATE TABLE ledger_daily (
  day       INTEGER NOT NULL,
  provider  TEXT NOT NULL,
  account   TEXT NOT NULL,
  kind      TEXT NOT NULL,
  model     TEXT NOT NULL,
  owner     TEXT NOT NULL,
  meter     TEXT NOT NULL,
  quantity  INTEGER NOT NULL,
  cost      INTEGER NOT NULL,
  idle_cost INTEGER NOT NULL,
  PRIMARY KEY (day, provider, account, kind, model, owner, meter)
) STRICT, WITHOUT ROWID;

CREATE TABLE spend_totals (
  resource  TEXT PRIMARY KEY,
  cost      INTEGER NOT NULL,
  idle_cost INTEGER NOT NULL
) STRICT;

CREATE TABLE transitions_daily (
  provider     TEXT NOT NULL,
  kind         TEXT NOT NULL,
  to_lifecycle TEXT NOT NULL,
  day          INTEGER NOT NULL,
  count        INTEGER NOT NULL,
  PRIMARY KEY (provider, kind, to_lifecycle, day)
) STRICT;
)sql"},
      {3, R"sql(
ALTER TABLE intents ADD COLUMN burn_per_hour INTEGER NOT NULL DEFAULT 0;
ALTER TABLE intents ADD COLUMN savings_cap_us INTEGER;
ALTER TABLE marks ADD COLUMN action TEXT NOT NULL DEFAULT '';
CREATE INDEX intents_open ON intents(state) WHERE state = 'open';
CREATE INDEX intents_by_finish ON intents(finished_at);
CREATE TABLE meta (
  k TEXT PRIMARY KEY,
  v TEXT NOT NULL
) STRICT;
)sql"},
      {4, R"sql(
-- Where activity evidence begins when it does not reach back to the resource's creation
-- (no provider history before first sight): quiet time measured from there is a lower
-- bound.
ALTER TABLE activity ADD COLUMN observed_since INTEGER;
-- Adapters' per-resource detail caches (metrics windows, checkpoint listings), so a
-- cron-style `run --once` does not re-read every detail from the provider.
CREATE TABLE details (
  provider   TEXT NOT NULL,
  key        TEXT NOT NULL,
  fetched_at INTEGER NOT NULL,
  body       TEXT NOT NULL,
  PRIMARY KEY (provider, key)
) STRICT, WITHOUT ROWID;
)sql"},
      {5, R"sql(
-- Identity, names, lifecycle and creation time are columns; `data` keeps only the rest
-- (they were a fifth of the file at 100k resources). Rows that are not valid JSON are
-- left for the loader to name.
UPDATE resources SET data = json_remove(data, '$.provider_type', '$.provider', '$.account', '$.kind', '$.id',
    '$.lifecycle', '$.name', '$.owner', '$.base_model', '$.native_status', '$.created_at')
  WHERE json_valid(data);
-- Tables keyed by the resource key keep their rows in the key's b-tree (WITHOUT ROWID)
-- instead of a rowid table plus an index holding every key a second time.
CREATE TABLE counters_v5 (
  resource   TEXT NOT NULL REFERENCES resources(key) ON DELETE CASCADE,
  meter      TEXT NOT NULL,
  value      INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (resource, meter)
) STRICT, WITHOUT ROWID;
INSERT INTO counters_v5 SELECT resource, meter, value, updated_at FROM counters;
DROP TABLE counters;
ALTER TABLE counters_v5 RENAME TO counters;
CREATE TABLE activity_v5 (
  resource        TEXT PRIMARY KEY REFERENCES resources(key) ON DELETE CASCADE,
  known           INTEGER NOT NULL,
  traffic_known   INTEGER NOT NULL,
  fingerprint     TEXT NOT NULL DEFAULT '',
  last_active_at  INTEGER,
  last_traffic_at INTEGER,
  updated_at      INTEGER NOT NULL,
  detail          TEXT NOT NULL DEFAULT '',
  observed_since  INTEGER
) STRICT, WITHOUT ROWID;
INSERT INTO activity_v5 SELECT resource, known, traffic_known, fingerprint, last_active_at, last_traffic_at,
    updated_at, detail, observed_since FROM activity;
DROP TABLE activity;
ALTER TABLE activity_v5 RENAME TO activity;
)sql"},
      {6, R"sql(
-- Tables about a resource refer to it by an integer id instead of its key (about 40
-- bytes, repeated in every row and every index of ledger, transitions, counters and
-- activity: a sixth of the file at 100k resources). The old rowid becomes the id.
-- resources_by_provider is dropped: every query by provider reads memory, not it.
CREATE TABLE resources_v6 (
  id            INTEGER PRIMARY KEY,
  key           TEXT NOT NULL UNIQUE,
  provider      TEXT NOT NULL,
  account       TEXT NOT NULL,
  kind          TEXT NOT NULL,
  native_id     TEXT NOT NULL,
  name          TEXT NOT NULL DEFAULT '',
  owner         TEXT NOT NULL DEFAULT '',
  base_model    TEXT NOT NULL DEFAULT '',
  lifecycle     TEXT NOT NULL,
  native_status TEXT NOT NULL DEFAULT '',
  created_at    INTEGER,
  first_seen    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  deleted_at    INTEGER,
  fingerprint   TEXT NOT NULL,
  data          TEXT NOT NULL
) STRICT;
INSERT INTO resources_v6 (id, key, provider, account, kind, native_id, name, owner, base_model, lifecycle,
    native_status, created_at, first_seen, updated_at, deleted_at, fingerprint, data)
  SELECT rowid, key, provider, account, kind, native_id, name, owner, base_model, lifecycle, native_status,
    created_at, first_seen, updated_at, deleted_at, fingerprint, data FROM resources;
CREATE TABLE transitions_v6 (
  id             INTEGER PRIMARY KEY,
  rid            INTEGER NOT NULL REFERENCES resources_v6(id) ON DELETE CASCADE,
  at             INTEGER NOT NULL,
  from_lifecycle TEXT,
  to_lifecycle   TEXT NOT NULL,
  from_status    TEXT,
  to_status      TEXT NOT NULL
) STRICT;
INSERT INTO transitions_v6 SELECT t.id, r.id, t.at, t.from_lifecycle, t.to_lifecycle, t.from_status, t.to_status
  FROM transitions t JOIN resources_v6 r ON r.key = t.resource;
CREATE TABLE activity_v6 (
  rid             INTEGER PRIMARY KEY REFERENCES resources_v6(id) ON DELETE CASCADE,
  known           INTEGER NOT NULL,
  traffic_known   INTEGER NOT NULL,
  fingerprint     TEXT NOT NULL DEFAULT '',
  last_active_at  INTEGER,
  last_traffic_at INTEGER,
  updated_at      INTEGER NOT NULL,
  detail          TEXT NOT NULL DEFAULT '',
  observed_since  INTEGER
) STRICT;
INSERT INTO activity_v6 SELECT r.id, a.known, a.traffic_known, a.fingerprint, a.last_active_at, a.last_traffic_at,
    a.updated_at, a.detail, a.observed_since FROM activity a JOIN resources_v6 r ON r.key = a.resource;
CREATE TABLE ledger_v6 (
  id            INTEGER PRIMARY KEY,
  rid           INTEGER NOT NULL REFERENCES resources_v6(id) ON DELETE CASCADE,
  meter         TEXT NOT NULL,
  start_at      INTEGER NOT NULL,
  end_at        INTEGER,
  quantity_rate INTEGER NOT NULL,
  quantity      INTEGER NOT NULL,
  unit_price    INTEGER NOT NULL,
  cost          INTEGER NOT NULL,
  idle          INTEGER NOT NULL DEFAULT 0
) STRICT;
INSERT INTO ledger_v6 SELECT l.id, r.id, l.meter, l.start_at, l.end_at, l.quantity_rate, l.quantity, l.unit_price,
    l.cost, l.idle FROM ledger l JOIN resources_v6 r ON r.key = l.resource;
CREATE TABLE counters_v6 (
  rid        INTEGER NOT NULL REFERENCES resources_v6(id) ON DELETE CASCADE,
  meter      TEXT NOT NULL,
  value      INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (rid, meter)
) STRICT, WITHOUT ROWID;
INSERT INTO counters_v6 SELECT r.id, c.meter, c.value, c.updated_at FROM counters c
  JOIN resources_v6 r ON r.key = c.resource;
DROP TABLE transitions;
DROP TABLE activity;
DROP TABLE ledger;
DROP TABLE counters;
DROP TABLE resources;
-- Renaming a table rewrites the REFERENCES clauses that name it.
ALTER TABLE resources_v6 RENAME TO resources;
ALTER TABLE transitions_v6 RENAME TO transitions;
ALTER TABLE activity_v6 RENAME TO activity;
ALTER TABLE ledger_v6 RENAME TO ledger;
ALTER TABLE counters_v6 RENAME TO counters;
CREATE INDEX transitions_by_time ON transitions(at);
CREATE INDEX transitions_by_resource ON transitions(rid);
CREATE INDEX ledger_by_resource ON ledger(rid, end_at);
CREATE INDEX ledger_by_start ON ledger(start_at);
)sql"},
      {7, R"sql(
-- What a provider billed a resource on a UTC day, beside what the ledger held when the
-- day was first compared: the record of reconciliation and of drift. The ledger itself
-- carries the corrections, as rows of meter 'billed'.
CREATE TABLE usage_days (
  rid        INTEGER NOT NULL REFERENCES resources(id) ON DELETE CASCADE,
  day        INTEGER NOT NULL,
  billed     INTEGER NOT NULL,
  ledger     INTEGER NOT NULL,
  watched    INTEGER NOT NULL,
  checked_at INTEGER NOT NULL,
  PRIMARY KEY (rid, day)
) STRICT, WITHOUT ROWID;
CREATE INDEX usage_days_by_day ON usage_days(day);
)sql"},
      {8, R"sql(
-- The leader lease token an intent was written under (replicas on PostgreSQL; NULL on
-- a single SQLite writer): which leader meant to act, for the audit trail.
ALTER TABLE intents ADD COLUMN fence INTEGER;
)sql"},
      {9, R"sql(
-- ledger_by_start served one query, the rows that overlap a window (start_at before its
-- end), and for it selected nearly every row: a scan of the table reads them in order
-- instead. Written at random (by start time), it was also where the first poll of a
-- large fleet outgrew SQLite's page cache: without it, that poll at 100k resources
-- made 53,000 writes (pwrite) instead of 108,000, and 48,000 reads instead of 92,000.
DROP INDEX IF EXISTS ledger_by_start;
)sql"},
  };
  return kMigrations;
}

}  // namespace

Status Migrate(Db& db, int target) {
  LW_ASSIGN_OR_RETURN(int64_t current, db.QueryInt("PRAGMA user_version"));
  bool migrated = false;
  for (const Migration& m : Migrations()) {
    if (m.version <= current || m.version > target) continue;
    LW_RETURN_IF_ERROR(InTransaction(db, [&]() -> Status {
      LW_RETURN_IF_ERROR(db.Exec(m.sql));
      return db.Exec("PRAGMA user_version = " + std::to_string(m.version));
    }).WithContext("migrating the schema to version " + std::to_string(m.version)));
    migrated = current > 0;
  }
  // A migration that rebuilt tables left the old pages free in the file (the store
  // creates it auto_vacuum=INCREMENTAL): give them back now, not at the next retention
  // pass. Not fatal: free pages are reused by later writes either way.
  if (migrated) (void)db.Exec("PRAGMA incremental_vacuum");
  return Status::Ok();
}

}  // namespace loopwarden::store
